// The kernel lab: records a workload under other kernels, each booted in
// qemu with a generated initramfs, and brings back one ordinary session
// file per kernel.
#pragma once

#include <string>
#include <vector>

namespace lockscope::lab {

struct KernelSource {
    std::string image;        // --kernel PATH
    std::string modules_dir;  // --modules DIR (goes with the --kernel before it)
    std::string debian;       // --debian-kernel SPEC
};

struct LabOptions {
    std::vector<KernelSource> kernels;
    std::string workload = "pipe";
    unsigned threads = 2;
    double duration_s = 5;
    unsigned repeat = 1;
    std::string output_dir = ".";
    bool overwrite = false;
    double timeout_s = 0;  // per guest; 0: estimated from the workload
    unsigned cpus = 2;
    unsigned memory_mib = 1024;
    std::string qemu = "qemu-system-x86_64";
    std::string accel = "auto";  // kvm, tcg, or auto (KVM when usable, TCG if it fails)
    std::string cache_dir;       // downloaded kernels; default_cache_dir() when empty
    unsigned jobs = 0;           // guests at once; 0: one per host CPU under TCG, else as many as fit
};

// Checks what can be checked before anything boots. Throws UsageError/Error.
void validate(const LabOptions& options);

// The watchdog's limit for one guest when --timeout is not given.
double default_timeout_s(const LabOptions& options);
// When the guest reports a recording still running as stuck, in seconds
// after its init starts, for a watchdog of timeout_s; 0 (never) when the
// watchdog leaves no time for it.
double stuck_after_s(double timeout_s);

// Boots the kernels and returns the session files, in order. Guests run side
// by side only where they do not share host CPUs (see LabOptions::jobs):
// guests sharing CPUs would distort each other's contention.
// Progress goes to stderr. Throws lockscope::Error with one sentence.
std::vector<std::string> run_lab(const LabOptions& options);

}  // namespace lockscope::lab
