// The program userlock_test records: user-space locks of every kind the
// recorder tells apart, contended by a few threads. Built as Debian builds
// its binaries (no frame pointers), so only CFI unwinding names its callers.
//
// Prints "lock NAME ADDRESS SIZE" for each lock whose waits the test checks,
// then "ready"; on a line on stdin runs for argv[1] milliseconds (longer on a
// busy machine, until each lock was contended often enough), prints
// "contended NAME N" (lock attempts that found the lock taken) and "done";
// when stdin closes (the recorder has read its maps), exits with two threads
// asleep on a mutex.
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

pthread_mutex_t g_cache_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t g_stats_lock = PTHREAD_MUTEX_INITIALIZER;
std::shared_mutex g_table_lock;
std::mutex g_queue_mutex;
std::condition_variable g_queue_cv;

namespace {

constexpr long kEnoughContended = 400;
std::atomic<bool> stopping{false};
std::atomic<long> cache_contended{0};
std::atomic<long> stats_contended{0};
std::atomic<long> heap_contended{0};
std::atomic<long> table_contended{0};
std::deque<int> queue;
volatile long sink;

// Work while a lock is held, long enough that the other threads find it taken.
void hold(int rounds)
{
    for (int i = 0; i < rounds; ++i) {
        sink = sink + i;
    }
}

void lock_counted(pthread_mutex_t* mutex, std::atomic<long>& contended)
{
    if (pthread_mutex_trylock(mutex) != 0) {
        contended.fetch_add(1, std::memory_order_relaxed);
        pthread_mutex_lock(mutex);
    }
}

}  // namespace

__attribute__((noinline)) void update_cache()
{
    lock_counted(&g_cache_lock, cache_contended);
    hold(300);
    pthread_mutex_unlock(&g_cache_lock);
}

__attribute__((noinline)) void record_stats()
{
    lock_counted(&g_stats_lock, stats_contended);
    hold(300);
    pthread_mutex_unlock(&g_stats_lock);
}

class Cache {
public:
    __attribute__((noinline)) int get(int key)
    {
        std::unique_lock guard(mutex_, std::try_to_lock);
        if (!guard.owns_lock()) {
            heap_contended.fetch_add(1, std::memory_order_relaxed);
            guard.lock();
        }
        hold(300);
        return values_[key % 64]++;
    }
    const void* lock_address() const { return &mutex_; }

private:
    std::mutex mutex_;
    int values_[64] = {};
};

__attribute__((noinline)) int lookup_table()
{
    if (!g_table_lock.try_lock_shared()) {
        table_contended.fetch_add(1, std::memory_order_relaxed);
        g_table_lock.lock_shared();
    }
    hold(200);
    g_table_lock.unlock_shared();
    return 0;
}

__attribute__((noinline)) void update_table()
{
    if (!g_table_lock.try_lock()) {
        table_contended.fetch_add(1, std::memory_order_relaxed);
        g_table_lock.lock();
    }
    hold(300);
    g_table_lock.unlock();
}

__attribute__((noinline)) void consume_queue()
{
    std::unique_lock guard(g_queue_mutex);
    while (!stopping.load() && queue.empty()) {
        g_queue_cv.wait(guard);
    }
    if (!queue.empty()) {
        queue.pop_front();
    }
}

__attribute__((noinline)) void produce_queue()
{
    {
        std::lock_guard guard(g_queue_mutex);
        queue.push_back(1);
    }
    g_queue_cv.notify_one();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
}

int main(int argc, char** argv)
{
    const long run_ms = argc > 1 ? std::atol(argv[1]) : 2000;
    auto* cache = new Cache;
    const auto print_lock = [](const char* name, const void* address, std::size_t size) {
        std::printf("lock %s %p %zu\n", name, address, size);
    };
    print_lock("g_cache_lock", &g_cache_lock, sizeof(g_cache_lock));
    print_lock("g_stats_lock", &g_stats_lock, sizeof(g_stats_lock));
    print_lock("Cache::get", cache->lock_address(), sizeof(std::mutex));
    print_lock("g_table_lock", &g_table_lock, sizeof(g_table_lock));
    print_lock("g_queue_cv", &g_queue_cv, sizeof(g_queue_cv));
    std::printf("ready\n");
    std::fflush(stdout);
    std::string line;
    if (!std::getline(std::cin, line)) {
        return 1;
    }

    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([t, cache] {
            for (int i = 0; !stopping.load(std::memory_order_relaxed); ++i) {
                update_cache();
                record_stats();
                cache->get(i);
                if ((i + t) % 4 == 0) {
                    update_table();
                } else {
                    lookup_table();
                }
            }
        });
    }
    for (int t = 0; t < 2; ++t) {
        threads.emplace_back([] {
            while (!stopping.load()) {
                consume_queue();
            }
        });
    }
    threads.emplace_back([] {
        while (!stopping.load()) {
            produce_queue();
        }
    });
    // At least run_ms, and on a busy machine (fewer threads run at once,
    // fewer waits) until each lock was found taken often enough, within 10 s.
    const auto start = std::chrono::steady_clock::now();
    const auto enough = [] {
        for (const auto* counter : {&cache_contended, &stats_contended, &heap_contended, &table_contended}) {
            if (counter->load() < kEnoughContended) {
                return false;
            }
        }
        return true;
    };
    while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(run_ms) ||
           (!enough() && std::chrono::steady_clock::now() - start < std::chrono::seconds(10))) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    {
        std::lock_guard guard(g_queue_mutex);
        stopping.store(true);
    }
    g_queue_cv.notify_all();
    for (auto& thread : threads) {
        thread.join();
    }
    std::printf("contended g_cache_lock %ld\n", cache_contended.load());
    std::printf("contended g_stats_lock %ld\n", stats_contended.load());
    std::printf("contended Cache::get %ld\n", heap_contended.load());
    std::printf("contended g_table_lock %ld\n", table_contended.load());
    std::printf("done\n");
    std::fflush(stdout);
    while (std::getline(std::cin, line)) {
    }
    // Exit while two threads sleep on a mutex, as programs do: their
    // waits never return.
    pthread_mutex_lock(&g_cache_lock);
    std::thread([] { update_cache(); }).detach();
    std::thread([] { update_cache(); }).detach();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    delete cache;
    std::exit(0);
}
