// What the kernel-lock probe shares with the user-lock probe.
#pragma once

namespace lockscope::probe {

// The file descriptors of the kernel programs' per-task contention state
// (bpf/contention_state.h), for the user-lock probe to share before it loads
// (userlock::Options::kernel, from Probe::contention_state_fds()): valid
// while the Probe lives.
struct ContentionStateFds {
    int task_state = -1;
    int cpu_states = -1;
    // The ring buffer of kernel-lock waiters' user stacks (struct
    // ls_kernel_user_sample); -1 without ProbeOptions::user_stacks_per_sec.
    int user_stacks = -1;
};

}  // namespace lockscope::probe
