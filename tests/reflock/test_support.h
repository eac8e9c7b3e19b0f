// Helpers for driving reflock interleavings from tests.
#pragma once

#include "reflock/counters.h"
#include "reflock/hooks.h"
#include "reflock/oracle.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>

#include <sys/syscall.h>
#include <unistd.h>

namespace reflock::test {

inline std::uint32_t gettid_now()
{
    return static_cast<std::uint32_t>(::syscall(SYS_gettid));
}

// Polls `condition` until it holds or `limit` passes; returns whether it held.
// Used only to wait for another thread's progress, never to decide outcomes.
template <typename F>
bool eventually(F condition, std::chrono::seconds limit = std::chrono::seconds(20))
{
    const auto end = std::chrono::steady_clock::now() + limit;
    while (!condition()) {
        if (std::chrono::steady_clock::now() > end)
            return false;
        std::this_thread::yield();
    }
    return true;
}

// A thread that takes `lock` exclusively once (after `before_lock`, if
// given) and leaves the counters of that episode in `out`.
template <typename Lock, typename F = void (*)()>
std::thread counted_locker(
    Lock& lock, Counters& out, F before_lock = [] {})
{
    return std::thread([&lock, &out, before_lock] {
        before_lock();
        const Counters before = this_thread_counters();
        lock.lock();
        lock.unlock();
        out = this_thread_counters() - before;
    });
}

// Reports every owner on CPU, except to the thread `blind_tid` while `blind`:
// that one thread queues at once instead of spinning.
class BlindWaiterOracle final : public OwnerOracle {
public:
    bool on_cpu(std::uint32_t) const noexcept override { return !(blind.load() && gettid_now() == blind_tid.load()); }
    std::atomic<std::uint32_t> blind_tid{0};
    std::atomic<bool> blind{true};
};

// The blind writer W: counted_locker in a thread the oracle keeps from spinning.
template <typename Lock>
std::thread blind_writer(Lock& lock, BlindWaiterOracle& oracle, Counters& out)
{
    return counted_locker(lock, out, [&oracle] { oracle.blind_tid = gettid_now(); });
}

// One spin phase that failed for `reason`, then the lock taken from the queue.
inline void expect_one_failed_spin(const Counters& c, SpinFail reason, std::string_view policy)
{
    SCOPED_TRACE(std::string(policy));
    EXPECT_EQ(c.spin_attempts, 1u);
    EXPECT_EQ(c.spin_failures, 1u);
    EXPECT_EQ(c.failures(reason), 1u) << to_string(reason);
    EXPECT_EQ(c.acquisitions, 1u);
}

// Sets tunables for one test and restores them (and removes the hook) after.
class TuningScope {
public:
    TuningScope(std::uint64_t spin_budget_ns, std::uint64_t handoff_timeout_ns = 4'000'000)
        : budget_(Tuning::spin_budget_ns.load()), handoff_(Tuning::rwsem_handoff_timeout_ns.load())
    {
        Tuning::spin_budget_ns = spin_budget_ns;
        Tuning::rwsem_handoff_timeout_ns = handoff_timeout_ns;
    }
    ~TuningScope()
    {
        set_test_hook({});
        set_owner_oracle(nullptr);
        Tuning::spin_budget_ns = budget_;
        Tuning::rwsem_handoff_timeout_ns = handoff_;
    }

private:
    std::uint64_t budget_, handoff_;
};

}  // namespace reflock::test
