// The test program (userlock_prog.cpp), run directly or under `lockscope
// record` (test_program.h): its protocol's lines, and the independent futex
// observer (futex_observer.bpf.c) that counts its waits per lock.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "test_program.h"

struct futex_observer_bpf;

namespace lockscope::userlock_test {

constexpr int kObserved = 8;  // futex_observer.bpf.c's OBSERVED_RANGES

struct LockRange {
    uint64_t address = 0;
    uint64_t bytes = 0;
};

// The locks whose waits the observer counts (as the program prints them),
// and the name of their rows.
inline const std::map<std::string, std::string> kRowNames = {{"g_cache_lock", "g_cache_lock"},
                                                             {"g_stats_lock", "g_stats_lock"},
                                                             {"Cache::get", "pthread_mutex@Cache::get"},
                                                             {"g_table_lock", "g_table_lock"}};

// Why `recorded` waits of `lock` do not agree with the observer's within
// 2% (or are too few to tell), or "" where they do; prints both.
std::string disagreement(const std::string& lock, uint64_t recorded, uint64_t observed);

// "lock NAME ADDRESS SIZE" lines up to "ready": whether it came.
bool read_locks(test::Program& program, std::map<std::string, LockRange>& locks, int timeout_ms);

// "contended NAME N" lines up to "done": whether it came. `between` (with
// `arg`) runs between reads, each read then waiting for no line.
bool read_until_done(test::Program& program, std::map<std::string, long>& contended, int timeout_ms,
                     void (*between)(void*) = nullptr, void* arg = nullptr);

// The observer's own timing of one lock's futex waits (entry to exit) and
// their split; raced_ns: the off-CPU time of sleeps woken while their
// sleeper was still on its CPU, which two programs may split differently.
struct ObservedTimes {
    uint64_t wait_ns = 0;
    uint64_t asleep_ns = 0;
    uint64_t runnable_ns = 0;
    uint64_t woken = 0;
    uint64_t raced_ns = 0;
};

// Counts the futex waits (FUTEX_WAIT, FUTEX_WAIT_BITSET) of one process on
// each of the given address ranges, from construction to stop().
class FutexObserver {
public:
    FutexObserver(pid_t tgid, const std::map<std::string, LockRange>& locks);
    ~FutexObserver();
    FutexObserver(const FutexObserver&) = delete;
    FutexObserver& operator=(const FutexObserver&) = delete;

    const std::string& failure() const { return failure_; }  // empty once attached
    std::map<std::string, uint64_t> stop();                  // detaches; the waits per lock
    std::map<std::string, ObservedTimes> times() const;      // after stop(): per lock

private:
    futex_observer_bpf* skel_ = nullptr;
    std::vector<std::string> names_;
    std::string failure_;
};

}  // namespace lockscope::userlock_test
