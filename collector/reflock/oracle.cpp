#include "reflock/oracle.h"

namespace reflock {
namespace {

const AssumeOnCpu g_assume_on_cpu;
std::atomic<const OwnerOracle*> g_oracle{&g_assume_on_cpu};

}  // namespace

std::atomic<std::uint64_t> Tuning::spin_budget_ns{20'000};
std::atomic<std::uint64_t> Tuning::rwsem_handoff_timeout_ns{4'000'000};

void set_owner_oracle(const OwnerOracle* oracle) noexcept
{
    g_oracle.store(oracle ? oracle : &g_assume_on_cpu, std::memory_order_release);
}

const OwnerOracle& owner_oracle() noexcept
{
    return *g_oracle.load(std::memory_order_acquire);
}

}  // namespace reflock
