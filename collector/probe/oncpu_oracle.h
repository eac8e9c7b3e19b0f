// The exact "is the owner running?" oracle for reflock: loads bpf/oncpu.bpf.c
// (sched_switch keeps slot tid % N = tid while a thread of one process is on
// a CPU, and each timer tick repairs what an unseen switch left wrong on its
// CPU), maps its array read-only and serves reflock::OnCpuTableOracle over
// the mapping. Root (or CAP_BPF + CAP_PERFMON) only; without it callers keep
// reflock's default (AssumeOnCpu plus the spin budget).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "lockscope_abi.h"
#include "reflock/oracle.h"

struct oncpu_bpf;

namespace lockscope::probe {

class OnCpuOracle {
public:
    // Loads and attaches for `tgid`, maps the table and seeds the threads of
    // `tgid` running now (afterwards every switch keeps it exact). `entries`:
    // tid slots in the table, a power of two; tids of one process that collide
    // modulo it only make the oracle answer "not running" (a shorter spin).
    // Throws lockscope::Error with the reason and a remedy.
    static OnCpuOracle load(pid_t tgid, std::uint32_t entries = LS_ONCPU_DEFAULT_ENTRIES);

    OnCpuOracle(OnCpuOracle&& other) noexcept;
    OnCpuOracle& operator=(OnCpuOracle&& other) noexcept;
    OnCpuOracle(const OnCpuOracle&) = delete;
    OnCpuOracle& operator=(const OnCpuOracle&) = delete;
    ~OnCpuOracle();

    // Valid while this object or the one it is moved into lives: uninstall
    // it with reflock::set_owner_oracle(nullptr) before destroying that.
    const reflock::OwnerOracle& oracle() const { return *table_oracle_; }
    bool on_cpu(std::uint32_t tid) const noexcept { return table_oracle_->on_cpu(tid); }

    // The map behind the table, for tests and diagnostics that map it
    // writable: its one value is laid out as lockscope_abi.h's LS_ONCPU_*
    // say, with entries() tid slots and cpus() CPU slots.
    int table_fd() const noexcept;
    std::uint32_t entries() const noexcept { return entries_; }
    std::uint32_t cpus() const noexcept { return cpus_; }

private:
    OnCpuOracle(oncpu_bpf* skel, std::uint32_t entries) noexcept;
    void map_table();
    void seed(pid_t tgid);
    void reset() noexcept;

    oncpu_bpf* skel_ = nullptr;
    void* table_ = nullptr;
    std::size_t table_bytes_ = 0;
    std::uint32_t entries_ = 0;
    std::uint32_t cpus_ = 0;
    // On the heap: reflock holds its address, which must survive moves.
    std::unique_ptr<reflock::OnCpuTableOracle> table_oracle_;
};

}  // namespace lockscope::probe
