// The one clock lockscope measures with: CLOCK_MONOTONIC, the clock of the
// BPF programs' bpf_ktime_get_ns() and of the workloads' timestamps, so
// times from the kernel and from user space compare. (reflock keeps its own:
// it stands alone, without core.)
#pragma once

#include <time.h>

#include <cstdint>

namespace lockscope {

inline uint64_t monotonic_ns()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
}

inline double monotonic_s()
{
    return double(monotonic_ns()) / 1e9;
}

}  // namespace lockscope
