// Spin-phase helpers: the budget that stands in for need_resched(), and the
// owner-running question.
#pragma once

#include "reflock/oracle.h"

#include <cstdint>
#include <ctime>

namespace reflock::detail {

inline std::uint64_t mono_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

// Checks the clock once every 16 polls, as the kernel's rwsem reader-spin
// deadline does, so a spinner reacts to a released lock without a clock
// read in between.
class SpinBudget {
public:
  SpinBudget() noexcept : deadline_(mono_ns() + Tuning::spin_budget_ns.load(std::memory_order_relaxed)) {}
  // The user-space need_resched(): true once the phase has used its budget.
  bool exhausted() noexcept {
    if (expired_) return true;
    if ((++polls_ & 0xf) != 0) return false;
    expired_ = mono_ns() >= deadline_;
    return expired_;
  }

private:
  std::uint64_t deadline_;
  std::uint32_t polls_ = 0;
  bool expired_ = false;
};

inline bool owner_on_cpu(std::uint32_t tid) noexcept { return owner_oracle().on_cpu(tid); }

} // namespace reflock::detail
