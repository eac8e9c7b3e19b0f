// Helpers for driving reflock interleavings from tests.
#pragma once

#include "reflock/hooks.h"
#include "reflock/oracle.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include <sys/syscall.h>
#include <unistd.h>

namespace reflock::test {

inline std::uint32_t gettid_now() { return static_cast<std::uint32_t>(::syscall(SYS_gettid)); }

// Polls `condition` until it holds or `limit` passes; returns whether it held.
// Used only to wait for another thread's progress, never to decide outcomes.
template <typename F> bool eventually(F condition, std::chrono::seconds limit = std::chrono::seconds(20)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::yield();
  }
  return true;
}

// Sets tunables for one test and restores them (and removes the hook) after.
class TuningScope {
public:
  TuningScope(std::uint64_t spin_budget_ns, std::uint64_t handoff_timeout_ns = 4'000'000)
      : budget_(Tuning::spin_budget_ns.load()), handoff_(Tuning::rwsem_handoff_timeout_ns.load()) {
    Tuning::spin_budget_ns = spin_budget_ns;
    Tuning::rwsem_handoff_timeout_ns = handoff_timeout_ns;
  }
  ~TuningScope() {
    set_test_hook({});
    set_owner_oracle(nullptr);
    Tuning::spin_budget_ns = budget_;
    Tuning::rwsem_handoff_timeout_ns = handoff_;
  }

private:
  std::uint64_t budget_, handoff_;
};

} // namespace reflock::test
