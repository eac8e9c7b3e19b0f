#include "reflock/harness/harness.h"

#include "reflock/harness/harness_locks.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <ctime>
#include <stdexcept>
#include <thread>

#include <sched.h>

namespace reflock::harness {
namespace {

double clock_s(clockid_t clock) noexcept
{
    timespec ts;
    clock_gettime(clock, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

unsigned usable_cpus() noexcept
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        return static_cast<unsigned>(CPU_COUNT(&set));
    return std::max(1u, std::thread::hardware_concurrency());
}

// Work is a calibrated dependent-multiply loop rather than a clock wait: a
// thread preempted inside its critical section then really holds the lock
// longer, as a kernel lock holder would.
std::uint64_t work(std::uint64_t iterations, std::uint64_t seed) noexcept
{
    for (std::uint64_t i = 0; i < iterations; ++i)
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return seed;
}

double iterations_per_ns()
{
    // Thread CPU time, best of several trials: on a busy machine wall-clock
    // calibration counts time the thread was preempted and makes every
    // critical section shorter than asked.
    static const double rate = [] {
        std::uint64_t iterations = 1 << 16;
        volatile std::uint64_t sink = 0;
        for (;;) {
            const double start = clock_s(CLOCK_THREAD_CPUTIME_ID);
            sink = work(iterations, sink);
            const double elapsed_ns = (clock_s(CLOCK_THREAD_CPUTIME_ID) - start) * 1e9;
            if (elapsed_ns > 5e6)
                break;
            iterations *= 2;
        }
        double best = 0;
        for (int trial = 0; trial < 5; ++trial) {
            const double start = clock_s(CLOCK_THREAD_CPUTIME_ID);
            sink = work(iterations, sink);
            const double elapsed_ns = (clock_s(CLOCK_THREAD_CPUTIME_ID) - start) * 1e9;
            best = std::max(best, double(iterations) / elapsed_ns);
        }
        return best;
    }();
    return rate;
}

struct alignas(64) WorkerState {
    std::atomic<std::uint64_t> ops{0};
};

Sample difference(const Sample& later, const Sample& earlier, unsigned cpus)
{
    Sample s;
    s.ops = later.ops - earlier.ops;
    s.counters = later.counters - earlier.counters;
    s.wall_s = later.wall_s - earlier.wall_s;
    s.cpu_s = later.cpu_s - earlier.cpu_s;
    const double capacity = s.wall_s * cpus;
    s.idle_fraction = capacity > 0 ? std::clamp((capacity - s.cpu_s) / capacity, 0.0, 1.0) : 0;
    return s;
}

}  // namespace

void validate(const Params& p)
{
    if (p.threads == 0)
        throw std::invalid_argument("threads must be at least 1");
    if (p.threads > 1024)
        throw std::invalid_argument("threads must be at most 1024");
    if (p.read_percent > 100)
        throw std::invalid_argument("read percentage must be 0..100");
    if (p.read_percent > 0 && !make_lock(p.lock)->has_shared())
        throw std::invalid_argument(to_string(p.lock) + " has no shared mode: read percentage must be 0");
    if (p.duration.count() <= 0)
        throw std::invalid_argument("duration must be positive");
    if (p.interval.count() <= 0 || p.interval > p.duration)
        throw std::invalid_argument("interval must be positive and at most the duration");
}

RunResult run(const Params& params, unsigned repeat, const std::function<void(const Sample&)>& on_interval)
{
    validate(params);
    const double rate = iterations_per_ns();
    const auto critical_iterations = static_cast<std::uint64_t>(double(params.critical_ns) * rate);
    const auto outside_iterations = static_cast<std::uint64_t>(double(params.outside_ns) * rate);

    RunResult result;
    result.params = params;
    result.repeat = repeat;
    result.cpus = usable_cpus();

    auto lock = make_lock(params.lock);
    std::vector<WorkerState> workers(params.threads);
    std::atomic<bool> stop{false};
    std::atomic<unsigned> ready{0};
    std::atomic<bool> go{false};
    std::uint64_t shared_data = 0;  // written under the lock: the cache line a real critical section moves

    std::vector<std::thread> threads;
    threads.reserve(params.threads);
    for (unsigned t = 0; t < params.threads; ++t) {
        threads.emplace_back([&, t] {
            std::uint64_t rng = 0x9e3779b97f4a7c15ULL * (t + 1) + repeat;
            std::uint64_t sink = rng;
            ready.fetch_add(1);
            while (!go.load(std::memory_order_acquire))
                std::this_thread::yield();
            std::uint64_t ops = 0;
            while (!stop.load(std::memory_order_relaxed)) {
                rng = rng * 6364136223846793005ULL + 1;
                const bool read = params.read_percent && (rng >> 33) % 100 < params.read_percent;
                if (read) {
                    lock->lock_shared();
                    sink += shared_data;
                    sink = work(critical_iterations, sink);
                    lock->unlock_shared();
                } else {
                    lock->lock();
                    shared_data = shared_data + 1;
                    sink = work(critical_iterations, sink);
                    lock->unlock();
                }
                workers[t].ops.store(++ops, std::memory_order_relaxed);
                sink = work(outside_iterations, sink);
            }
            volatile std::uint64_t keep = sink;
            (void)keep;
        });
    }
    while (ready.load() < params.threads)
        std::this_thread::yield();

    auto sample = [&] {
        Sample s;
        for (auto& w : workers)
            s.ops += w.ops.load(std::memory_order_relaxed);
        s.counters = counters_total();
        s.wall_s = clock_s(CLOCK_MONOTONIC);
        s.cpu_s = clock_s(CLOCK_PROCESS_CPUTIME_ID);
        return s;
    };
    const Sample first = sample();
    go.store(true, std::memory_order_release);
    Sample previous = first;
    const auto start = std::chrono::steady_clock::now();
    for (auto next = start + params.interval;; next += params.interval) {
        const bool last = next >= start + params.duration;
        std::this_thread::sleep_until(last ? start + params.duration : next);
        const Sample now = sample();
        result.intervals.push_back(difference(now, previous, result.cpus));
        if (on_interval)
            on_interval(result.intervals.back());
        previous = now;
        if (last)
            break;
    }
    stop.store(true);
    for (auto& t : threads)
        t.join();
    result.total = difference(previous, first, result.cpus);
    for (auto& w : workers)
        result.ops_per_thread.push_back(w.ops.load());
    return result;
}

std::vector<std::vector<RunResult>> run_interleaved(std::span<const Params> variants, unsigned repeats)
{
    for (const auto& v : variants)
        validate(v);
    std::vector<std::vector<RunResult>> results(variants.size());
    for (unsigned r = 0; r < repeats; ++r)
        for (std::size_t v = 0; v < variants.size(); ++v)
            results[v].push_back(run(variants[v], r));
    return results;
}

Stat stat_of(std::span<const double> values)
{
    Stat s;
    s.n = values.size();
    if (values.empty())
        return s;
    s.min = *std::min_element(values.begin(), values.end());
    s.max = *std::max_element(values.begin(), values.end());
    double sum = 0;
    for (double v : values)
        sum += v;
    s.mean = sum / double(s.n);
    if (s.n > 1) {
        double sq = 0;
        for (double v : values)
            sq += (v - s.mean) * (v - s.mean);
        s.stddev = std::sqrt(sq / double(s.n - 1));
    }
    return s;
}

}  // namespace reflock::harness
