// USDT probes with the kernel lock tracepoints' semantics (provider
// "lockscope"); `lockscope record -p PID` attaches to them. Flags are the
// kernel's LCB_F_* values (bpf/lockscope_abi.h); the collector adds LS_F_USER.
//   contention_begin(lock, flags)  - like lock:contention_begin
//   contention_end(lock, ret)      - like lock:contention_end
//   spin_fail(lock, reason)        - reflock::SpinFail; the kernel has no such event
#pragma once

#include "lockscope_abi.h"
#include "reflock/counters.h"
#include "reflock/detail/thread_slot.h"

// With semaphores: a tracer attaching a probe (libbpf passes the semaphore as
// the uprobe's reference counter) increments its counter in this process, so
// the process can tell it is being traced (reflock::usdt_tracer_attached()).
// The probe sites themselves stay single nops either way.
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

extern "C" {
// Defined in probes.cpp, in the ELF section the USDT notes point into.
extern unsigned short lockscope_contention_begin_semaphore;
extern unsigned short lockscope_contention_end_semaphore;
extern unsigned short lockscope_spin_fail_semaphore;
}

namespace reflock::detail {

inline void trace_begin(const void* lock, unsigned flags) noexcept
{
    DTRACE_PROBE2(lockscope, contention_begin, lock, flags);
}
inline void trace_end(const void* lock, int ret) noexcept
{
    DTRACE_PROBE2(lockscope, contention_end, lock, ret);
}

// A spin phase begins: the event and its counter together, so USDT-derived
// counts equal the in-process ones by construction.
inline void spin_begin(const void* lock, unsigned kind_flags) noexcept
{
    bump(my_counters().spin_attempts);
    trace_begin(lock, kind_flags | LCB_F_SPIN);
}
// The spin phase ends by queueing: spin_fail then a non-SPIN begin (the
// collector counts a failure on that begin).
inline void spin_failed_queue(const void* lock, unsigned kind_flags, SpinFail reason) noexcept
{
    auto& c = my_counters();
    bump(c.spin_failures);
    bump(c.by_reason[static_cast<unsigned>(reason)]);
    DTRACE_PROBE2(lockscope, spin_fail, lock, static_cast<unsigned>(reason));
    trace_begin(lock, kind_flags);
}
// The spin phase (or the episode) ends with the lock.
inline void spin_succeeded(const void* lock) noexcept
{
    bump(my_counters().spin_successes);
    trace_end(lock, 0);
}

}  // namespace reflock::detail
