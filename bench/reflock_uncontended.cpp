// Uncontended lock+unlock cost, reflock vs pthread and std locks, side by
// side. A helper thread exists for the whole run: glibc drops the lock
// prefix from pthread_mutex while a process is single-threaded, which
// would flatter pthread (3.6 ns instead of ~14 ns on the project machines).
#include "reflock/mutex.h"
#include "reflock/rwsem.h"

#include <benchmark/benchmark.h>

#include <condition_variable>
#include <mutex>
#include <pthread.h>
#include <shared_mutex>
#include <thread>

namespace {

template <typename Lock>
void lock_unlock(benchmark::State& state, Lock& lock)
{
    for (auto _ : state) {
        lock.lock();
        benchmark::ClobberMemory();
        lock.unlock();
    }
}

void BM_reflock_Mutex(benchmark::State& state)
{
    reflock::Mutex m;
    lock_unlock(state, m);
}

void BM_pthread_mutex(benchmark::State& state)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    for (auto _ : state) {
        pthread_mutex_lock(&m);
        benchmark::ClobberMemory();
        pthread_mutex_unlock(&m);
    }
}

void BM_std_mutex(benchmark::State& state)
{
    std::mutex m;
    lock_unlock(state, m);
}

void BM_reflock_RwSem_write(benchmark::State& state)
{
    reflock::RwSem s(static_cast<reflock::Policy>(state.range(0)));
    lock_unlock(state, s);
}

void BM_reflock_RwSem_read(benchmark::State& state)
{
    reflock::RwSem s(static_cast<reflock::Policy>(state.range(0)));
    for (auto _ : state) {
        s.lock_shared();
        benchmark::ClobberMemory();
        s.unlock_shared();
    }
}

void BM_std_shared_mutex_write(benchmark::State& state)
{
    std::shared_mutex m;
    lock_unlock(state, m);
}

void BM_pthread_rwlock_read(benchmark::State& state)
{
    pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
    for (auto _ : state) {
        pthread_rwlock_rdlock(&l);
        benchmark::ClobberMemory();
        pthread_rwlock_unlock(&l);
    }
}

BENCHMARK(BM_reflock_Mutex);
BENCHMARK(BM_pthread_mutex);
BENCHMARK(BM_std_mutex);
BENCHMARK(BM_reflock_RwSem_write)
    ->Arg(static_cast<int>(reflock::Policy::V4_2))
    ->Arg(static_cast<int>(reflock::Policy::V5_19));
BENCHMARK(BM_reflock_RwSem_read)
    ->Arg(static_cast<int>(reflock::Policy::V4_2))
    ->Arg(static_cast<int>(reflock::Policy::V5_19));
BENCHMARK(BM_std_shared_mutex_write);
BENCHMARK(BM_pthread_rwlock_read);

}  // namespace

int main(int argc, char** argv)
{
    // An idle second thread for the whole run (see the file comment).
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    std::thread idle([&] {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return done; });
    });
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    {
        std::lock_guard lock(m);
        done = true;
    }
    cv.notify_one();
    idle.join();
    return 0;
}
