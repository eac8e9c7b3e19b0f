// Test hooks: named points inside the lock algorithms where a test can run
// code in the thread that reached them - typically block it until another
// thread has made a decision - to drive an interleaving deterministically.
// Costs one relaxed load when no hook is installed.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

namespace reflock {

enum class HookPoint : std::uint8_t {
    SpinBegin,            // a writer/mutex spin phase starts (after contention_begin SPIN)
    SpinOnOwner,          // a spinner starts watching a running owner (spin_on_owner entry)
    SpinOwnerNull,        // a spinner saw no owner while the lock word was still busy
    SpinFailed,           // a spin phase failed; the thread will queue (reason in Counters)
    BeforeSleep,          // a queued waiter is about to park
    Woken,                // a queued waiter returned from park, before it retries
    UpWriteOwnerCleared,  // rwsem up_write: owner cleared, count not yet released
    MutexOwnerCleared,    // 4.6 mutex_unlock: owner cleared, count not yet released
    MutexHandoffSet,      // a first mutex waiter set HANDOFF
};

using Hook = std::function<void(HookPoint point, const void* lock)>;

// Installs (or with an empty function removes) the process-wide hook. Not
// synchronised with threads inside lock operations: install before starting
// them, remove after joining them.
void set_test_hook(Hook hook);

namespace detail {
extern std::atomic<const Hook*> g_hook;
inline void hook(HookPoint point, const void* lock)
{
    if (const Hook* h = g_hook.load(std::memory_order_acquire)) [[unlikely]]
        (*h)(point, lock);
}
}  // namespace detail

}  // namespace reflock
