// A program with one global mutex and one heap mutex taken by Table::update,
// four threads contending on each for the time given (seconds, default 1).
// The test build strips it, as Debian ships its binaries, and keeps its
// symbols in a separate debug file (tests/userlock/CMakeLists.txt).
#include <pthread.h>

#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

pthread_mutex_t g_stripped_lock = PTHREAD_MUTEX_INITIALIZER;

namespace {

volatile unsigned long g_work = 0;

void hold(pthread_mutex_t* lock)
{
    pthread_mutex_lock(lock);
    for (int i = 0; i < 300; ++i) {
        g_work = g_work + 1;
    }
    pthread_mutex_unlock(lock);
}

}  // namespace

struct Table {
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    __attribute__((noinline)) void update() { hold(&lock); }
};

int main(int argc, char** argv)
{
    const double seconds = argc > 1 ? std::atof(argv[1]) : 1.0;
    auto* table = new Table;
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            while (std::chrono::steady_clock::now() < end) {
                hold(&g_stripped_lock);
                table->update();
            }
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    delete table;
    return 0;
}
