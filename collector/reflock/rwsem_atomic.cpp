// The v5.3-rework model, policies 5.3-rc-tip, 5.4, 5.19 and 6.3:
// kernel/locking/rwsem.c (rwsem_down_write_slowpath, rwsem_down_read_slowpath,
// rwsem_mark_wake, rwsem_optimistic_spin, rwsem_try_write_lock) as of 5.19,
// with the earlier releases' differences switched by PolicyTraits, including
// 5.3-5.10's reader optimistic spinning and its adaptive disabling (as in
// v5.4), and 6.3's direct handoff. What is not modelled (RT tasks, signals
// ...) is listed in README.md.
#include "reflock/rwsem.h"

#include "reflock/detail/memory_order.h"
#include "reflock/detail/probes.h"
#include "reflock/detail/rwsem_bits.h"
#include "reflock/hooks.h"

#include <algorithm>

namespace reflock {

using namespace detail::orders;
using namespace detail::atomic;
using detail::bump;
using detail::my_counters;

namespace {
constexpr std::int64_t kMaxReadersWakeup = 0x100;

std::uint64_t handoff_deadline() noexcept
{
    return detail::mono_ns() + Tuning::rwsem_handoff_timeout_ns.load(relaxed);
}
}  // namespace

// rwsem_owner_state(): `nonspinnable` is the bit that stops this spinner
// (writers: WR_NONSPINNABLE, readers: RD_NONSPINNABLE).
RwSem::OwnerState RwSem::owner_state(std::uint64_t word, std::uint64_t nonspinnable) noexcept
{
    if (word & nonspinnable)
        return OwnerState::NonSpinnable;
    if (word & kReaderOwned)
        return OwnerState::Reader;
    return (word >> kOwnerShift) ? OwnerState::Writer : OwnerState::Null;
}

// rwsem_mark_wake(): wake the front writer (without granting), or grant the
// lock to the readers in the queue - all of them, phase-fair, skipping writers.
void RwSem::atomic_mark_wake(WakeType type, detail::WakeQueue& wake)
{
    detail::Waiter* waiter = waiters_.front();
    if (waiter->write) {
        if (type != WakeType::Any)
            return;
        wake.add(waiter->slot);
        const std::int64_t count = count_.load(seq_cst);
        if (!traits_.direct_handoff || (count & kLockMask) || !(count & kFlagHandoff))
            return;
        // 6.3: free, and HANDOFF keeps everyone else out while we hold wait_lock:
        // hand it to the writer now (early handoff; rwsem_del_waiter()).
        owner_.store(std::uint64_t{waiter->tid} << kOwnerShift, release);
        count_.fetch_add(kWriterLocked - kFlagHandoff, seq_cst);
        waiters_.remove(waiter);
        if (waiters_.empty())
            count_.fetch_and(~(kFlagHandoff | kFlagWaiters), seq_cst);
        waiter->granted.store(true, release);  // the waiter may vanish from here on
        return;
    }
    std::int64_t adjustment = 0;
    std::int64_t oldcount = 0;
    if (type != WakeType::ReadOwned) {
        // Grant the first read lock before counting readers, to back off early
        // if a writer stole the lock.
        adjustment = kReaderBias;
        oldcount = count_.fetch_add(adjustment, seq_cst);
        if (oldcount & kWriterMask) {
            // Waited too long for writers to let go: request a handoff.
            if (detail::mono_ns() > waiter->timeout_ns) {
                if (!(oldcount & kFlagHandoff)) {
                    adjustment -= kFlagHandoff;
                    bump(my_counters().handoffs);
                }
                waiter->handoff_set.store(true, relaxed);
                if (traits_.direct_handoff)
                    set_nonspinnable();  // 6.3: a reader's handoff ends all spinning
            }
            count_.fetch_add(-adjustment, seq_cst);
            return;
        }
        // Reader-owned now: tell spinners early, under the first reader's name.
        owner_.store(reader_owner_word(waiter->tid), release);
    }
    detail::Waiter* granted[kMaxReadersWakeup];
    std::int64_t woken = 0;
    for (detail::Waiter* w = waiter; w && woken < kMaxReadersWakeup; w = w->next)
        if (!w->write)
            granted[woken++] = w;
    for (std::int64_t i = 0; i < woken; ++i)
        waiters_.remove(granted[i]);

    adjustment = woken * kReaderBias - adjustment;
    if (waiters_.empty()) {
        adjustment -= kFlagWaiters;
        if (oldcount & kFlagHandoff)
            adjustment -= kFlagHandoff;
    } else if (woken && (oldcount & kFlagHandoff)) {
        adjustment -= kFlagHandoff;  // a reader got it: no need to force writers out any more
    }
    if (adjustment)
        count_.fetch_add(adjustment, seq_cst);
    for (std::int64_t i = 0; i < woken; ++i) {
        detail::ThreadSlot* slot = granted[i]->slot;
        granted[i]->granted.store(true, release);  // the waiter may vanish from here on
        wake.add(slot);
    }
}

// rwsem_cond_wake_waiter(): wake the front waiters if no writer holds the lock.
void RwSem::atomic_cond_wake(std::int64_t count, detail::WakeQueue& wake)
{
    if (count & kWriterMask)
        return;
    if (count & kReaderMask) {
        atomic_mark_wake(WakeType::Readers, wake);
    } else {
        clear_nonspinnable();
        atomic_mark_wake(WakeType::Any, wake);
    }
}

void RwSem::atomic_wake(WakeType type)
{
    detail::WakeQueue wake;
    {
        detail::WaitLockGuard guard(wait_lock_);
        if (!waiters_.empty())
            atomic_mark_wake(type, wake);
    }
    wake.wake_all();
}

bool RwSem::atomic_try_read_lock_unqueued()
{
    if (count_.load(relaxed) & (kWriterMask | kFlagHandoff))
        return false;
    if (!(count_.fetch_add(kReaderBias, acquire) & (kWriterMask | kFlagHandoff))) {
        set_reader_owned();
        return true;
    }
    count_.fetch_add(-kReaderBias, relaxed);  // back out
    return false;
}

// 5.3-5.10 (cf69482d62d9, 5cfd92e12e13): a reader in the slow path spins on a
// running writer unless RD_NONSPINNABLE is set, then tries once more if a new
// reader phase began meanwhile (rwsem_reader_phase_trylock()). The caller's
// READER_BIAS is in the count; a spin takes it out first (adjustment = 0).
bool RwSem::atomic_reader_spin(std::int64_t& adjustment, SpinFail& why)
{
    std::uint64_t last_rowner = owner_.load(relaxed);
    if (!(last_rowner & kReaderOwned))
        last_rowner &= kRdNonSpinnable;
    if (!atomic_can_spin(kRdNonSpinnable, why))
        return false;
    count_.fetch_add(-kReaderBias, seq_cst);  // spin without holding a read bias
    adjustment = 0;
    if (atomic_optimistic_spin(false, why)) {
        if (count_.load(relaxed) & kFlagWaiters)
            atomic_wake(WakeType::ReadOwned);  // bring the queued readers
        return true;
    }
    const std::uint64_t owner = owner_.load(relaxed);
    return (owner & kReaderOwned) && ((owner ^ last_rowner) & ~kOwnerFlags) && atomic_try_read_lock_unqueued();
}

void RwSem::atomic_down_read_slow(std::int64_t count)
{
    std::int64_t adjustment = -kReaderBias;
    const std::int64_t readers = count >> kReaderShift;
    bool spun = false;  // a READ|SPIN phase is open
    SpinFail why = SpinFail::BudgetExhausted;
    if (traits_.reader_spins) {
        bump(my_counters().contended);
        detail::hook(HookPoint::SpinBegin, this);
        detail::spin_begin(this, LCB_F_READ);
        spun = true;
        if (atomic_reader_spin(adjustment, why)) {
            detail::spin_succeeded(this);
            return;
        }
        detail::hook(HookPoint::SpinFailed, this);
    } else if (traits_.reader_steal) {
        // Do not steal from a lock that is very likely reader-owned: a stream of
        // readers would starve a sleeping writer.
        const bool likely_reader_owned =
            (owner_.load(relaxed) & kReaderOwned) && readers > 1 && !(count & kWriterLocked);
        if (!likely_reader_owned && !(count & (kWriterLocked | kFlagHandoff))) {
            set_reader_owned();
            if (readers == 1 && (count & kFlagWaiters))
                atomic_wake(WakeType::ReadOwned);  // first reader in: bring the queued ones
            return;
        }
    }
    detail::Waiter waiter;
    waiter.slot = &detail::self();
    waiter.tid = detail::self_tid();
    waiter.write = false;
    waiter.timeout_ns = handoff_deadline();
    detail::WakeQueue wake;
    {
        detail::WaitLockGuard guard(wait_lock_);
        if (waiters_.empty()) {
            // Queue empty and no writer: our READER_BIAS already holds the lock.
            const std::int64_t blocking = traits_.reader_spins ? (kWriterMask | kFlagHandoff) : kWriterMask;
            if (adjustment && !(count_.load(seq_cst) & blocking)) {
                set_reader_owned();
                if (spun)
                    detail::spin_succeeded(this);
                return;
            }
            adjustment += kFlagWaiters;
        }
        waiters_.push_back(&waiter);
        const std::int64_t now = count_.fetch_add(adjustment, seq_cst) + adjustment;
        atomic_cond_wake(now, wake);
    }
    wake.wake_all();
    if (spun) {
        detail::spin_failed_queue(this, LCB_F_READ, why);
    } else {
        bump(my_counters().contended);
        detail::trace_begin(this, LCB_F_READ);
    }
    while (!waiter.granted.load(acquire)) {
        detail::hook(HookPoint::BeforeSleep, this);
        waiter.slot->parker.park();
    }
    detail::trace_end(this, 0);
}

// rwsem_spin_on_owner(): spin while the same writer owns the lock and runs.
RwSem::OwnerState RwSem::atomic_spin_on_owner(std::uint64_t nonspinnable, detail::SpinBudget* budget, SpinFail& why)
{
    const std::uint64_t word = owner_.load(acquire);
    const OwnerState state = owner_state(word, nonspinnable);
    // 6.3: the lock was handed to us while we were about to spin on it.
    if (traits_.direct_handoff && (word >> kOwnerShift) == detail::self_tid())
        return OwnerState::NonSpinnable;
    if (state != OwnerState::Writer) {
        if (state == OwnerState::NonSpinnable)
            why = SpinFail::NonSpinnable;
        return state;
    }
    const auto owner = static_cast<std::uint32_t>(word >> kOwnerShift);
    detail::hook(HookPoint::SpinOnOwner, this);
    for (;;) {
        // 5.3-rc-tip (4f23dbc1e657 until 91d2a812dfb9): a pending HANDOFF ends
        // the spin at the top of every iteration, even while the owner runs. Only
        // here, while a writer owns the lock: with the owner NULL or readers
        // holding it, the kernel spins on and its trylock refuses the lock.
        if (traits_.handoff_stops_spinners && (count_.load(relaxed) & kFlagHandoff)) {
            why = SpinFail::Handoff;
            return OwnerState::NonSpinnable;
        }
        const std::uint64_t now = owner_.load(acquire);
        if (now != word)
            return owner_state(now, nonspinnable);
        if (!detail::owner_on_cpu(owner)) {
            why = SpinFail::OwnerOffCpu;
            return OwnerState::NonSpinnable;
        }
        if (budget && budget->exhausted()) {
            why = SpinFail::BudgetExhausted;
            return OwnerState::NonSpinnable;
        }
        detail::cpu_relax();
    }
}

bool RwSem::atomic_can_spin(std::uint64_t nonspinnable, SpinFail& why)
{
    const std::uint64_t word = owner_.load(relaxed);
    switch (owner_state(word, nonspinnable)) {
        case OwnerState::NonSpinnable:
            why = SpinFail::NonSpinnable;
            return false;
        case OwnerState::Reader:
            if (traits_.reader_owned_spin)
                return true;
            why = SpinFail::ReaderOwned;
            return false;
        case OwnerState::Writer:
            if (detail::owner_on_cpu(static_cast<std::uint32_t>(word >> kOwnerShift)))
                return true;
            why = SpinFail::OwnerOffCpu;
            return false;
        case OwnerState::Null:
            return true;
    }
    return true;
}

bool RwSem::atomic_try_write_lock_unqueued()
{
    std::int64_t count = count_.load(relaxed);
    while (!(count & (kLockMask | kFlagHandoff)))
        if (count_.compare_exchange_weak(count, count | kWriterLocked, acquire, relaxed))
            return true;
    return false;
}

// rwsem_optimistic_spin(): a writer (wlock) or, 5.3-5.10, a reader.
bool RwSem::atomic_optimistic_spin(bool wlock, SpinFail& why)
{
    const std::uint64_t nonspinnable = wlock ? kWrNonSpinnable : kRdNonSpinnable;
    detail::SpinBudget budget;
    if (!osq_.lock(budget)) {
        why = SpinFail::BudgetExhausted;
        return false;
    }
    bool taken = false;
    OwnerState prev_state = OwnerState::Null;
    std::uint64_t rspin_deadline = 0;
    unsigned loop = 0;
    for (;;) {
        const OwnerState state = atomic_spin_on_owner(nonspinnable, &budget, why);
        if (state == OwnerState::NonSpinnable)
            break;  // why set by spin_on_owner
        if (state == OwnerState::Reader && !traits_.reader_owned_spin) {
            why = SpinFail::ReaderOwned;
            break;
        }
        if (wlock ? atomic_try_write_lock_unqueued() : atomic_try_read_lock_unqueued()) {
            taken = true;
            break;
        }
        if (wlock && state == OwnerState::Reader) {
            // 5.3+ (7d43f1ce9dd0): spin on readers until (10 + readers/2) us, then
            // mark the lock NONSPINNABLE so later writers queue at once.
            if (prev_state != OwnerState::Reader) {
                if (owner_.load(relaxed) & nonspinnable) {
                    why = SpinFail::NonSpinnable;
                    break;
                }
                const std::int64_t readers = std::min<std::int64_t>(count_.load(relaxed) >> kReaderShift, 30);
                rspin_deadline = detail::mono_ns() + static_cast<std::uint64_t>((20 + readers) * 1000 / 2);
                loop = 0;
            } else if (!(++loop & 0xf) && detail::mono_ns() > rspin_deadline) {
                set_nonspinnable();
                why = SpinFail::ReaderOwned;
                break;
            }
        }
        if (state != OwnerState::Writer) {
            if (state == OwnerState::Null && (count_.load(relaxed) & kLockMask))
                detail::hook(HookPoint::SpinOwnerNull, this);
            if (budget.exhausted(why))
                break;
        }
        prev_state = state;
        detail::cpu_relax();
    }
    osq_.unlock();
    return taken;
}

// rwsem_try_write_lock() (5.19, 6eebd5fb2083), under wait_lock.
bool RwSem::atomic_try_write_lock(detail::Waiter& waiter)
{
    if (waiter.granted.load(acquire))
        return true;  // 6.3: handed off, already dequeued
    detail::Waiter* first = waiters_.front();
    std::int64_t count = count_.load(relaxed);
    std::int64_t next;
    do {
        const bool has_handoff = count & kFlagHandoff;
        // Honour the handoff only if the first waiter set it.
        if (has_handoff && first->handoff_set.load(relaxed) && &waiter != first)
            return false;
        next = count;
        if (count & kLockMask) {
            // Any waiter that waited long enough may request the handoff.
            if (has_handoff || detail::mono_ns() < waiter.timeout_ns)
                return false;
            next |= kFlagHandoff;
        } else {
            next |= kWriterLocked;
            next &= ~kFlagHandoff;
            if (waiters_.singular())
                next &= ~kFlagWaiters;
        }
    } while (!count_.compare_exchange_weak(count, next, seq_cst, relaxed));
    if (next & kFlagHandoff) {  // newly set: a pending one returned above
        bump(my_counters().handoffs);
        first->handoff_set.store(true, relaxed);
        return false;
    }
    waiters_.remove(&waiter);
    return true;
}

bool RwSem::atomic_down_write_slow()
{
    bump(my_counters().contended);
    SpinFail why = SpinFail::BudgetExhausted;
    detail::hook(HookPoint::SpinBegin, this);
    detail::spin_begin(this, LCB_F_WRITE);
    if (atomic_can_spin(kWrNonSpinnable, why) && atomic_optimistic_spin(true, why)) {
        detail::spin_succeeded(this);
        return false;
    }
    detail::hook(HookPoint::SpinFailed, this);
    // 5.3-5.10 (5cfd92e12e13): a writer that failed to spin on a lock marked
    // NONSPINNABLE keeps readers from spinning once it owns the lock.
    const bool disable_reader_spin = traits_.reader_spins && (owner_.load(relaxed) & kNonSpinnable);

    detail::Waiter waiter;
    waiter.slot = &detail::self();
    waiter.tid = detail::self_tid();
    waiter.timeout_ns = handoff_deadline();
    wait_lock_.lock();
    waiters_.push_back(&waiter);
    detail::spin_failed_queue(this, LCB_F_WRITE, why);
    if (waiters_.front() != &waiter) {
        detail::WakeQueue wake;
        atomic_cond_wake(count_.load(seq_cst), wake);
        if (!wake.empty()) {  // keep wait_lock hold times short
            wait_lock_.unlock();
            wake.wake_all();
            wait_lock_.lock();
        }
    } else {
        count_.fetch_or(kFlagWaiters, seq_cst);
    }
    while (!atomic_try_write_lock(waiter)) {
        wait_lock_.unlock();
        // 5.4+: the handoff writer spins on an on-CPU writer owner and retries
        // at once if it just released the lock.
        bool retry_now = false;
        if (traits_.handoff_writer_spins && waiter.handoff_set.load(relaxed)) {
            detail::SpinBudget budget;
            SpinFail ignored;
            const bool released = atomic_spin_on_owner(kNonSpinnable, &budget, ignored) == OwnerState::Null;
            if (traits_.direct_handoff) {
                // 6.3: the releaser may be handing the lock over right now: let it
                // finish under wait_lock, then either we own the lock or we sleep.
                if (released && !waiter.granted.load(acquire)) {
                    detail::WaitLockGuard sync(wait_lock_);
                }
                if (waiter.granted.load(acquire))
                    goto handed_off;
            } else {
                retry_now = released;
            }
        }
        if (!retry_now) {
            detail::hook(HookPoint::BeforeSleep, this);
            waiter.slot->parker.park();
            detail::hook(HookPoint::Woken, this);
            if (waiter.granted.load(acquire))
                goto handed_off;
        }
        wait_lock_.lock();
    }
    wait_lock_.unlock();
handed_off:
    detail::trace_end(this, 0);
    return disable_reader_spin;
}

}  // namespace reflock
