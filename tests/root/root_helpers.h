// Shared by the root tests: skip with a reason where BPF cannot load.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#define LOCKSCOPE_REQUIRE_BPF()                                                                   \
    do {                                                                                          \
        if (geteuid() != 0)                                                                       \
            GTEST_SKIP() << "needs root (or CAP_BPF + CAP_PERFMON) to load BPF programs";         \
        if (!std::filesystem::exists("/sys/kernel/btf/vmlinux"))                                  \
            GTEST_SKIP() << "kernel has no BTF (/sys/kernel/btf/vmlinux)";                        \
        if (!std::filesystem::exists("/sys/kernel/tracing/events/lock/contention_begin") &&       \
            !std::filesystem::exists("/sys/kernel/debug/tracing/events/lock/contention_begin"))   \
            GTEST_SKIP() << "kernel has no lock:contention_begin tracepoint (needs 5.19+)";       \
    } while (0)
