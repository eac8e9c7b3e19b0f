#include "noisy_sessions.h"

#include "diff_fixture.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace lockscope::testing {
namespace {

class Noise {
public:
    explicit Noise(uint64_t seed) : rng_(seed) {}

    // A multiplicative factor whose log is a Student t (3 degrees of
    // freedom) scaled to a standard deviation of `sigma`: heavy tails.
    double heavy(double sigma)
    {
        std::student_t_distribution<double> t(3);
        return std::exp(sigma * t(rng_) / std::sqrt(3.0));
    }
    double lognormal(double sigma)
    {
        std::normal_distribution<double> z(0, sigma);
        return std::exp(z(rng_));
    }
    double uniform()
    {
        std::uniform_real_distribution<double> u(0, 1);
        return u(rng_);
    }
    uint64_t poisson(double mean)
    {
        if (!(mean > 0))
            return 0;
        std::poisson_distribution<uint64_t> p(mean);
        return p(rng_);
    }

private:
    std::mt19937_64 rng_;
};

LockCounters lock_counters(const NoisyLock& l, double seconds, double level, Noise& noise, double part_sigma,
                           double run_sigma)
{
    LockCounters c;
    c.contentions = noise.poisson(l.contentions_per_s * seconds * level);
    c.spin_attempts = c.contentions;
    c.spin_failures = std::min(c.spin_attempts, noise.poisson(double(c.spin_attempts) * l.spin_failure));
    c.spin_successes = c.spin_attempts - c.spin_failures;
    c.wait_ns = uint64_t(double(c.contentions) * l.wait_ns_per_contention * noise.heavy(run_sigma));
    double parts[4], sum = 0;
    for (int k = 0; k < 4; ++k)
        sum += parts[k] = l.parts[k] * noise.lognormal(part_sigma);
    const uint64_t spinning = uint64_t(double(c.wait_ns) * parts[0] / sum);
    c.sleep_ns = uint64_t(double(c.wait_ns) * parts[2] / sum);
    c.preempt_ns = uint64_t(double(c.wait_ns) * parts[3] / sum);
    // The spin phases also hold part of the time switched out, as on a
    // real machine: "spin time" and "off-CPU time" overlap.
    c.spin_offcpu_ns = (c.sleep_ns + c.preempt_ns) / 2;
    c.spin_ns = spinning + c.spin_offcpu_ns;
    c.sleeps = c.sleep_ns ? 1 + c.contentions / 10 : 0;
    c.max_wait_ns = c.contentions ? c.wait_ns / c.contentions * 4 : 0;
    c.timed = c.contentions;
    return c;
}

}  // namespace

std::vector<NoisyLock> noisy_locks()
{
    NoisyLock pipe{"pipe_inode_info.mutex", "mutex", "", 6000, 2000, 0.001, {0.25, 0.01, 0.04, 0.70}};
    pipe.paths = {{"anon_pipe_read", 0.55}, {"anon_pipe_write", 0.45}};
    pipe.samples_per_s = 300;
    NoisyLock dir{"inode.i_rwsem", "rwsem", "write", 400, 30000, 0.2, {0.0, 0.1, 0.6, 0.3}};
    NoisyLock exit_lock{"rwlock@do_exit", "rwlock", "write", 3, 20000, 0.0, {1.0, 0.0, 0.0, 0.0}};
    return {pipe, dir, exit_lock};
}

Session noisy_session(const NoisySpec& spec)
{
    Noise noise(spec.seed);
    Session s;
    s.meta = kernel_a_meta();
    for (size_t k = 0; k < spec.locks.size(); ++k) {
        const NoisyLock& l = spec.locks[k];
        s.locks.push_back({int64_t(k + 1), l.name, l.kind, l.mode, "caller_of_" + std::to_string(k),
                           0xffff888000000000ull + 64 * k, 33, "slab"});
    }
    const auto burst_id = int64_t(spec.locks.size() + 1);
    if (spec.burst_chance > 0)
        s.locks.push_back({burst_id, "mutex@rcu_barrier_tasks_generic", "mutex", "", "rcu_barrier_tasks_generic",
                           0xffffffff83000000ull, 33, "caller"});
    uint64_t t = 1'000'000'000ull;
    const auto interval_ns = uint64_t(spec.interval_s * 1e9);
    for (int r = 0; r < spec.runs; ++r) {
        RunInfo run;
        run.id = r + 1;
        run.label = "run " + std::to_string(r + 1);
        run.status = "complete";
        run.start_ns = t;
        const double machine = noise.heavy(spec.run_sigma);  // this run's machine: all of it faster or slower
        std::vector<double> level;
        for (size_t k = 0; k < spec.locks.size(); ++k)
            level.push_back(machine * noise.heavy(spec.run_sigma));
        for (int i = 0; i < spec.intervals; ++i) {
            IntervalTotals in;
            in.run = run.id;
            in.index = i;
            in.start_ns = t;
            in.end_ns = t += interval_ns;
            in.cpu_ns = 2 * interval_ns;
            in.idle_ns = uint64_t(double(in.cpu_ns) * 0.01 * noise.heavy(spec.run_sigma));
            if (spec.ops_per_s > 0)
                in.ops = std::round(spec.ops_per_s * spec.interval_s / machine * noise.lognormal(0.01));
            for (size_t k = 0; k < spec.locks.size(); ++k) {
                const LockCounters c =
                    lock_counters(spec.locks[k], spec.interval_s, level[k], noise, spec.part_sigma, spec.run_sigma);
                if (c.empty())
                    continue;  // as the recorder: no row for an interval without contention
                in.counters.add(c);
                s.lock_intervals.push_back({run.id, i, int64_t(k + 1), c});
            }
            if (i == 0 && noise.uniform() < spec.burst_chance) {
                LockCounters burst;
                burst.contentions = burst.spin_attempts = burst.spin_failures = burst.sleeps = 1;
                burst.wait_ns = burst.sleep_ns = burst.max_wait_ns = 400'000'000;
                burst.timed = 1;
                in.counters.add(burst);
                s.lock_intervals.push_back({run.id, i, burst_id, burst});
            }
            s.intervals.push_back(in);
        }
        for (size_t k = 0; k < spec.locks.size(); ++k) {
            const NoisyLock& l = spec.locks[k];
            for (const auto& [function, share] : l.paths) {
                const double mean =
                    l.samples_per_s * spec.interval_s * spec.intervals * share * noise.lognormal(spec.part_sigma);
                const uint64_t samples = noise.poisson(mean);
                if (samples)
                    s.stacks.push_back({run.id,
                                        int64_t(k + 1),
                                        "waiter",
                                        {function + "+0x10/0x100", "vfs_read+0x1", "do_syscall_64+0x5"},
                                        samples,
                                        samples * 1000});
            }
        }
        run.end_ns = t;
        s.runs.push_back(run);
    }
    return s;
}

}  // namespace lockscope::testing
