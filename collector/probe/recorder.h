// `lockscope record`: attaches the probe, runs or follows the target, and
// writes one interval per tick into the session until the target ends, the
// duration elapses or a signal asks it to stop.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "probe/probe.h"
#include "workload/workload.h"

namespace lockscope::probe {

struct RecordOptions {
    std::string output;             // session file
    bool overwrite = false;
    double duration_s = 0;          // 0: until the target ends or a signal
    double interval_s = 1.0;
    uint32_t pid = 0;               // -p: follow this process
    unsigned repeat = 1;            // runs (with a workload or a command)
    bool with_workload = false;
    workload::Options workload;
    std::vector<std::string> command;  // after --
    ProbeOptions probe;
    bool status_line = false;       // live status on stderr
};

struct RecordResult {
    std::string output;
    size_t runs = 0;
    size_t intervals = 0;
    uint64_t contentions = 0;
    uint64_t events = 0;
    uint64_t lost = 0;
    bool interrupted = false;
    int command_status = 0;         // exit status of the traced command, if any
};

// Validates what can be checked before anything is created (command found,
// -p process exists, options consistent). Throws UsageError or Error.
void validate(const RecordOptions& options);

// Blocks SIGINT, SIGTERM, SIGHUP and SIGCHLD in the calling thread (before
// any thread starts) so the recorder waits for them synchronously.
void block_stop_signals();

RecordResult record(const RecordOptions& options);

}  // namespace lockscope::probe
