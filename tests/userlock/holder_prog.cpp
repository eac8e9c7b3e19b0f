// The program the user-lock holder split test records: one pthread mutex,
// g_held_lock, whose holder (SCHED_FIFO, so that the machine's other tasks
// do not preempt it) works with it held on CPU 0 while a waiter on CPU 1
// sleeps on it. MODE says what the holder does with the lock held:
//   alone    works 4 ms of its own CPU time;
//   preempt  the same, while a SCHED_FIFO thread of a higher priority
//            ("preemptor") on CPU 0 takes that CPU half of the time, so that
//            the holder is often preempted with the lock held: the waiter
//            then waits behind a runnable holder;
//   asleep   sleeps 4 ms (nanosleep): the waiter waits behind an asleep holder.
//
// Usage: holder_prog RUN_MS MODE STATS_FILE
// Writes to STATS_FILE what the program saw itself: the waiter's lock calls
// that found the lock taken, and the holder's time holding the lock in wall
// time and on CPU (their difference is the time it held the lock without a
// CPU: preempted, or asleep); and, asleep, how much of the waiter's time in
// its lock calls overlapped the holder's sleeps with the lock held, from
// both threads' own clock readings.
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

// Global, so that its symbol names it.
pthread_mutex_t g_held_lock = PTHREAD_MUTEX_INITIALIZER;

namespace {

std::atomic<bool> g_stop{false};

uint64_t now_ns(clockid_t clock)
{
    timespec ts{};
    clock_gettime(clock, &ts);
    return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

void pin(int cpu, const char* name)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof(set), &set);
    prctl(PR_SET_NAME, name);
}

void sleep_ns(long ns)
{
    timespec ts{0, ns};
    nanosleep(&ts, nullptr);
}

void real_time(int priority)
{
    sched_param param{};
    param.sched_priority = priority;
    if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) != 0) {
        std::fprintf(stderr, "holder_prog: SCHED_FIFO refused (not root?)\n");
        std::exit(2);
    }
}

// A stretch of CLOCK_MONOTONIC time.
struct Span {
    uint64_t begin = 0, end = 0;
};

struct HolderStats {
    uint64_t holds = 0;
    uint64_t held_wall_ns = 0;
    uint64_t held_cpu_ns = 0;
    std::vector<Span> sleeps;  // asleep with the lock held, in order
};

// The time two ordered lists of disjoint spans have in common.
uint64_t overlap_ns(const std::vector<Span>& a, const std::vector<Span>& b)
{
    uint64_t sum = 0;
    for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
        const uint64_t begin = std::max(a[i].begin, b[j].begin), end = std::min(a[i].end, b[j].end);
        if (end > begin) {
            sum += end - begin;
        }
        (a[i].end < b[j].end ? i : j)++;
    }
    return sum;
}

// At real-time priority (so that nothing else on the machine preempts it
// but the preemptor, which has a higher one): holds the lock for 4 ms of its
// own CPU time (or, @asleep, 4 ms asleep), then lets the waiter have it.
void holder(HolderStats& stats, bool asleep)
{
    pin(0, "holder");
    real_time(5);
    while (!g_stop) {
        pthread_mutex_lock(&g_held_lock);
        const uint64_t wall = now_ns(CLOCK_MONOTONIC), cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);
        if (asleep) {
            const uint64_t from = now_ns(CLOCK_MONOTONIC);
            sleep_ns(4000000);
            stats.sleeps.push_back({from, now_ns(CLOCK_MONOTONIC)});
        }
        while (!asleep && now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu < 4000000) {
        }
        pthread_mutex_unlock(&g_held_lock);
        // taken after the unlock, whose wakeup of the waiter ends its wait
        stats.held_wall_ns += now_ns(CLOCK_MONOTONIC) - wall;
        stats.held_cpu_ns += now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
        ++stats.holds;
        sleep_ns(2000000);
    }
}

// Takes the lock as soon as it can, 1 ms after its last turn; keeps the
// times of its lock calls that found the lock taken.
void waiter(uint64_t& contended, std::vector<Span>& waits)
{
    pin(1, "waiter");
    while (!g_stop) {
        if (pthread_mutex_trylock(&g_held_lock) != 0) {
            ++contended;
            const uint64_t from = now_ns(CLOCK_MONOTONIC);
            pthread_mutex_lock(&g_held_lock);
            waits.push_back({from, now_ns(CLOCK_MONOTONIC)});
        }
        pthread_mutex_unlock(&g_held_lock);
        sleep_ns(1000000);
    }
}

// At real-time priority on the holder's CPU: 2 ms of spinning, 2 ms asleep.
void preemptor()
{
    pin(0, "preemptor");
    real_time(10);
    while (!g_stop) {
        const uint64_t start = now_ns(CLOCK_MONOTONIC);
        while (now_ns(CLOCK_MONOTONIC) - start < 2000000) {
        }
        sleep_ns(2000000);
    }
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 4) {
        std::fprintf(stderr, "usage: holder_prog RUN_MS alone|preempt|asleep STATS_FILE\n");
        return 2;
    }
    const long run_ms = std::atol(argv[1]);
    const std::string mode = argv[2];
    if (mode != "alone" && mode != "preempt" && mode != "asleep") {
        std::fprintf(stderr, "holder_prog: MODE is alone, preempt or asleep, not '%s'\n", argv[2]);
        return 2;
    }
    const bool preempt = mode == "preempt";
    HolderStats held;
    uint64_t contended = 0;
    std::vector<Span> waits;
    // room for every turn, so that no allocation lands in a critical section
    held.sleeps.reserve(size_t(run_ms) + 16);
    waits.reserve(size_t(run_ms) + 16);
    std::thread h(holder, std::ref(held), mode == "asleep");
    std::thread w(waiter, std::ref(contended), std::ref(waits));
    std::thread p;
    if (preempt) {
        p = std::thread(preemptor);
    }
    sleep_ns(0);
    timespec run{run_ms / 1000, (run_ms % 1000) * 1000000};
    nanosleep(&run, nullptr);
    g_stop = true;
    h.join();
    w.join();
    if (p.joinable()) {
        p.join();
    }
    FILE* out = std::fopen(argv[3], "w");
    if (out == nullptr) {
        return 1;
    }
    std::fprintf(out, "contended %llu\nholds %llu\nheld_wall_ns %llu\nheld_cpu_ns %llu\nwait_behind_asleep_ns %llu\n",
                 static_cast<unsigned long long>(contended), static_cast<unsigned long long>(held.holds),
                 static_cast<unsigned long long>(held.held_wall_ns), static_cast<unsigned long long>(held.held_cpu_ns),
                 static_cast<unsigned long long>(overlap_ns(held.sleeps, waits)));
    return std::fclose(out) == 0 ? 0 : 1;
}
