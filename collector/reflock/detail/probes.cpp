// The USDT semaphores of the lockscope provider (see probes.h). Their names
// are fixed by sys/sdt.h: <provider>_<probe>_semaphore, with C linkage.
#include "reflock/detail/probes.h"

// The probe sites stay single nops, traced or not.
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

#include <atomic>

extern "C" {
__extension__ unsigned short lockscope_contention_begin_semaphore __attribute__((unused, section(".probes"))) = 0;
__extension__ unsigned short lockscope_contention_end_semaphore __attribute__((unused, section(".probes"))) = 0;
__extension__ unsigned short lockscope_spin_fail_semaphore __attribute__((unused, section(".probes"))) = 0;
}

namespace reflock {

namespace detail {

void trace_begin(const void* lock, unsigned flags) noexcept
{
    DTRACE_PROBE2(lockscope, contention_begin, lock, flags);
}

void trace_end(const void* lock, int ret) noexcept
{
    DTRACE_PROBE2(lockscope, contention_end, lock, ret);
}

void trace_spin_fail(const void* lock, unsigned reason) noexcept
{
    DTRACE_PROBE2(lockscope, spin_fail, lock, reason);
}

}  // namespace detail

bool usdt_tracer_attached() noexcept
{
    // The kernel writes the counters from outside this thread's program order;
    // an atomic load keeps the compiler from caching them across a poll loop.
    const auto loaded = [](unsigned short& sema) {
        return std::atomic_ref<unsigned short>(sema).load(std::memory_order_relaxed);
    };
    return loaded(lockscope_contention_begin_semaphore) != 0 && loaded(lockscope_contention_end_semaphore) != 0;
}

}  // namespace reflock
