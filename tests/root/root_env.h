// What the root tests need from this machine, decided the way the product
// decides it (probe/features: privileges and the kernel's BTF), and tracefs
// for the tests whose observer attaches to classic tracepoints.
#pragma once

#include <string>

namespace lockscope::test {

// "" when BPF programs can be loaded and attached here; otherwise why not.
std::string bpf_unavailable_reason();

// Makes sure tracefs is mounted. If none is and we are root, mounts one at
// /sys/kernel/tracing and unmounts it when the process exits, so a test
// leaves the machine as it found it. Returns "" or why tracefs is missing.
std::string ensure_tracefs();

}  // namespace lockscope::test
