// reflock::RwSem - a replica of the Linux rw_semaphore with the writer-spin
// (and reader) behaviour of a chosen kernel version, so the experiments of
// DESIGN.md replay in user space. Two count models, as the kernel had:
//   - 3.15 .. 4.8: rwsem-xadd (kernel/locking/rwsem-xadd.c): the count holds
//     an active part (readers + writer) and a negative WAITING bias; readers
//     do not record themselves in `owner` until 4.8, which marks it
//     READER_OWNED (and leaves the mark when they leave).
//   - 5.3-rc-tip .. 6.3: the v5.3 rework (kernel/locking/rwsem.c): count bits
//     WRITER_LOCKED / WAITERS / HANDOFF + reader count; `owner` carries
//     READER_OWNED and NONSPINNABLE flags.
// Policies and the kernel code each one follows are listed in rwsem_policy.cpp.
//
// In every version up_write() clears `owner` before it releases the count.
// A spinner that looks in between sees "no owner, count busy" - the 4.7
// regression's trigger. On a small machine that window is nanoseconds; the
// release_window_ns option widens it, modelling the slower release of a big
// machine whose other CPUs hammer the count's cache line.
//
// Meets SharedLockable (std::shared_lock) and Lockable (std::unique_lock).
#pragma once

#include "reflock/detail/osq.h"
#include "reflock/detail/wait_list.h"
#include "reflock/detail/wait_lock.h"

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace reflock {

enum class Policy : std::uint8_t { V3_15, V3_16_Rc2, V3_16, V4_2, V4_7_Hacked, V4_8, V5_3_RcTip, V5_4, V5_19, V6_3 };

std::string_view to_string(Policy policy) noexcept;
std::span<const Policy> all_policies() noexcept;
// "3.15, 3.16-rc2, 3.16, 4.7, 4.7-hacked, 4.8, 5.3-rc-tip, 5.4, 5.19, 6.3"
std::string policy_names();
// Throws std::invalid_argument("unknown rwsem policy 'x' (valid: ...)").
Policy parse_policy(std::string_view name);

// What a policy does, as switches the algorithm reads.
struct PolicyTraits {
    bool xadd_model;                     // 3.15-4.8 count model, else the 5.3 rework's
    bool writer_spins;                   // optimistic spinning at all (3.16+)
    bool spin_without_owner;             // 3.16-rc2, 4.8: rwsem_can_spin_on_owner() true when owner NULL
    bool new_writer_stops_spin;          // 3.16-rc2, 3.16: spin_on_owner returns "owner == NULL"
    bool stop_on_null_owner_busy_count;  // 4.1-4.7: ... NULL owner and count != 0 stops the spin
    bool wake_skipped_for_spinner;       // 4.2+: rwsem_wake only trylocks wait_lock if a spinner exists
    bool reader_owned_mark;              // 4.8-5.2 (xadd): readers set READER_OWNED, which stops writers' spinning
    bool handoff_stops_spinners;         // 5.3-rc-tip: a pending HANDOFF ends the spin on a writer owner
    bool handoff_writer_spins;           // 5.4+: the handoff writer spins on an on-CPU owner
    bool reader_owned_spin;              // 5.3+: spin on a reader-owned lock until a deadline, then NONSPINNABLE
    bool reader_steal;                   // 5.11+: readers in the slow path steal a free lock
    bool reader_spins;                   // 5.3-5.10: readers spin on a writer owner, adaptively disabled
    bool direct_handoff;                 // 6.3+: the waker hands a free lock to the HANDOFF writer
};
PolicyTraits traits(Policy policy) noexcept;

struct RwSemOptions {
    // Busy-wait between clearing owner and releasing the count in up_write.
    // 0 = natural timing.
    std::uint64_t release_window_ns = 0;
};

class RwSem {
public:
    explicit RwSem(Policy policy = Policy::V5_19, RwSemOptions options = {}) noexcept;
    RwSem(const RwSem&) = delete;
    RwSem& operator=(const RwSem&) = delete;

    void lock() noexcept;  // down_write
    bool try_lock() noexcept;
    void unlock() noexcept;       // up_write
    void lock_shared() noexcept;  // down_read
    bool try_lock_shared() noexcept;
    void unlock_shared() noexcept;  // up_read

    Policy policy() const noexcept { return policy_; }
    // Raw state, for tests and diagnostics.
    std::int64_t count() const noexcept { return count_.load(std::memory_order_relaxed); }
    std::uint32_t owner_tid() const noexcept
    {
        return static_cast<std::uint32_t>(owner_.load(std::memory_order_relaxed) >> kOwnerShift);
    }
    // Writers may not spin (RWSEM_WR_NONSPINNABLE; 5.11+: RWSEM_NONSPINNABLE).
    bool owner_nonspinnable() const noexcept { return owner_.load(std::memory_order_relaxed) & kWrNonSpinnable; }
    // Readers may not spin (5.3-5.10 RWSEM_RD_NONSPINNABLE).
    bool owner_rd_nonspinnable() const noexcept { return owner_.load(std::memory_order_relaxed) & kRdNonSpinnable; }

    static constexpr std::uint64_t kReaderOwned = 0x1;     // RWSEM_READER_OWNED (4.8+)
    static constexpr std::uint64_t kRdNonSpinnable = 0x2;  // 5.3-5.10 RWSEM_RD_NONSPINNABLE
    static constexpr std::uint64_t kWrNonSpinnable = 0x4;  // 5.3-5.10 RWSEM_WR_NONSPINNABLE
    // RWSEM_NONSPINNABLE: both bits (5.11+ has one bit; here both are set and cleared together).
    static constexpr std::uint64_t kNonSpinnable = kRdNonSpinnable | kWrNonSpinnable;
    static constexpr std::uint64_t kOwnerFlags = kReaderOwned | kNonSpinnable;
    static constexpr unsigned kOwnerShift = 3;

private:
    enum class OwnerState { Null, Writer, Reader, NonSpinnable };
    enum class WakeType { Any, Readers, ReadOwned };

    // rwsem-xadd model (rwsem_xadd.cpp)
    void xadd_down_write_slow();
    void xadd_down_read_slow();
    void xadd_wake();
    void xadd_do_wake(WakeType type, detail::WakeQueue& wake);
    bool xadd_try_write_lock(std::int64_t count);
    bool xadd_try_write_lock_unqueued();
    bool xadd_optimistic_spin(SpinFail& why);
    bool xadd_spin_on_owner(std::uint32_t owner, detail::SpinBudget& budget, SpinFail& why);
    bool reader_marked(SpinFail& why) const noexcept;

    // v5.3 rework model (rwsem_atomic.cpp)
    bool atomic_down_write_slow();  // true: set RD_NONSPINNABLE once the owner is set
    void atomic_down_read_slow(std::int64_t count);
    bool atomic_reader_spin(std::int64_t& adjustment, SpinFail& why);
    bool atomic_try_read_lock_unqueued();
    void atomic_wake(WakeType type = WakeType::Any);
    void atomic_mark_wake(WakeType type, detail::WakeQueue& wake);
    void atomic_cond_wake(std::int64_t count, detail::WakeQueue& wake);
    bool atomic_try_write_lock(detail::Waiter& waiter);
    bool atomic_try_write_lock_unqueued();
    bool atomic_can_spin(std::uint64_t nonspinnable, SpinFail& why);
    bool atomic_optimistic_spin(bool wlock, SpinFail& why);
    OwnerState atomic_spin_on_owner(std::uint64_t nonspinnable, detail::SpinBudget* budget, SpinFail& why);
    void set_reader_owned() noexcept;
    std::uint64_t reader_owner_word(std::uint32_t tid) const noexcept;
    void clear_nonspinnable() noexcept;
    void set_nonspinnable() noexcept;
    static OwnerState owner_state(std::uint64_t owner_word, std::uint64_t nonspinnable) noexcept;

    void set_owner() noexcept;

    Policy policy_;
    PolicyTraits traits_;
    RwSemOptions options_;
    std::atomic<std::int64_t> count_{0};
    std::atomic<std::uint64_t> owner_{0};  // tid << kOwnerShift | flags
    detail::Osq osq_;
    detail::WaitLock wait_lock_;
    detail::WaitList waiters_;
};

}  // namespace reflock
