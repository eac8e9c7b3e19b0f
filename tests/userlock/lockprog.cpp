// A program with one global mutex and two heap mutexes, both taken by
// Table::update (two locks of one name), four threads contending on each
// for the time given (seconds, default 1). The test build strips it, as
// Debian ships its binaries, and keeps its symbols in a separate debug file
// (tests/userlock/CMakeLists.txt).
//
// `lockprog SECONDS fork`: prints "ready", and on a line on stdin forks two
// processes (no exec) that contend as above and exit; once both have, prints
// "exited" and exits when stdin closes.
//
// `lockprog SECONDS shared`: forks two processes that contend, four threads
// each, on one process-shared mutex in shared memory (taken by
// shared_update), and waits for them.
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
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

__attribute__((noinline)) void shared_update(pthread_mutex_t* lock)
{
    hold(lock);
}

namespace {

// Four threads that run `work` for `seconds`.
template <typename Work>
void on_four_threads(double seconds, Work work)
{
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            while (std::chrono::steady_clock::now() < end) {
                work();
            }
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
}

void contend(double seconds)
{
    auto* first = new Table;
    auto* second = new Table;
    on_four_threads(seconds, [&] {
        hold(&g_stripped_lock);
        first->update();
        second->update();
    });
    delete first;
    delete second;
}

// Two processes on one mutex in shared memory.
int contend_shared(double seconds)
{
    void* memory = mmap(nullptr, sizeof(pthread_mutex_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) {
        return 1;
    }
    auto* lock = static_cast<pthread_mutex_t*>(memory);
    pthread_mutexattr_t attributes;
    pthread_mutexattr_init(&attributes);
    pthread_mutexattr_setpshared(&attributes, PTHREAD_PROCESS_SHARED);
    pthread_mutex_init(lock, &attributes);
    for (int child = 0; child < 2; ++child) {
        if (fork() == 0) {
            on_four_threads(seconds, [lock] { shared_update(lock); });
            _exit(0);
        }
    }
    while (wait(nullptr) > 0) {
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv)
{
    const double seconds = argc > 1 ? std::atof(argv[1]) : 1.0;
    if (argc > 2 && std::strcmp(argv[2], "shared") == 0) {
        return contend_shared(seconds);
    }
    if (argc <= 2 || std::strcmp(argv[2], "fork") != 0) {
        contend(seconds);
        return 0;
    }
    std::printf("ready\n");
    std::fflush(stdout);
    std::string line;
    if (!std::getline(std::cin, line)) {
        return 1;
    }
    for (int child = 0; child < 2; ++child) {
        if (fork() == 0) {
            contend(seconds);
            _exit(0);
        }
    }
    while (wait(nullptr) > 0) {
    }
    std::printf("exited\n");
    std::fflush(stdout);
    while (std::getline(std::cin, line)) {
    }
    return 0;
}
