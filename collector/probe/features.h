// What this machine supports for lockscope, checked without loading the
// recorder: used by `lockscope info` and before `record` attaches, so a
// missing piece is reported as one sentence naming what is needed.
#pragma once

#include <string>
#include <vector>

namespace lockscope::probe {

struct Feature {
    std::string name;  // "btf", "lock tracepoints", ...
    bool available = false;
    bool required = false;  // record cannot work without it
    std::string detail;     // what was found, or what is needed
};

std::vector<Feature> detect_features();

// Where the first file system of type `fstype` is mounted, "" if none is.
std::string mount_point(const std::string& fstype);

// Where tracefs is mounted ("/sys/kernel/tracing"), "" when it is not.
// lockscope attaches through BTF and never needs it; classic-tracepoint
// tools (perf, bpftrace, the tests' observer) do.
std::string tracefs_mount_point();

// The kernel has the bpf_get_kmem_cache kfunc (6.13+): lock identity can
// name slab objects.
bool kmem_cache_kfunc_available();

// The kernel has bpf_task_from_pid (6.2+): the holder of a mutex or rwsem
// can be sampled (its stack, what it was doing) when a waiter queues.
bool holder_stacks_available();

// The process may read the kernel modules' BTF (CAP_SYS_ADMIN), where
// libbpf looks for a type that the kernel's own BTF lacks.
bool module_btf_readable();

// True when every required feature is present; otherwise `why` says which
// one is missing and what it needs.
bool recording_supported(std::string* why = nullptr);

// Throws lockscope::Error for the first missing required feature.
void require_recording_features();

}  // namespace lockscope::probe
