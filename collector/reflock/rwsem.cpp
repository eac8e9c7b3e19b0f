// RwSem fast paths: one atomic each, dispatching to the slow path of the
// policy's count model. The owner is recorded after the count, and cleared
// before the count is released, as in every kernel version.
#include "reflock/rwsem.h"

#include "reflock/detail/memory_order.h"
#include "reflock/detail/rwsem_bits.h"
#include "reflock/detail/spin.h"
#include "reflock/hooks.h"

namespace reflock {

using namespace detail::orders;
using detail::bump;
using detail::my_counters;
namespace xa = detail::xadd;
namespace at = detail::atomic;

RwSem::RwSem(Policy policy, RwSemOptions options) noexcept : policy_(policy), traits_(traits(policy)), options_(options)
{
}

void RwSem::set_owner() noexcept
{
    owner_.store(std::uint64_t{detail::self_tid()} << kOwnerShift, release);
}

// __rwsem_set_reader_owned(): a reader's tid with READER_OWNED, keeping
// NONSPINNABLE (5.3-5.10: only RD_NONSPINNABLE).
std::uint64_t RwSem::reader_owner_word(std::uint32_t tid) const noexcept
{
    const std::uint64_t keep = owner_.load(relaxed) & (traits_.reader_spins ? kRdNonSpinnable : kNonSpinnable);
    return (std::uint64_t{tid} << kOwnerShift) | kReaderOwned | keep;
}

void RwSem::set_reader_owned() noexcept
{
    owner_.store(reader_owner_word(detail::self_tid()), release);
}

// rwsem_set_nonspinnable(): stop spinners on a reader-owned lock.
void RwSem::set_nonspinnable() noexcept
{
    std::uint64_t word = owner_.load(relaxed);
    while ((word & kReaderOwned) && !(word & kNonSpinnable) &&
           !owner_.compare_exchange_weak(word, word | kNonSpinnable, relaxed, relaxed)) {
    }
}

// clear_nonspinnable() (5.11+), clear_wr_nonspinnable() (5.3-5.10): when the
// readers are gone, writers may spin again.
void RwSem::clear_nonspinnable() noexcept
{
    const std::uint64_t bits = traits_.reader_spins ? kWrNonSpinnable : kNonSpinnable;
    if (owner_.load(relaxed) & bits)
        owner_.fetch_and(~bits, relaxed);
}

void RwSem::lock() noexcept
{
    if (traits_.xadd_model) {
        if (count_.fetch_add(xa::kActiveWriteBias, acquire) != 0)
            xadd_down_write_slow();
    } else {
        std::int64_t expected = 0;
        if (!count_.compare_exchange_strong(expected, at::kWriterLocked, acquire, relaxed) &&
            atomic_down_write_slow()) {
            set_owner();
            owner_.fetch_or(kRdNonSpinnable, relaxed);  // rwsem_disable_reader_optspin()
            bump(my_counters().acquisitions);
            return;
        }
    }
    set_owner();
    bump(my_counters().acquisitions);
}

bool RwSem::try_lock() noexcept
{
    std::int64_t expected = 0;
    const std::int64_t locked = traits_.xadd_model ? xa::kActiveWriteBias : at::kWriterLocked;
    if (!count_.compare_exchange_strong(expected, locked, acquire, relaxed))
        return false;
    set_owner();
    bump(my_counters().acquisitions);
    return true;
}

void RwSem::unlock() noexcept
{
    owner_.store(0, release);  // rwsem_clear_owner()
    detail::release_window(options_.release_window_ns);
    detail::hook(HookPoint::UpWriteOwnerCleared, this);
    if (traits_.xadd_model) {
        const std::int64_t now = count_.fetch_add(-xa::kActiveWriteBias, release) - xa::kActiveWriteBias;
        if (now < 0)
            xadd_wake();
    } else {
        const std::int64_t before = count_.fetch_add(-at::kWriterLocked, release);
        if (before & at::kFlagWaiters)
            atomic_wake();
    }
}

void RwSem::lock_shared() noexcept
{
    if (traits_.xadd_model) {
        if (count_.fetch_add(xa::kActiveReadBias, acquire) + xa::kActiveReadBias < 0)
            xadd_down_read_slow();
        if (traits_.reader_owned_mark)
            set_reader_owned();  // down_read(), 4.8+
    } else {
        const std::int64_t now = count_.fetch_add(at::kReaderBias, acquire) + at::kReaderBias;
        if (now & at::kReadFailedMask)
            atomic_down_read_slow(now);
        else
            set_reader_owned();
    }
    bump(my_counters().acquisitions);
}

bool RwSem::try_lock_shared() noexcept
{
    std::int64_t count = count_.load(relaxed);
    if (traits_.xadd_model) {
        while (count >= 0)
            if (count_.compare_exchange_weak(count, count + xa::kActiveReadBias, acquire, relaxed)) {
                if (traits_.reader_owned_mark)
                    set_reader_owned();
                goto got;
            }
        return false;
    }
    while (!(count & at::kReadFailedMask))
        if (count_.compare_exchange_weak(count, count + at::kReaderBias, acquire, relaxed)) {
            set_reader_owned();
            goto got;
        }
    return false;
got:
    bump(my_counters().acquisitions);
    return true;
}

void RwSem::unlock_shared() noexcept
{
    if (traits_.xadd_model) {
        const std::int64_t now = count_.fetch_add(-xa::kActiveReadBias, release) - xa::kActiveReadBias;
        if (now < -1 && (now & xa::kActiveMask) == 0)
            xadd_wake();
    } else {
        const std::int64_t now = count_.fetch_add(-at::kReaderBias, release) - at::kReaderBias;
        if ((now & (at::kLockMask | at::kFlagWaiters)) == at::kFlagWaiters) {
            clear_nonspinnable();
            atomic_wake();
        }
    }
}

}  // namespace reflock
