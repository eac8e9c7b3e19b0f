// reflock::Mutex46, following kernel/locking/mutex.c of 4.6
// (__mutex_lock_common, mutex_optimistic_spin, mutex_spin_on_owner,
// __mutex_unlock_common_slowpath) with the x86 fast paths (decl/incl on the
// count); kernel function names are kept in comments where the code mirrors
// them. Events as reflock::Mutex: B(MUTEX|SPIN) then E, or B(MUTEX) ... E.
#include "reflock/mutex46.h"

#include "reflock/detail/memory_order.h"
#include "reflock/detail/probes.h"
#include "reflock/hooks.h"

namespace reflock {

using namespace detail::orders;
using detail::bump;
using detail::my_counters;

namespace {
constexpr unsigned kMutex46Kind = LCB_F_MUTEX;
}  // namespace

void Mutex46::lock() noexcept
{
    if (count_.fetch_sub(1, acquire) - 1 < 0)
        lock_slow();                            // __mutex_fastpath_lock
    owner_.store(detail::self_tid(), relaxed);  // mutex_set_owner
    bump(my_counters().acquisitions);
}

bool Mutex46::try_lock() noexcept
{
    std::int32_t expected = 1;
    if (!count_.compare_exchange_strong(expected, 0, acquire, relaxed))
        return false;
    owner_.store(detail::self_tid(), relaxed);
    bump(my_counters().acquisitions);
    return true;
}

void Mutex46::unlock() noexcept
{
    owner_.store(0, release);  // mutex_clear_owner, before the count is released
    detail::release_window(release_window_ns_);
    detail::hook(HookPoint::MutexOwnerCleared, this);
    if (count_.fetch_add(1, release) + 1 <= 0)
        unlock_slow();  // __mutex_fastpath_unlock
}

// __mutex_unlock_common_slowpath(): release first, then wake the first waiter
// (who must still win the count against spinners: no handoff).
void Mutex46::unlock_slow() noexcept
{
    count_.store(1, release);
    detail::ThreadSlot* next = nullptr;
    wait_lock_.lock();
    if (detail::Waiter* first = waiters_.front())
        next = first->slot;
    wait_lock_.unlock();
    if (next)
        next->parker.unpark();
}

// mutex_spin_on_owner(): true when the owner changed - to anyone, or to no
// one with the count still held - false to stop.
bool Mutex46::spin_on_owner(std::uint32_t owner, detail::SpinBudget& budget, SpinFail& why) noexcept
{
    detail::hook(HookPoint::SpinOnOwner, this);
    return detail::spin_while_owner(
        owner, [&] { return owner_.load(acquire) == owner; }, budget, why);
}

bool Mutex46::optimistic_spin(SpinFail& why) noexcept
{
    detail::SpinBudget budget;
    // No owner recorded is worth spinning for.
    if (!detail::start_spin(osq_, owner_.load(relaxed), budget, why))
        return false;
    bool taken = false;
    for (;;) {
        const std::uint32_t owner = owner_.load(acquire);
        if (owner && !spin_on_owner(owner, budget, why))
            break;
        // mutex_try_to_acquire(): only a released count is worth a cmpxchg.
        std::int32_t expected = 1;
        if (count_.load(relaxed) == 1 && count_.compare_exchange_strong(expected, 0, acquire, relaxed)) {
            taken = true;
            break;
        }
        if (!owner && count_.load(relaxed) != 1)
            detail::hook(HookPoint::SpinOwnerNull, this);
        // The kernel checks need_resched() here only without an owner; owners
        // that keep changing under us would make it notice too.
        if (budget.exhausted(why))
            break;
        detail::cpu_relax();
    }
    osq_.unlock();
    return taken;
}

void Mutex46::lock_slow() noexcept
{
    auto& counters = my_counters();
    bump(counters.contended);
    detail::hook(HookPoint::SpinBegin, this);
    detail::spin_begin(this, kMutex46Kind);
    SpinFail why = SpinFail::BudgetExhausted;
    if (optimistic_spin(why)) {
        detail::spin_succeeded(this);
        return;
    }
    wait_lock_.lock();
    // Once more, only if the count is free, to spare an xchg.
    if (count_.load(relaxed) == 1 && count_.exchange(0, acquire) == 1) {
        wait_lock_.unlock();
        detail::spin_succeeded(this);
        return;
    }
    detail::Waiter waiter;
    waiter.slot = &detail::self();
    waiter.tid = detail::self_tid();
    waiters_.push_back(&waiter);
    detail::hook(HookPoint::SpinFailed, this);
    detail::spin_failed_queue(this, kMutex46Kind, why);
    // xchg to -1 so that the releaser knows to wake the others; only a
    // non-negative count is worth the xchg. A woken waiter does not spin.
    while (!(count_.load(relaxed) >= 0 && count_.exchange(-1, acquire) == 1)) {
        wait_lock_.unlock();
        detail::hook(HookPoint::BeforeSleep, this);
        waiter.slot->parker.park();
        detail::hook(HookPoint::Woken, this);
        wait_lock_.lock();
    }
    waiters_.remove(&waiter);
    if (waiters_.empty())
        count_.store(0, relaxed);  // no waiters left: plain "locked"
    wait_lock_.unlock();
    detail::trace_end(this, 0);
}

}  // namespace reflock
