// The running kernel's BTF, parsed once per process.
#pragma once

#include <bpf/btf.h>

#include <cerrno>

namespace lockscope::probe {

// /sys/kernel/btf/vmlinux does not change while lockscope runs, and each
// parse of its 5-6 MiB costs tens of milliseconds: the feature checks, the
// hook choices and the lock naming of one recording all read this one copy.
// Null where the kernel has no BTF, with the reason in *err (an errno value).
// Kept for the process's life; read only (libbpf's lookups take const btf*).
inline const btf* vmlinux_btf(int* err = nullptr)
{
    struct Loaded {
        btf* types;
        int err;
    };
    static const Loaded loaded = [] {
        btf* b = btf__load_vmlinux_btf();
        return Loaded{b, b ? 0 : errno};
    }();
    if (err)
        *err = loaded.err;
    return loaded.types;
}

}  // namespace lockscope::probe
