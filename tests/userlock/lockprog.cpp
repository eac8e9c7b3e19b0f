// A program with one global mutex and two heap mutexes, both taken by
// Table::update (two locks of one name), four threads contending on each
// for the time given (seconds, default 1). The test build strips it, as
// Debian ships its binaries, and keeps its symbols in a separate debug file
// (tests/userlock/CMakeLists.txt).
//
// `lockprog SECONDS fork`: prints "ready", and on a line on stdin forks two
// processes (no exec) that contend as above and exit; once both have, prints
// "exited" and exits when stdin closes.
#include <pthread.h>
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

namespace {

void contend(double seconds)
{
    auto* first = new Table;
    auto* second = new Table;
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            while (std::chrono::steady_clock::now() < end) {
                hold(&g_stripped_lock);
                first->update();
                second->update();
            }
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    delete first;
    delete second;
}

}  // namespace

int main(int argc, char** argv)
{
    const double seconds = argc > 1 ? std::atof(argv[1]) : 1.0;
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
