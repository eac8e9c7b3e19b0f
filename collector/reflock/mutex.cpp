// Slow paths of reflock::Mutex, following kernel/locking/mutex.c as of 6.x
// (__mutex_lock_common, mutex_optimistic_spin, __mutex_unlock_slowpath);
// kernel function names are kept in comments where the code mirrors them.
#include "reflock/mutex.h"

#include "reflock/detail/probes.h"
#include "reflock/hooks.h"

namespace reflock {

using detail::bump;
using detail::my_counters;

namespace {
constexpr unsigned kKind = LCB_F_MUTEX;
}  // namespace

bool Mutex::try_lock() noexcept
{
    std::uint64_t expected = 0;
    const bool got =
        owner_.compare_exchange_strong(expected, self_word(), std::memory_order_acquire, std::memory_order_relaxed) ||
        trylock_common(false);
    if (got)
        bump(my_counters().acquisitions);
    return got;
}

// __mutex_trylock_common(): takes a free lock keeping its flags, picks up a
// lock handed to us, or (handoff) asks the owner to hand it to us next.
bool Mutex::trylock_common(bool handoff, std::uint32_t* owner_out) noexcept
{
    const std::uint64_t me = self_word();
    std::uint64_t owner = owner_.load(std::memory_order_relaxed);
    for (;;) {
        std::uint64_t flags = owner & kFlags;
        std::uint64_t task = owner & ~kFlags;
        if (task) {
            if (flags & kPickup) {
                if (task != me)
                    break;
                flags &= ~kPickup;
            } else if (handoff) {
                if (flags & kHandoff)
                    break;
                flags |= kHandoff;
            } else {
                break;
            }
        } else {
            task = me;
        }
        if (owner_.compare_exchange_weak(owner, task | flags, std::memory_order_acquire, std::memory_order_relaxed)) {
            if (task == me)
                return true;
            bump(my_counters().handoffs);
            detail::hook(HookPoint::MutexHandoffSet, this);
            break;
        }
    }
    if (owner_out)
        *owner_out = static_cast<std::uint32_t>((owner & ~kFlags) >> kOwnerShift);
    return false;
}

// mutex_spin_on_owner(): true if the owner changed (spin on), false to stop.
// Unlike rwsem 4.x it does not care whether the new owner is NULL: a
// released mutex is worth a trylock.
bool Mutex::spin_on_owner(std::uint32_t owner, detail::Waiter* waiter, detail::SpinBudget& budget,
                          SpinFail& why) noexcept
{
    detail::hook(HookPoint::SpinOnOwner, this);
    while (owner_tid() == owner) {
        if (!detail::owner_on_cpu(owner)) {
            why = SpinFail::OwnerOffCpu;
            return false;
        }
        if (budget.exhausted()) {
            why = SpinFail::BudgetExhausted;
            return false;
        }
        // A spinning waiter that is no longer first lets the first one have it.
        if (waiter && waiters_.front() != waiter) {
            why = SpinFail::Handoff;
            return false;
        }
        detail::cpu_relax();
    }
    return true;
}

// mutex_optimistic_spin(): a waiter (woken first waiter) spins without the
// OSQ, since it already holds its place in the wait queue.
bool Mutex::optimistic_spin(detail::Waiter* waiter, SpinFail& why) noexcept
{
    detail::SpinBudget budget;
    if (!waiter) {
        // An unowned mutex is worth spinning for.
        if (!detail::start_spin(osq_, owner_tid(), budget, why))
            return false;
    }
    bool taken = false;
    for (;;) {
        std::uint32_t owner = 0;
        if (trylock_common(false, &owner)) {
            taken = true;
            break;
        }
        if (!spin_on_owner(owner, waiter, budget, why))
            break;
        // Owners keep changing under us: the kernel would notice need_resched().
        if (budget.exhausted()) {
            why = SpinFail::BudgetExhausted;
            break;
        }
        detail::cpu_relax();
    }
    if (!waiter)
        osq_.unlock();
    return taken;
}

void Mutex::lock_slow() noexcept
{
    auto& counters = my_counters();
    bump(counters.contended);
    detail::hook(HookPoint::SpinBegin, this);
    detail::spin_begin(this, kKind);
    SpinFail why = SpinFail::BudgetExhausted;
    if (trylock_common(false) || optimistic_spin(nullptr, why)) {
        detail::spin_succeeded(this);
        bump(counters.acquisitions);
        return;
    }

    wait_lock_.lock();
    if (trylock_common(false)) {  // the owner left while we took wait_lock
        wait_lock_.unlock();
        detail::spin_succeeded(this);
        bump(counters.acquisitions);
        return;
    }
    detail::Waiter waiter;
    waiter.slot = &detail::self();
    waiter.tid = detail::self_tid();
    waiters_.push_back(&waiter);
    if (waiters_.front() == &waiter)
        owner_.fetch_or(kWaiters, std::memory_order_seq_cst);
    detail::hook(HookPoint::SpinFailed, this);
    detail::spin_failed_queue(this, kKind, why);

    bool spinning = false;  // the current phase is a spin phase (decides what the final end closes)
    for (;;) {
        // Under wait_lock we are serialised against unlock's handoff: pick it up.
        if (trylock_common(false))
            goto acquired;
        wait_lock_.unlock();

        detail::hook(HookPoint::BeforeSleep, this);
        waiter.slot->parker.park();
        detail::hook(HookPoint::Woken, this);

        {
            const bool first = waiters_.front() == &waiter;
            // __mutex_trylock_or_handoff(): a woken first waiter that finds the lock
            // taken asks for a handoff.
            if (trylock_common(first))
                break;
            if (first) {
                detail::spin_begin(this, kKind);
                spinning = true;
                if (optimistic_spin(&waiter, why))
                    break;
                spinning = false;
                detail::hook(HookPoint::SpinFailed, this);
                detail::spin_failed_queue(this, kKind, why);
            }
        }
        wait_lock_.lock();
    }
    wait_lock_.lock();
acquired:
    waiters_.remove(&waiter);
    if (waiters_.empty())
        owner_.fetch_and(~kFlags, std::memory_order_relaxed);  // __mutex_remove_waiter
    wait_lock_.unlock();
    if (spinning)
        detail::spin_succeeded(this);
    else
        detail::trace_end(this, 0);
    bump(counters.acquisitions);
}

// __mutex_handoff(): give the lock to `tid` (keeping WAITERS), marked PICKUP.
void Mutex::handoff_to(std::uint32_t tid) noexcept
{
    std::uint64_t owner = owner_.load(std::memory_order_relaxed);
    for (;;) {
        std::uint64_t next = (owner & kWaiters) | (std::uint64_t{tid} << kOwnerShift);
        if (tid)
            next |= kPickup;
        if (owner_.compare_exchange_weak(owner, next, std::memory_order_release, std::memory_order_relaxed))
            return;
    }
}

void Mutex::unlock_slow() noexcept
{
    std::uint64_t owner = owner_.load(std::memory_order_relaxed);
    for (;;) {
        if (owner & kHandoff)
            break;
        // Release but keep the flags: WAITERS stays set for the next unlocker.
        if (owner_.compare_exchange_weak(owner, owner & kFlags, std::memory_order_release, std::memory_order_relaxed)) {
            if (owner & kWaiters)
                break;
            return;
        }
    }
    detail::ThreadSlot* next = nullptr;
    std::uint32_t next_tid = 0;
    wait_lock_.lock();
    if (detail::Waiter* first = waiters_.front()) {
        next = first->slot;
        next_tid = first->tid;
    }
    if (owner & kHandoff)
        handoff_to(next_tid);
    wait_lock_.unlock();
    if (next)
        next->parker.unpark();
}

}  // namespace reflock
