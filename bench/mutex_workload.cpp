#include "mutex_workload.h"

#include <sys/prctl.h>
#include <time.h>

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace lockscope::bench {
namespace {

using Clock = std::chrono::steady_clock;

pthread_mutex_t g_bench_lock = PTHREAD_MUTEX_INITIALIZER;
volatile uint64_t g_sink;

void spin(unsigned rounds)
{
    for (unsigned i = 0; i < rounds; ++i) {
        g_sink = g_sink + i;
    }
}

}  // namespace

MutexCounts mutex_workload(unsigned threads, double seconds, unsigned rate)
{
    prctl(PR_SET_TIMERSLACK, 1UL);  // sleeps as short as asked; the threads inherit it
    const timespec hold{0, rate != 0 ? static_cast<long>(1000000000UL / rate) : 0};
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> ops{0};
    std::atomic<uint64_t> contended{0};
    std::vector<std::thread> workers;
    const auto start = Clock::now();
    for (unsigned t = 0; t < threads; ++t) {
        workers.emplace_back([&] {
            uint64_t mine = 0;
            uint64_t waited = 0;
            while (!stop.load(std::memory_order_relaxed)) {
                if (pthread_mutex_trylock(&g_bench_lock) != 0) {
                    ++waited;
                    pthread_mutex_lock(&g_bench_lock);
                }
                if (rate != 0) {
                    clock_nanosleep(CLOCK_MONOTONIC, 0, &hold, nullptr);
                } else {
                    spin(400);
                }
                pthread_mutex_unlock(&g_bench_lock);
                spin(100);
                ++mine;
            }
            ops += mine;
            contended += waited;
        });
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    stop = true;
    const auto elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
    for (auto& w : workers) {
        w.join();
    }
    return {ops.load(), contended.load(), static_cast<uint64_t>(elapsed)};
}

}  // namespace lockscope::bench
