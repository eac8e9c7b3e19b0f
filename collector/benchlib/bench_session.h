// `lockscope bench` results as session rows, so that `report`, `diff` and the
// GUI read a bench run like a kernel recording: one session run per (lock,
// threads, repeat), one interval row per harness interval, and one lock row
// per lock variant (kind user-mutex / user-rwsem, as `record -p` names
// replica locks).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/model.h"
#include "core/storage/session_store.h"
#include "reflock/harness/harness.h"

namespace lockscope::bench_session {

// "rwsem@4.2 t=4 #2" (repeat is 0-based, the label 1-based).
std::string run_label(const reflock::harness::Params& params, unsigned repeat);

// name = the variant ("rwsem@4.2"), kind user-mutex for exclusive-only
// locks and user-rwsem for reader-writer locks, mode "write" when every
// acquisition is exclusive, "read" when every one is shared, "" when mixed
// (the harness counts both modes together, so there is no honest split).
LockInfo lock_info(const reflock::harness::Params& params);

// reflock's per-thread counters in the session's vocabulary. pthread and
// std locks have no counters: all zero.
LockCounters lock_counters(const reflock::Counters& counters);

// reflock's HANDOFF requests (Counters::handoffs) have no column in the
// session's lock counters, which are the BPF ABI's field table: the bench
// stores them per run in meta kHandoffsKey as "LABEL=N; LABEL=N ...", in run
// order. `list` is the value so far; returns it with this run appended.
inline constexpr const char* kHandoffsKey = "bench.handoffs";
std::string append_handoffs(std::string list, const std::string& label, uint64_t handoffs);

// Assigns session-wide lock ids: the same variant in several runs is one
// lock row, as the same kernel lock is across a recording's runs.
class LockTable {
public:
    // The id of the variant's row; the first time, also appends its
    // LockInfo to `new_locks` (for IntervalBatch::new_locks).
    int64_t id_for(const reflock::harness::Params& params, std::vector<LockInfo>& new_locks);

private:
    std::map<std::string, int64_t> ids_;
};

// One harness interval as a batch for SessionWriter::write_interval.
// `end_ns` is CLOCK_MONOTONIC when the interval was sampled (the harness
// stores only durations); `ops_so_far` the run's operations before it.
IntervalBatch interval_batch(const reflock::harness::Sample& sample, const reflock::harness::Params& params,
                             unsigned cpus, int64_t run, int64_t index, uint64_t end_ns, uint64_t ops_so_far,
                             LockTable& locks);

// bench.* metadata describing the whole sweep (threads as given, e.g. "1-8").
struct SweepInfo {
    std::vector<std::string> locks;
    std::string threads;
    uint64_t critical_ns = 0;
    uint64_t outside_ns = 0;
    unsigned read_percent = 0;
    uint64_t release_window_ns = 0;
    uint64_t duration_ms = 0;
    uint64_t interval_ms = 0;
    unsigned repeat = 0;
};
std::map<std::string, std::string> sweep_meta(const SweepInfo& sweep);

}  // namespace lockscope::bench_session
