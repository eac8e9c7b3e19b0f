#include "diff_fixture.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <stdexcept>

namespace lockscope::testing {

TempDir::TempDir()
{
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/lockscope-diff-XXXXXX";
    if (!mkdtemp(tmpl.data()))
        throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
}

TempDir::~TempDir()
{
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
}

std::map<std::string, std::string> kernel_a_meta()
{
    return {{"tool_version", "0.1.0"},
            {"host", "lab"},
            {"kernel_release", "6.1.0-18-amd64"},
            {"kernel_version", "#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1"},
            {"config.CONFIG_MUTEX_SPIN_ON_OWNER", "y"},
            {"config.CONFIG_PREEMPT_RT", "n"},
            {"cpu_model", "Test CPU @ 3.0GHz"},
            {"online_cpus", "2"},
            {"recorder", "kernel"},
            {"workload", "pipe"},
            {"workload.threads", "4"},
            {"interval_ms", "1000"},
            {"scope", "system"}};
}

std::vector<LockSpec> default_locks()
{
    return {{"pipe_inode_info.mutex", "mutex", "", 5000, 30000, 0.4},
            {"inode.i_rwsem", "rwsem", "write", 800, 50000, 0.2},
            {"rtnl_mutex", "mutex", "", 50, 8000, 0.1}};
}

void write_session(const std::string& path, const SessionSpec& spec)
{
    std::mt19937_64 rng(spec.seed);
    auto noisy = [&](double mean) {
        std::normal_distribution<double> d(mean, mean * spec.noise);
        return std::max(0.0, d(rng));
    };
    auto w = SessionWriter::create(path, false);
    w.set_meta(spec.meta);
    for (int r = 0; r < spec.runs; ++r) {
        const int64_t run = w.begin_run("run " + std::to_string(r + 1), 1'000'000'000ull);
        RunInfo info;
        info.id = run;
        uint64_t t = 1'000'000'000ull;
        for (int i = 0; i < spec.intervals; ++i) {
            IntervalBatch b;
            b.totals.run = run;
            b.totals.index = i;
            b.totals.start_ns = t;
            b.totals.end_ns = t += 1'000'000'000ull;
            b.totals.cpu_ns = 2'000'000'000ull;
            b.totals.idle_ns = uint64_t(noisy(4e8));
            b.totals.events = 1000;
            if (spec.ops > 0) {
                b.totals.ops = std::round(noisy(spec.ops));
                info.ops = info.ops.value_or(0) + *b.totals.ops;
            }
            for (size_t k = 0; k < spec.locks.size(); ++k) {
                const LockSpec& ls = spec.locks[k];
                // Ids in reverse order of the spec, so ids never line up by accident.
                const int64_t id = int64_t(spec.locks.size() - k);
                if (r == 0 && i == 0)
                    b.new_locks.push_back({id, ls.name, ls.kind, ls.mode, "caller_" + ls.name,
                                           spec.address_base + uint64_t(id) * 64, 33});
                LockInterval li{run, i, id, {}};
                LockCounters& c = li.counters;
                c.contentions = uint64_t(noisy(ls.contentions));
                c.spin_attempts = c.contentions;
                c.spin_failures = uint64_t(std::round(double(c.spin_attempts) * noisy(ls.spin_failure)));
                c.spin_failures = std::min(c.spin_failures, c.spin_attempts);
                c.spin_successes = c.spin_attempts - c.spin_failures;
                c.wait_ns = uint64_t(double(c.contentions) * noisy(ls.wait_ns_per_op));
                c.spin_ns = c.wait_ns / 4;
                c.sleep_ns = c.wait_ns / 2;
                b.totals.counters.add(c);
                b.locks.push_back(li);
            }
            for (size_t k = 0; k < spec.locks.size(); ++k)
                for (const StackSpec& st : spec.locks[k].stacks)
                    b.stacks.push_back({run, int64_t(spec.locks.size() - k), st.role, st.frames,
                                        st.samples_per_run, st.samples_per_run * 1000});
            b.run = info;
            w.write_interval(b);
        }
        info.end_ns = t;
        info.status = "complete";
        w.end_run(info);
    }
    w.close();
}

}  // namespace lockscope::testing
