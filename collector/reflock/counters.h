// Per-thread lock counters of the reflock replicas.
//
// Every thread that takes the slow path of a reflock lock owns one cache-line
// aligned block of counters; only that thread writes it, so counting costs a
// plain load and store and never bounces a shared line. Readers sum all
// blocks (counters_total()) and subtract snapshots to get a run's numbers.
#pragma once

#include "reflock/spin_fail.h"

#include <array>
#include <cstdint>

namespace reflock {

// A plain snapshot of counters; the sum over threads, or a difference of two.
struct Counters {
    std::uint64_t acquisitions = 0;   // successful lock()s of any reflock lock (fast path included)
    std::uint64_t contended = 0;      // lock()s that missed the fast path (an episode began)
    std::uint64_t spin_attempts = 0;  // spin phases begun (contention_begin with SPIN)
    std::uint64_t spin_successes = 0;
    std::uint64_t spin_failures = 0;  // spin phases that ended with the thread queueing
    std::array<std::uint64_t, kSpinFailReasons> spin_failures_by_reason{};
    std::uint64_t sleeps = 0;    // futex waits that blocked
    std::uint64_t sleep_ns = 0;  // time spent in those futex waits
    std::uint64_t wakeups = 0;   // futex wakes issued by this thread (releaser side)
    // HANDOFF bits this thread set, reserving the lock for a waiter that waited
    // too long: the kernel's rwsem_wlock_handoff + rwsem_rlock_handoff lock
    // events (rwsem 5.3+; a reader's is set by the thread waking it) and the
    // mutex's woken first waiter (4.10+). Older policies never hand off.
    std::uint64_t handoffs = 0;

    std::uint64_t failures(SpinFail reason) const noexcept
    {
        return spin_failures_by_reason[static_cast<std::size_t>(reason)];
    }
    Counters& operator+=(const Counters& other) noexcept;
    Counters& operator-=(const Counters& other) noexcept;
    friend Counters operator-(Counters a, const Counters& b) noexcept { return a -= b; }
    friend Counters operator+(Counters a, const Counters& b) noexcept { return a += b; }
};

// The calling thread's counters since it first used a reflock lock.
Counters this_thread_counters() noexcept;
// The sum over every thread that ever used a reflock lock (live or exited).
// Monotonic: subtract two snapshots to measure an interval.
Counters counters_total() noexcept;

// True while a tracer has both lockscope:contention_begin and
// lockscope:contention_end USDT probes of this process attached (their
// semaphores are non-zero): `lockscope record -p PID` sets them, so a program
// can wait for it before it starts the work to be recorded.
bool usdt_tracer_attached() noexcept;

}  // namespace reflock
