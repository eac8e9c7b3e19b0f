// The rwsem-xadd model, policies 3.15 .. 4.8: kernel/locking/
// rwsem-xadd.c of those versions (rwsem_down_read_failed,
// rwsem_down_write_failed, __rwsem_do_wake, rwsem_optimistic_spin). The
// writer's optimistic spin emits contention_begin(WRITE|SPIN), which the
// kernel rwsem cannot (it is only visible there with fentry); the rest keeps
// the kernel's tracepoint placement.
#include "reflock/rwsem.h"

#include "reflock/detail/memory_order.h"
#include "reflock/detail/probes.h"
#include "reflock/detail/rwsem_bits.h"
#include "reflock/hooks.h"

namespace reflock {

using namespace detail::orders;
using namespace detail::xadd;
using detail::bump;
using detail::my_counters;

// __rwsem_do_wake(): wake the front writer (not granting it the lock, so
// others may steal it), or grant the lock to the readers at the front.
void RwSem::xadd_do_wake(WakeType type, detail::WakeQueue& wake)
{
    detail::Waiter* waiter = waiters_.front();
    if (waiter->write) {
        if (type == WakeType::Any)
            wake.add(waiter->slot);
        return;
    }
    // Writers might steal the lock before we grant it to the next reader:
    // grant one read lock first, and back off if a writer got in.
    std::int64_t adjustment = 0;
    if (type != WakeType::ReadOwned) {
        adjustment = kActiveReadBias;
        for (;;) {
            const std::int64_t old = count_.fetch_add(adjustment, seq_cst);
            if (old >= kWaitingBias)
                break;
            // A writer stole the lock. Undo our grant; retry only if it has gone.
            if ((count_.fetch_add(-adjustment, seq_cst) - adjustment) & kActiveMask)
                return;
        }
        // 4.8+: reader-owned now; tell spinners early, under the first reader's name.
        if (traits_.reader_owned_mark)
            owner_.store(reader_owner_word(waiter->tid), std::memory_order_release);
    }
    // Grant read locks to every reader at the front of the queue.
    std::int64_t woken = 0;
    for (detail::Waiter* w = waiter; w && !w->write; w = w->next)
        ++woken;
    adjustment = woken * kActiveReadBias - adjustment;
    detail::Waiter* w = waiters_.front();
    for (std::int64_t i = 0; i < woken; ++i) {
        detail::Waiter* next = w->next;
        detail::ThreadSlot* slot = w->slot;
        waiters_.remove(w);
        w->granted.store(true, std::memory_order_release);  // w may vanish from here on
        wake.add(slot);
        w = next;
    }
    if (waiters_.empty())
        adjustment -= kWaitingBias;  // hit end of list: no waiters left
    if (adjustment)
        count_.fetch_add(adjustment, seq_cst);
}

// rwsem_wake(): from up_read/up_write when waiters exist and nothing is active.
void RwSem::xadd_wake()
{
    detail::WakeQueue wake;
    if (traits_.wake_skipped_for_spinner && osq_.is_locked()) {
        // A spinner will take the lock; whoever holds wait_lock will see the
        // released count. Only wake if that is free (4.2, 59aabfc7e959).
        if (!wait_lock_.try_lock())
            return;
    } else {
        wait_lock_.lock();
    }
    if (!waiters_.empty())
        xadd_do_wake(WakeType::Any, wake);
    wait_lock_.unlock();
    wake.wake_all();
}

void RwSem::xadd_down_read_slow()
{
    bump(my_counters().contended);
    detail::trace_begin(this, LCB_F_READ);
    detail::Waiter waiter;
    waiter.slot = &detail::self();
    waiter.tid = detail::self_tid();
    waiter.write = false;
    detail::WakeQueue wake;
    {
        detail::WaitLockGuard guard(wait_lock_);
        std::int64_t adjustment = -kActiveReadBias;
        if (waiters_.empty())
            adjustment += kWaitingBias;
        waiters_.push_back(&waiter);
        const std::int64_t count = count_.fetch_add(adjustment, seq_cst) + adjustment;
        // No active lock: wake the front of the queue. No writer and we are the
        // first waiter: wake ourselves to join the active readers.
        if (count == kWaitingBias || (count > kWaitingBias && adjustment != -kActiveReadBias))
            xadd_do_wake(WakeType::Any, wake);
    }
    wake.wake_all();
    while (!waiter.granted.load(acquire)) {
        detail::hook(HookPoint::BeforeSleep, this);
        waiter.slot->parker.park();
    }
    detail::trace_end(this, 0);
}

bool RwSem::xadd_try_write_lock(std::int64_t count)
{
    std::int64_t expected = kWaitingBias;
    if (count != kWaitingBias || !count_.compare_exchange_strong(expected, kActiveWriteBias, seq_cst, relaxed))
        return false;
    if (!waiters_.singular())
        count_.fetch_add(kWaitingBias, seq_cst);
    return true;
}

bool RwSem::xadd_try_write_lock_unqueued()
{
    std::int64_t count = count_.load(relaxed);
    while (count == 0 || count == kWaitingBias)
        if (count_.compare_exchange_weak(count, count + kActiveWriteBias, seq_cst, relaxed))
            return true;
    return false;
}

// rwsem_spin_on_owner(): spin while `owner` holds the lock and runs.
bool RwSem::xadd_spin_on_owner(std::uint32_t owner, detail::SpinBudget& budget, SpinFail& why)
{
    detail::hook(HookPoint::SpinOnOwner, this);
    if (!detail::spin_while_owner(
            owner, [&] { return owner_tid() == owner; }, budget, why))
        return false;
    if (traits_.new_writer_stops_spin) {  // 3.16-rc2, 3.16: "return sem->owner == NULL"
        if (owner_tid() != 0) {
            why = SpinFail::OwnerChanged;
            return false;
        }
        return true;
    }
    if (owner_tid() != 0)
        return true;  // new owner, continue spinning
    // The owner left. 4.1-4.7: the lock could be free or held by readers -
    // or the owner is between clearing owner and releasing the count.
    const std::int64_t count = count_.load(relaxed);
    if (count == 0 || count == kWaitingBias)
        return true;
    detail::hook(HookPoint::SpinOwnerNull, this);
    if (traits_.stop_on_null_owner_busy_count) {
        why = SpinFail::OwnerNullCountBusy;
        return false;
    }
    return true;
}

// 4.8+: `owner` carries READER_OWNED (readers hold the lock, or held it last).
bool RwSem::reader_marked(SpinFail& why) const noexcept
{
    if (!traits_.reader_owned_mark || !(owner_.load(relaxed) & kReaderOwned))
        return false;
    why = SpinFail::ReaderOwned;
    return true;
}

bool RwSem::xadd_optimistic_spin(SpinFail& why)
{
    detail::SpinBudget budget;
    // rwsem_can_spin_on_owner(). 4.8+: readers (now or earlier) marked the owner.
    if (reader_marked(why))
        return false;
    if (const std::uint32_t owner = owner_tid()) {
        if (!detail::owner_on_cpu(owner)) {
            why = SpinFail::OwnerOffCpu;
            return false;
        }
    } else if (!traits_.spin_without_owner) {
        if (traits_.stop_on_null_owner_busy_count || traits_.wake_skipped_for_spinner) {
            // 4.x: no owner and an active count: readers may hold it.
            if (count_.load(relaxed) & kActiveMask) {
                why = SpinFail::OwnerNullCountBusy;
                return false;
            }
        } else {  // 3.16: no owner, no spinning
            why = SpinFail::NoOwner;
            return false;
        }
    }
    if (!osq_.lock(budget)) {
        why = SpinFail::BudgetExhausted;
        return false;
    }
    bool taken = false;
    for (;;) {
        // 4.8+ rwsem_spin_on_owner(): a reader mark ends the spin before any
        // trylock, even when the readers have gone and the lock is free.
        if (reader_marked(why))
            break;
        const std::uint32_t owner = owner_tid();
        if (owner && !xadd_spin_on_owner(owner, budget, why))
            break;
        if (xadd_try_write_lock_unqueued()) {
            taken = true;
            break;
        }
        // No owner: readers, a writer that has not set owner yet, or one that
        // is releasing. The kernel checks need_resched() only here.
        if (!owner) {
            if (count_.load(relaxed) & kActiveMask)
                detail::hook(HookPoint::SpinOwnerNull, this);
            if (budget.exhausted(why))
                break;
        }
        detail::cpu_relax();
    }
    osq_.unlock();
    return taken;
}

void RwSem::xadd_down_write_slow()
{
    auto& counters = my_counters();
    bump(counters.contended);
    // Undo the write bias from the fast path: we are not active.
    std::int64_t count = count_.fetch_add(-kActiveWriteBias, seq_cst) - kActiveWriteBias;
    SpinFail why = SpinFail::BudgetExhausted;
    if (traits_.writer_spins) {
        detail::hook(HookPoint::SpinBegin, this);
        detail::spin_begin(this, LCB_F_WRITE);
        if (xadd_optimistic_spin(why)) {
            detail::spin_succeeded(this);
            return;
        }
        detail::hook(HookPoint::SpinFailed, this);
    }

    detail::Waiter waiter;
    waiter.slot = &detail::self();
    waiter.tid = detail::self_tid();
    wait_lock_.lock();
    const bool waiting = !waiters_.empty();  // threads queued before us
    waiters_.push_back(&waiter);
    if (traits_.writer_spins)
        detail::spin_failed_queue(this, LCB_F_WRITE, why);
    else
        detail::trace_begin(this, LCB_F_WRITE);
    if (waiting) {
        count = count_.load(seq_cst);
        // Waiters before us and no active writer: the lock is read-owned, so
        // wake the readers queued ahead of us.
        if (count > kWaitingBias) {
            detail::WakeQueue wake;
            xadd_do_wake(WakeType::Readers, wake);
            wait_lock_.unlock();
            wake.wake_all();
            wait_lock_.lock();
        }
    } else {
        count = count_.fetch_add(kWaitingBias, seq_cst) + kWaitingBias;
    }
    while (!xadd_try_write_lock(count)) {
        wait_lock_.unlock();
        // Block until there are no active lockers.
        do {
            detail::hook(HookPoint::BeforeSleep, this);
            waiter.slot->parker.park();
            detail::hook(HookPoint::Woken, this);
        } while ((count = count_.load(seq_cst)) & kActiveMask);
        wait_lock_.lock();
    }
    waiters_.remove(&waiter);
    wait_lock_.unlock();
    detail::trace_end(this, 0);
}

}  // namespace reflock
