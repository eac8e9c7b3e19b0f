// Shared by the root tests: skip with the product's own reason where BPF
// cannot load (not root, no BTF, no lock tracepoints). As root on a capable
// kernel nothing here skips, and scripts/test.sh fails on any skip whose
// reason is not in tests/skip-allow-list.txt.
#pragma once

#include <gtest/gtest.h>

#include "root_env.h"

#define LOCKSCOPE_REQUIRE_BPF()                                                          \
    do {                                                                                 \
        const std::string lockscope_bpf_why = lockscope::test::bpf_unavailable_reason(); \
        if (!lockscope_bpf_why.empty())                                                  \
            GTEST_SKIP() << "cannot load BPF here: " << lockscope_bpf_why;               \
    } while (0)
