// A user-space lock workload for the cost benchmarks: threads taking one
// pthread mutex in turn, so that they wait for it in the futex syscall.
#pragma once

#include <cstdint>

namespace lockscope::bench {

struct MutexCounts {
    uint64_t ops = 0;        // lock acquisitions
    uint64_t contended = 0;  // of them, the ones that found the mutex taken
    uint64_t elapsed_ns = 0;
};

// `threads` threads take one mutex in turn for `seconds`. With `rate`, each
// holds it for 1/rate s asleep, so that the others find it taken and wait in
// the futex however many CPUs there are: about `rate` contended acquisitions
// a second. With rate 0 they hold it for a few hundred loop rounds, as fast
// as they go: a futex-heavy program. A lock attempt that finds the mutex
// taken counts as contended and waits in pthread_mutex_lock.
MutexCounts mutex_workload(unsigned threads, double seconds, unsigned rate);

}  // namespace lockscope::bench
