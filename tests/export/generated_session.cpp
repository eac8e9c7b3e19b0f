#include "generated_session.h"

#include <algorithm>
#include <bit>
#include <random>
#include <vector>

#include "core/model.h"
#include "core/storage/session_store.h"

namespace lockscope::testing {
namespace {

constexpr uint64_t kSecond = 1'000'000'000;

class Random {
public:
    explicit Random(uint64_t seed) : gen_(seed) {}
    uint64_t between(uint64_t lo, uint64_t hi) { return std::uniform_int_distribution<uint64_t>(lo, hi)(gen_); }
    bool chance(double p) { return std::bernoulli_distribution(p)(gen_); }
    template <class T>
    const T& pick(const std::vector<T>& from)
    {
        return from[size_t(between(0, from.size() - 1))];
    }

private:
    std::mt19937_64 gen_;
};

size_t bucket_of(uint64_t ns)
{
    return std::min<size_t>(ns ? size_t(std::bit_width(ns) - 1) : 0, kHistBuckets - 1);
}

// The kernel's locks: two objects of one class (named after the same
// caller), an rwsem's read and write rows, a spinlock (its whole wait a
// spin phase).
std::vector<LockInfo> kernel_locks(Random& r)
{
    std::vector<LockInfo> locks = {
        {1, "pipe_inode_info.mutex", "mutex", "", "anon_pipe_read", 0xffff888000001000, 33, "slab"},
        {2, "pipe_inode_info.mutex", "mutex", "", "anon_pipe_read", 0xffff888000002000, 33, "slab"},
        {3, "inode.i_rwsem", "rwsem", "write", "do_unlinkat", 0xffff888000003000, 4, "slab"},
        {4, "inode.i_rwsem", "rwsem", "read", "path_openat", 0xffff888000003000, 2, "slab"},
        {5, "rq.__lock", "spinlock", "", "try_to_wake_up", 0xffff888000005000, 1, "percpu"},
        {6, "rtnl_mutex", "mutex", "", "rtnl_lock", 0xffffffff82000000, 33, "global"},
    };
    locks.resize(size_t(r.between(3, locks.size())));
    return locks;
}

// One interval's counters of a lock: the wait made of its four parts; the
// maximum as the recorder stores it against the run's running maximum.
LockCounters lock_counters(Random& r, const LockInfo& lock, uint64_t& running_max, bool& measured)
{
    LockCounters c;
    c.contentions = r.between(1, 3000);
    c.timed = c.contentions;
    const bool spinlock = lock.kind == "spinlock";
    const uint64_t spinning = r.between(0, 2'000'000), queued = spinlock ? 0 : r.between(0, 3'000'000);
    c.sleep_ns = spinlock || r.chance(0.3) ? 0 : r.between(0, 40'000'000);
    c.preempt_ns = r.chance(0.3) ? 0 : r.between(0, 20'000'000);
    c.spin_offcpu_ns = r.between(0, spinlock ? c.preempt_ns : std::min(c.offcpu_ns(), uint64_t(5'000'000)));
    c.spin_ns = spinning + c.spin_offcpu_ns;
    c.wait_ns = spinning + queued + c.sleep_ns + c.preempt_ns;
    // the holder split: a spinlock records no owner (all unknown)
    if (!spinlock) {
        c.holder_running_ns = r.between(0, c.wait_ns);
        c.holder_runnable_ns = r.between(0, c.wait_ns - c.holder_running_ns);
        c.holder_asleep_ns = r.between(0, c.wait_ns - c.holder_running_ns - c.holder_runnable_ns);
    }
    if (lock.kind == "mutex") {
        c.spin_attempts = c.contentions + r.between(0, c.contentions);
        c.spin_failures = r.between(0, c.spin_attempts);
        c.spin_successes = c.spin_attempts - c.spin_failures;
        c.spin_yields = r.between(0, c.spin_failures);
    }
    c.sleeps = c.sleep_ns ? r.between(1, c.contentions) : 0;
    c.preemptions = c.preempt_ns ? r.between(1, c.contentions) : 0;
    c.wakeups = c.sleeps;
    c.errors = r.chance(0.1) ? 1 : 0;
    c.owner[size_t(r.between(0, kOwnerStates - 1))] = c.spin_failures;
    const uint64_t mean = c.wait_ns / c.contentions;
    const uint64_t longest = c.contentions == 1 ? c.wait_ns : r.between(mean, std::max(mean, c.wait_ns / 2));
    c.hist[bucket_of(mean)] += c.contentions - 1;
    c.hist[bucket_of(longest)] += 1;
    // counter_delta(): the kernel's running maximum rose (measured), or
    // the interval gets the top changed bucket's bound.
    measured = longest > running_max;
    if (measured) {
        running_max = longest;
        c.max_wait_ns = longest;
    } else {
        const uint64_t bound = (uint64_t(2) << bucket_of(longest)) - 1;
        c.max_wait_ns = std::min({running_max, bound, c.wait_ns});
    }
    return c;
}

std::vector<std::string> kernel_stack(const std::string& caller, const std::string& kind)
{
    const std::string lock_fn = kind == "mutex"      ? "__mutex_lock.constprop.0+0x1b/0x600"
                                : kind == "spinlock" ? "_raw_spin_lock+0x2a/0x40"
                                                     : "rwsem_down_write_slowpath+0x21/0x500";
    return {"__traceiter_contention_begin+0x44/0x70", lock_fn, caller + "+0x54/0x3c0", "vfs_write+0x2a1/0x3f0",
            "do_syscall_64+0x5d/0x170"};
}

// The run's sampled stacks of its locks, some with user code above.
void add_stacks(Random& r, const std::vector<LockInfo>& locks, int64_t run, IntervalBatch& b)
{
    const std::vector<std::string> callers = {"anon_pipe_read", "anon_pipe_write", "do_unlinkat", "path_openat"};
    for (const LockInfo& l : locks) {
        if (r.chance(0.2))
            continue;  // none sampled for it in this run
        const size_t stacks = size_t(r.between(1, 3));
        for (size_t i = 0; i < stacks; ++i) {
            StackSample s{run,
                          l.id,
                          "waiter",
                          kernel_stack(callers[(size_t(l.id) + i) % callers.size()], l.kind),
                          r.between(1, 60),
                          r.between(0, 5) == 0 ? 0 : r.between(1, 2'000'000)};
            if (l.kind != "spinlock" && r.chance(0.4))
                for (int u = 0; u < 2; ++u)
                    b.kernel_user_stacks.push_back({run,
                                                    l.id,
                                                    4242,
                                                    s.frames,
                                                    {"__libc_write", u ? "Queue::push" : "Log::flush", "main"},
                                                    r.between(1, 20),
                                                    r.between(0, 400'000)});
            b.stacks.push_back(std::move(s));
        }
        b.stacks.push_back({run, l.id, "waker", {"mutex_unlock+0x1/0x20", "anon_pipe_read+0x80/0x3c0"}, 3, 0});
    }
}

void add_tasks(Random& r, int64_t run, IntervalBatch& b)
{
    for (uint32_t pid = 100; pid < 100 + r.between(1, 4); ++pid) {
        TaskStats t{run, pid, 100, "worker-" + std::to_string(pid), {}, pid % 2 ? "/a.slice" : "/b.slice"};
        LockCounters& c = t.counters;  // the per-task counters only (LS_TASK_COUNTERS)
        c.contentions = r.between(1, 1000);
        c.timed = c.contentions;
        c.spin_attempts = c.contentions;
        c.spin_failures = r.between(0, c.spin_attempts);
        c.sleep_ns = r.between(0, 9'000'000);
        c.preempt_ns = r.between(0, 9'000'000);
        c.spin_offcpu_ns = r.between(0, c.offcpu_ns());
        c.spin_ns = r.between(0, 1'000'000) + c.spin_offcpu_ns;
        c.wait_ns = c.spin_ns - c.spin_offcpu_ns + r.between(0, 1'000'000) + c.offcpu_ns();
        c.sleeps = c.sleep_ns ? r.between(1, c.contentions) : 0;
        b.tasks.push_back(std::move(t));
    }
}

void add_user_locks(Random& r, int64_t run, IntervalBatch& b)
{
    b.user_lock_runs.push_back({run, "recorded", "4242", 10, 10});
    const std::vector<std::pair<std::string, std::string>> locks = {{"g_cache_lock", "pthread_mutex"},
                                                                    {"g_table_lock", "pthread_rwlock/w"},
                                                                    {"pthread_mutex@Log::flush", "pthread_mutex"}};
    for (size_t i = 0; i < locks.size(); ++i) {
        if (r.chance(0.3))
            continue;
        UserLockRow row;
        row.run = run;
        row.pid = 4242;
        row.name = locks[i].first;
        row.kind = locks[i].second;
        row.name_source = i < 2 ? "user-symbol" : "user-caller";
        row.module = "/usr/bin/prog";
        row.caller = "Cache::get";
        row.waits = r.between(1, 5000);
        row.oncpu_ns = r.between(0, 3'000'000);
        row.asleep_ns = r.between(0, 50'000'000);
        row.runnable_ns = r.between(0, 5'000'000);
        row.wait_ns = row.oncpu_ns + row.asleep_ns + row.runnable_ns;
        row.max_wait_ns = std::min(row.wait_ns, r.between(0, 5'000'000));
        row.wakes = r.between(0, row.waits);
        row.hist[bucket_of(row.max_wait_ns)] = row.waits;
        const size_t stacks = size_t(r.between(0, 2));
        for (size_t s = 0; s < stacks; ++s) {
            const uint64_t samples = r.between(1, 30);
            row.samples += samples;
            b.user_lock_stacks.push_back({run,
                                          row.pid,
                                          row.name,
                                          row.kind,
                                          {"__lll_lock_wait", s ? "Cache::put" : "Cache::get", "main"},
                                          samples,
                                          r.between(0, 900'000)});
        }
        b.user_locks.push_back(std::move(row));
    }
}

}  // namespace

GeneratedSession write_generated_session(const std::string& path, uint64_t seed)
{
    Random r(seed);
    GeneratedSession out;
    SessionWriter w = SessionWriter::create(path, true);
    w.set_meta({{"host", "generated"}, {"kernel_release", "6.1.0-test"}, {"online_cpus", "4"}});
    const std::vector<LockInfo> locks = kernel_locks(r);
    const int runs = int(r.between(1, 3));
    uint64_t now = kSecond;
    for (int run_number = 0; run_number < runs; ++run_number) {
        const int64_t run = w.begin_run("run " + std::to_string(run_number + 1), now);
        std::map<int64_t, uint64_t> running_max;  // a probe per run: maxima start again
        const int intervals = int(r.between(1, 5));
        IntervalBatch b;
        for (int index = 0; index < intervals; ++index) {
            b = IntervalBatch{};
            b.totals.run = run;
            b.totals.index = index;
            b.totals.start_ns = now;
            b.totals.end_ns = now += kSecond;
            b.totals.cpu_ns = 4 * kSecond;
            b.totals.idle_ns = r.between(0, kSecond);
            if (run_number == 0 && index == 0)
                b.new_locks = locks;
            uint64_t measured_max = 0, bound_max = 0;
            for (const LockInfo& l : locks) {
                if (r.chance(0.25))
                    continue;
                bool measured = false;
                const LockCounters c = lock_counters(r, l, running_max[l.id], measured);
                (measured ? measured_max : bound_max) = std::max(measured ? measured_max : bound_max, c.max_wait_ns);
                b.totals.counters.add(c);
                b.locks.push_back({run, index, l.id, c});
            }
            out.interval_max[{run, index}] =
                measured_max >= bound_max ? std::optional<uint64_t>(measured_max) : std::nullopt;
            b.run.id = run;
            if (index + 1 == intervals) {  // the run's cumulative rows, once
                add_stacks(r, locks, run, b);
                add_tasks(r, run, b);
                add_user_locks(r, run, b);
            }
            w.write_interval(b);
        }
        RunInfo done = b.run;
        done.start_ns = now - uint64_t(intervals) * kSecond;
        done.end_ns = now;
        done.status = "complete";
        w.end_run(done);
    }
    w.close();
    return out;
}

}  // namespace lockscope::testing
