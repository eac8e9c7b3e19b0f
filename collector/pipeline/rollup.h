// The recording pipeline's roll-up: turns successive cumulative snapshots of
// the BPF maps (pipeline/snapshot.h) into session intervals: per-lock
// deltas, lock identities (assigned once, named at first sight by
// identity/ladder.h), symbolized stack samples and per-task totals.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "core/analysis/counter_delta.h"
#include "core/analysis/lock_filter.h"
#include "core/host/symbols.h"
#include "core/model.h"
#include "identity/kernel_data.h"
#include "pipeline/snapshot.h"

namespace lockscope {

class Rollup {
public:
    // `data` is the running kernel's data that names locks (identity/);
    // without it only symbols, task members and callers name them.
    explicit Rollup(KernelSymbols symbols, std::shared_ptr<const identity::KernelData> data = nullptr);

    // Keeps only the locks that match (record --lock/--caller/--kind): the
    // others are neither stored nor counted in the intervals' totals.
    void set_filter(LockFilter filter) { filter_ = std::move(filter); }

    // Forgets stack ids: a newly attached probe numbers its stacks afresh.
    void reset_stacks();

    // Forgets every lock and stack seen, and numbers locks from 1 again (the
    // lock catalog starts again with them): the next baseline is a fresh
    // probe's, whose tables start empty.
    void forget_locks();

    // Starts a run: the next interval counts from `snap`.
    void baseline(const RawSnapshot& snap);

    // The interval from the previous snapshot (or baseline) to `snap`.
    IntervalBatch next(const RawSnapshot& snap, int64_t run, int64_t index);

    // Cumulative progress of the current run (lost, unmatched ends, samples).
    const RunInfo& run_progress() const { return run_; }

    // The id of the row a lock of the probe (its key: address, kind bits)
    // was stored under; 0 when it has none (not seen yet, or filtered out).
    int64_t kept_row(uint64_t address, uint32_t flags) const;

    // The frames a kernel stack id of the probe's stack map is stored with
    // (as StackSample::frames); empty while its addresses have not been read.
    std::vector<std::string> stack_frames(int32_t stack_id);

private:
    struct LockState {
        int64_t id = 0;
        bool kept = true;   // matches the filter
        LockCounters last;  // cumulative at the previous snapshot
    };

    const std::vector<std::string>& frames(int32_t stack_id);
    std::vector<uint64_t> first_stack_of(const RawSnapshot& snap, const KernelLockKey& key) const;
    LockInfo describe(const RawLock& lock, int64_t id, const RawSnapshot& snap) const;
    // The pieces of next(), in its order.
    void add_totals(const RawSnapshot& snap, IntervalBatch& b) const;
    void add_locks(const RawSnapshot& snap, IntervalBatch& b);
    void add_stacks(const RawSnapshot& snap, IntervalBatch& b);
    void add_holders(const RawSnapshot& snap, IntervalBatch& b) const;
    void add_tasks(const RawSnapshot& snap, IntervalBatch& b);

    KernelSymbols syms_;
    std::shared_ptr<const identity::KernelData> data_;
    LockFilter filter_;
    std::map<KernelLockKey, LockState> locks_;
    std::map<int32_t, std::vector<uint64_t>> stack_ips_;
    std::map<int32_t, std::vector<std::string>> stack_frames_;
    int64_t next_lock_id_ = 1;
    RawSnapshot prev_;
    RawCounters run_start_counters_;
    std::map<uint32_t, LockCounters> run_start_tasks_;
    // The run's task rows by pid, kept after a task leaves the map: the probe
    // removes exited tasks once their final totals were read.
    std::map<uint32_t, TaskStats> run_tasks_;
    std::map<std::tuple<uint64_t, uint32_t, int32_t, uint32_t>, std::pair<uint64_t, uint64_t>> run_start_stacks_;
    std::map<std::tuple<uint64_t, uint32_t, uint64_t, uint32_t>, std::pair<uint64_t, uint64_t>> run_start_edges_;
    std::map<std::tuple<uint64_t, uint32_t, uint32_t>, uint64_t> run_start_holder_tasks_;  // samples
    std::map<std::tuple<uint64_t, uint32_t, std::string, uint32_t>, HolderTime> run_start_holder_times_;
    std::map<std::tuple<uint64_t, uint32_t, uint64_t>, uint64_t> run_start_lock_cgroups_;  // samples
    RunInfo run_;
};

}  // namespace lockscope
