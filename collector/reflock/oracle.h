// "Is the lock owner running?" - the condition every kernel spin loop asks
// (owner_on_cpu(): owner->on_cpu && !vcpu_is_preempted()). User space cannot
// see that cheaply, so reflock asks an OwnerOracle and, independently, bounds
// every spin phase by a time budget that stands in for need_resched() (the
// kernel spinner's own time slice ending).
//
// Default oracle: AssumeOnCpu - every owner is taken to be running, so spins
// end only when the owner changes or the budget runs out. That cannot see a
// preempted owner; with oversubscription it spins where the kernel would
// sleep. An exact oracle (a BPF program on sched_switch that writes each
// thread's on-CPU state into an mmapped array, installed by the collector
// when it runs as root) plugs in through set_owner_oracle().
#pragma once

#include <atomic>
#include <cstdint>

namespace reflock {

class OwnerOracle {
public:
    virtual ~OwnerOracle() = default;
    // True if thread `tid` is on a CPU now. Called inside spin loops: must be
    // cheap, lock-free and safe from any thread.
    virtual bool on_cpu(std::uint32_t tid) const noexcept = 0;
};

class AssumeOnCpu final : public OwnerOracle {
public:
    bool on_cpu(std::uint32_t) const noexcept override { return true; }
};

// Reads an array indexed by tid % entries whose element is the tid currently
// running on a CPU, or anything else when it is not (the layout the BPF
// sched_switch oracle writes: element = tid on switch-in, 0 on switch-out).
// Collisions make it answer "not running", which only shortens a spin.
class OnCpuTableOracle final : public OwnerOracle {
public:
    OnCpuTableOracle(const volatile std::uint32_t* table, std::uint32_t entries) noexcept
        : table_(table), entries_(entries)
    {
    }
    bool on_cpu(std::uint32_t tid) const noexcept override { return entries_ != 0 && table_[tid % entries_] == tid; }

private:
    const volatile std::uint32_t* table_;
    std::uint32_t entries_;
};

// Installs the process-wide oracle (nullptr restores AssumeOnCpu). The
// oracle must outlive every lock operation that may still be using it.
void set_owner_oracle(const OwnerOracle* oracle) noexcept;
const OwnerOracle& owner_oracle() noexcept;

// Process-wide tunables. Plain atomics: read at the start of each slow path.
struct Tuning {
    // Longest optimistic spin phase, the stand-in for need_resched(). The
    // kernel spins until its time slice ends (milliseconds); a user thread
    // that spins that long on an owner preempted on the same CPU burns its
    // slice, so the default is short.
    static std::atomic<std::uint64_t> spin_budget_ns;  // default 20 us
    // rwsem 5.2+: a waiter may set HANDOFF after waiting this long
    // (kernel RWSEM_WAIT_TIMEOUT, 4 ms at HZ=250 ... 1000).
    static std::atomic<std::uint64_t> rwsem_handoff_timeout_ns;  // default 4 ms
};

}  // namespace reflock
