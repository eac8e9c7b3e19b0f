// The processes `record` runs or follows: a workload or a command forked
// before the probe attaches and held until it has, and the signals that
// stop a recording.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "workload/workload.h"

namespace lockscope::record {

// SIGINT, SIGTERM, SIGHUP and SIGCHLD: what the recorder waits for.
sigset_t stop_signals();

// The file execvp would run for name (searched in PATH unless it has a
// slash); empty when there is none.
std::string command_path(const std::string& name);

// kill(pid, 0) also succeeds for a zombie whose parent has not reaped it
// yet: this says whether the process still runs.
bool process_alive(pid_t pid);

// A child forked before the probe attaches and held until release(), so
// that nothing it does escapes the recording.
struct Child {
    pid_t pid = 0;
    int go_fd = -1;   // parent writes one byte to release it
    int err_fd = -1;  // command children report an exec failure here
    bool exited = false;
    int status = 0;

    void release();
    // For commands: an errno from a failed exec, 0 once exec succeeded.
    int exec_error();
    bool reap(bool block);
    // SIGTERM, then SIGKILL if it has not gone within two seconds.
    void stop();
};

Child spawn_workload(const workload::Options& opts, workload::SharedOps& ops);
Child spawn_command(const std::vector<std::string>& command);

}  // namespace lockscope::record
