// A program built like a distribution binary (-O2, no frame pointers, unwind
// tables in .eh_frame) whose threads wait on one pthread mutex through three
// named functions: outer_worker -> middle_step -> contend_on_lock.
//
// usage: lock_contender THREADS
// Prints "ready" once its threads run, starts contending when a line arrives
// on stdin, and stops when stdin closes.
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
std::atomic<bool> g_go{false};
std::atomic<bool> g_stop{false};
std::atomic<uint64_t> g_total{0};

// Work done while holding the lock, long enough that the others queue in
// the kernel (a normal glibc mutex does not spin).
uint64_t busy_work(uint64_t seed)
{
    uint64_t x = seed | 1;
    for (int i = 0; i < 20000; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    return x;
}

}  // namespace

// Not inlined, so that each is a frame of its own; each uses its callee's
// result, so that no call is a tail call.
extern "C" __attribute__((noinline)) uint64_t contend_on_lock(uint64_t round)
{
    pthread_mutex_lock(&g_lock);
    const uint64_t result = busy_work(round);
    pthread_mutex_unlock(&g_lock);
    return result;
}

extern "C" __attribute__((noinline)) uint64_t middle_step(uint64_t round)
{
    return contend_on_lock(round) * 3 + round;
}

extern "C" __attribute__((noinline)) void* outer_worker(void*)
{
    while (!g_go.load()) {
        usleep(1000);
    }
    uint64_t sum = 0;
    for (uint64_t round = 0; !g_stop.load(std::memory_order_relaxed); ++round) {
        sum += middle_step(round);
    }
    g_total += sum;
    return nullptr;
}

int main(int argc, char** argv)
{
    const int threads = argc > 1 ? std::atoi(argv[1]) : 4;
    std::vector<pthread_t> workers(threads > 0 ? threads : 1);
    for (auto& worker : workers) {
        if (pthread_create(&worker, nullptr, outer_worker, nullptr) != 0) {
            std::perror("lock_contender: pthread_create");
            return 1;
        }
    }
    std::printf("ready\n");
    std::fflush(stdout);
    char buffer[64];
    if (read(STDIN_FILENO, buffer, sizeof(buffer)) > 0) {
        g_go = true;
        while (read(STDIN_FILENO, buffer, sizeof(buffer)) > 0) {
        }
    }
    g_go = true;
    g_stop = true;
    for (auto& worker : workers) {
        pthread_join(worker, nullptr);
    }
    std::printf("%llu\n", static_cast<unsigned long long>(g_total.load()));
    return 0;
}
