// Count layouts of the two rwsem models (64-bit values, as on x86-64).
#pragma once

#include <cstdint>

namespace reflock::detail::xadd {
// include/asm-generic/rwsem.h (3.x-4.x)
inline constexpr std::int64_t kActiveMask = 0xffffffffLL;
inline constexpr std::int64_t kActiveBias = 1;
inline constexpr std::int64_t kWaitingBias = -kActiveMask - 1;
inline constexpr std::int64_t kActiveReadBias = kActiveBias;
inline constexpr std::int64_t kActiveWriteBias = kWaitingBias + kActiveBias;
}  // namespace reflock::detail::xadd

namespace reflock::detail::atomic {
// kernel/locking/rwsem.c (v5.3+)
inline constexpr std::int64_t kWriterLocked = 1 << 0;
inline constexpr std::int64_t kFlagWaiters = 1 << 1;
inline constexpr std::int64_t kFlagHandoff = 1 << 2;
inline constexpr std::int64_t kFlagReadFail = std::int64_t(1ULL << 63);
inline constexpr int kReaderShift = 8;
inline constexpr std::int64_t kReaderBias = 1 << kReaderShift;
inline constexpr std::int64_t kReaderMask = ~(kReaderBias - 1);
inline constexpr std::int64_t kWriterMask = kWriterLocked;
inline constexpr std::int64_t kLockMask = kWriterMask | kReaderMask;
inline constexpr std::int64_t kReadFailedMask = kWriterMask | kFlagWaiters | kFlagHandoff | kFlagReadFail;
}  // namespace reflock::detail::atomic
