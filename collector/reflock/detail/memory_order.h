// The memory orders under the short names the lock code uses, as the
// kernel's _relaxed, _acquire and _release suffixes read.
#pragma once

#include <atomic>

namespace reflock::detail::orders {
inline constexpr auto relaxed = std::memory_order_relaxed;
inline constexpr auto acquire = std::memory_order_acquire;
inline constexpr auto release = std::memory_order_release;
inline constexpr auto acq_rel = std::memory_order_acq_rel;
inline constexpr auto seq_cst = std::memory_order_seq_cst;
}  // namespace reflock::detail::orders
