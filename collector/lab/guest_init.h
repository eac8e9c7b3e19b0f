// The guest's /init: mounts what lockscope needs, loads the share's modules,
// runs `lockscope record`, copies the session to the 9p share and powers
// off. It talks to the host through console lines starting with
// kConsolePrefix.
#pragma once

#include <string>
#include <vector>

namespace lockscope::lab {

inline constexpr const char* kConsolePrefix = "lockscope-lab: ";
inline constexpr const char* kShareTag = "lockscope";

struct GuestRun {
    std::string workload = "pipe";
    unsigned threads = 2;
    double duration_s = 5;
    unsigned repeat = 1;
    std::vector<std::string> modules;       // load order
    std::vector<std::string> library_dirs;  // LD_LIBRARY_PATH in the guest
    // Seconds after init starts at which a recording still running is
    // reported as stuck: one kStuckPrefix console line per user-space task
    // (state, wait channel, top of its kernel stack), then the kernel's
    // blocked-task and per-CPU backtraces in the console log. 0: never.
    double stuck_after_s = 0;
};

// After kConsolePrefix: "stuck " then one task, or "stuck after N s".
inline constexpr const char* kStuckWord = "stuck ";

std::string guest_init_script(const GuestRun& run);

}  // namespace lockscope::lab
