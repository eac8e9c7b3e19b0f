// Turns successive cumulative snapshots of the BPF maps into session
// intervals: per-lock deltas, lock identities (assigned once, named at
// first sight), symbolized stack samples and per-task totals.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <utility>

#include "core/analysis/lock_filter.h"
#include "core/analysis/lock_naming.h"
#include "core/raw.h"
#include "core/model.h"
#include "core/host/symbols.h"

namespace lockscope {

class Rollup {
public:
    // `data` names locks from kernel data (collector/identity); without it
    // only symbols, task members and callers name them.
    explicit Rollup(KernelSymbols symbols, std::shared_ptr<const DataNamer> data = nullptr);

    // Keeps only the locks that match (record --lock/--caller/--kind): the
    // others are neither stored nor counted in the intervals' totals.
    void set_filter(LockFilter filter) { filter_ = std::move(filter); }

    // Forgets stack ids: a newly attached probe numbers its stacks afresh.
    void reset_stacks();

    // Starts a run: the next interval counts from `snap`.
    void baseline(const RawSnapshot& snap);

    // The interval from the previous snapshot (or baseline) to `snap`.
    IntervalBatch next(const RawSnapshot& snap, int64_t run, int64_t index);

    // Cumulative progress of the current run (lost, unmatched ends, samples).
    const RunInfo& run_progress() const { return run_; }

private:
    struct LockState {
        int64_t id = 0;
        bool kept = true;   // matches the filter
        LockCounters last;  // cumulative at the previous snapshot
    };
    using Key = std::pair<uint64_t, uint32_t>;

    const std::vector<std::string>& frames(int32_t stack_id);
    std::vector<uint64_t> first_stack_of(const RawSnapshot& snap, const Key& key) const;

    KernelSymbols syms_;
    std::shared_ptr<const DataNamer> data_;
    LockFilter filter_;
    std::map<Key, LockState> locks_;
    std::map<int32_t, std::vector<uint64_t>> stack_ips_;
    std::map<int32_t, std::vector<std::string>> stack_frames_;
    int64_t next_lock_id_ = 1;
    RawSnapshot prev_;
    RawCounters run_start_counters_;
    std::map<uint32_t, LockCounters> run_start_tasks_;
    std::map<std::tuple<uint64_t, uint32_t, int32_t, uint32_t>, std::pair<uint64_t, uint64_t>> run_start_stacks_;
    std::map<std::tuple<uint64_t, uint32_t, uint64_t, uint32_t>, std::pair<uint64_t, uint64_t>> run_start_edges_;
    std::map<std::tuple<uint64_t, uint32_t, uint32_t>, uint64_t> run_start_holder_tasks_;  // samples
    std::map<std::tuple<uint64_t, uint32_t, uint64_t>, uint64_t> run_start_lock_cgroups_;  // samples
    RunInfo run_;
};

// Counters of `now` minus `before` (cumulative values; max_wait is kept from now).
LockCounters counter_delta(const LockCounters& now, const LockCounters& before);

}  // namespace lockscope
