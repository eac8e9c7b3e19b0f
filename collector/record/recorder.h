// `lockscope record`: attaches the probe, runs or follows the target, and
// writes one interval per tick into the session until the target ends, the
// duration elapses or a signal asks it to stop.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/storage/session_rotation.h"
#include "core/model.h"
#include "core/analysis/lock_filter.h"
#include "probe/probe.h"
#include "workload/workload.h"

namespace lockscope::record {

// One interval as the recorder stored it, for live consumers (`top`, the
// Prometheus exporter): they see exactly what a session file gets.
struct IntervalView {
    const IntervalBatch& batch;          // batch.tasks are cumulative over the run
    const std::vector<LockInfo>& locks;  // every lock seen so far; locks[id - 1] has that id
    const std::string& run_label;
};

struct RecordOptions {
    std::string output;  // session file; may be empty when on_interval is set
    // --session-dir: a rolling series of session files instead of `output`.
    std::optional<RotationPolicy> rotation;
    bool overwrite = false;
    double duration_s = 0;  // 0: until the target ends or a signal
    double interval_s = 1.0;
    uint32_t pid = 0;       // -p: follow this process
    bool all_cpus = false;  // -a: system-wide, also while a command runs
    unsigned repeat = 1;    // runs (with a workload or a command)
    bool with_workload = false;
    workload::Options workload;
    std::vector<std::string> command;  // after --
    probe::ProbeOptions probe;
    LockFilter filter;         // --kind (in the kernel), --lock, --caller
    bool status_line = false;  // live status on stderr
    // Also record the user-space locks (pthread mutexes and rwlocks, std::
    // mutexes) of the process -p follows or the command or workload runs.
    bool user_locks = false;
    bool user_locks_all = false;  // every process's user locks, not only the target's
    // Called on the recording thread after each interval is drained (and
    // stored, when there is a session file).
    std::function<void(const IntervalView&)> on_interval;
    // Without a session file (the exporter alone): a system-wide recording
    // starts a fresh probe at any interval once the kernel's tables are half
    // full, as a series does at its next file. Lock ids start again from 1.
    bool renew_probe = false;
};

struct RecordResult {
    std::string output;
    size_t runs = 0;
    size_t intervals = 0;
    uint64_t contentions = 0;
    uint64_t user_lock_waits = 0;  // waits on the recorded processes' user-space locks
    uint64_t events = 0;
    uint64_t lost = 0;
    bool interrupted = false;
    int command_status = 0;  // exit status of the traced command, if any
};

// Validates what can be checked before anything is created (command found,
// -p process exists, options consistent). Throws UsageError or Error.
void validate(const RecordOptions& options);

// Blocks SIGINT, SIGTERM, SIGHUP and SIGCHLD in the calling thread (before
// any thread starts) so the recorder waits for them synchronously.
void block_stop_signals();

RecordResult record(const RecordOptions& options);

}  // namespace lockscope::record
