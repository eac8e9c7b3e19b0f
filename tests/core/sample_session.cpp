#include "sample_session.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace lockscope::testing {

TempDir::TempDir()
{
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/lockscope-test-XXXXXX";
    if (!mkdtemp(tmpl.data()))
        throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
}

TempDir::~TempDir()
{
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
}

std::map<std::string, std::string> sample_meta()
{
    return {{"tool_version", "0.1.0"},
            {"host", "testhost"},
            {"kernel_release", "6.1.0-test"},
            {"kernel_version", "#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1"},
            {"config.CONFIG_MUTEX_SPIN_ON_OWNER", "y"},
            {"cpu_model", "Test CPU @ 3.0GHz"},
            {"online_cpus", "4"},
            {"workload", "pipe"},
            {"workload.threads", "4"},
            {"interval_ms", "1000"},
            {"start_time", "2024-05-01T10:00:00+00:00"},
            {"scope", "system"}};
}

IntervalBatch sample_batch(int64_t run, int64_t index, int locks)
{
    IntervalBatch b;
    IntervalTotals& t = b.totals;
    t.run = run;
    t.index = index;
    t.start_ns = 1'000'000'000ull * uint64_t(index + 1);
    t.end_ns = t.start_ns + 1'000'000'000ull;
    t.cpu_ns = 4 * 1'000'000'000ull;
    t.idle_ns = 1'500'000'000ull + uint64_t(index) * 1000;
    t.events = 10'000 + uint64_t(index);
    t.lost = index == 1 ? 3 : 0;
    t.ops = 50'000.0 + double(index);
    for (int i = 1; i <= locks; ++i) {
        const uint64_t k = uint64_t(i), n = uint64_t(index + 1);
        if (index == 0) {
            LockInfo l;
            l.id = i;
            l.name = i <= 2 ? "pipe->mutex" : "lock_" + std::to_string(i);
            l.kind = i % 3 == 0 ? "rwsem" : "mutex";
            l.mode = i % 3 == 0 ? "write" : "";
            l.caller = "caller_" + std::to_string(i % 5);
            l.address = 0xffff888000000000ull + k * 64;
            l.flags = i % 3 == 0 ? 4 : 33;
            b.new_locks.push_back(l);
        }
        LockInterval li;
        li.run = run;
        li.index = index;
        li.lock_id = i;
        LockCounters& c = li.counters;
        c.contentions = 10 * k + n;
        c.spin_attempts = 8 * k;
        c.spin_failures = 3 * k;
        c.spin_successes = 5 * k;
        c.wait_ns = 1000 * k * k * n + 7;
        c.spin_ns = 100 * k * n;
        c.sleep_ns = 300 * k * n;
        c.preempt_ns = 20 * k;
        c.sleeps = 2 * k;
        c.preemptions = k;
        c.max_wait_ns = 500 * k + n;
        c.wakeups = k;
        c.owner[0] = 2 * k;
        c.owner[2] = k;
        for (size_t h = 9; h < 17; ++h)
            c.hist[h] = k + h;
        t.counters.add(c);
        b.locks.push_back(li);
    }
    // A lock that did not change this interval: the store must skip it.
    LockInterval unchanged;
    unchanged.run = run;
    unchanged.index = index;
    unchanged.lock_id = 1;
    b.locks.insert(b.locks.begin(), unchanged);
    for (int i = 1; i <= std::min(locks, 3); ++i)
        b.stacks.push_back({run, i, i == 3 ? "waker" : "waiter",
                            {"__mutex_lock.constprop.0+0x" + std::to_string(100 + i),
                             "pipe_write+0x54", "vfs_write+0x2a1"},
                            uint64_t(index + i),
                            uint64_t(1000 * (index + i))});
    b.tasks.push_back({run, 100, 100, "worker", b.totals.counters, "/system.slice/db.service"});
    b.tasks.push_back({run, 101, 100, "worker, \"2\"", LockCounters{}});
    b.tasks.back().counters.contentions = 1;
    b.run.id = run;
    b.run.lost.depth = 1;
    b.run.lost.ring_buffer = uint64_t(index);
    b.run.unmatched_ends = 2;
    b.run.stack_samples = uint64_t(index + 1);
    b.run.ops = 50'000.0 * double(index + 1);
    return b;
}

void write_sample(const std::string& path, int runs, int intervals, int locks)
{
    auto w = SessionWriter::create(path, false);
    w.set_meta(sample_meta());
    for (int r = 0; r < runs; ++r) {
        int64_t run = w.begin_run("run " + std::to_string(r + 1), 1'000'000'000ull);
        IntervalBatch last;
        for (int i = 0; i < intervals; ++i) {
            last = sample_batch(run, i, locks);
            if (r > 0)
                last.new_locks.clear();  // ids are per session
            w.write_interval(last);
        }
        RunInfo done = last.run;
        done.end_ns = last.totals.end_ns;
        done.status = "complete";
        w.end_run(done);
    }
    w.close();
}

}  // namespace lockscope::testing
