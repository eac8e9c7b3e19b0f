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

// With semaphores (probes.cpp): a tracer attaching a probe (libbpf passes
// the semaphore as the uprobe's reference counter) increments its counter in
// this process, so the process can tell it is being traced
// (reflock::usdt_tracer_attached()).
extern "C" {
// Defined in probes.cpp, in the ELF section the USDT notes point into.
extern unsigned short lockscope_contention_begin_semaphore;
extern unsigned short lockscope_contention_end_semaphore;
extern unsigned short lockscope_spin_fail_semaphore;
}

namespace reflock::detail {

// One probe site each, in probes.cpp, not one per place a lock's code
// inlines them: a tracer places a uprobe on every site, and each uprobe it
// removes waits for a grace period (tens of milliseconds, one removal at a
// time), so a recording of a reflock program would end a second late. A call
// in the contended path only.
[[gnu::noinline]] void trace_begin(const void* lock, unsigned flags) noexcept;
[[gnu::noinline]] void trace_end(const void* lock, int ret) noexcept;
[[gnu::noinline]] void trace_spin_fail(const void* lock, unsigned reason) noexcept;

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
    trace_spin_fail(lock, static_cast<unsigned>(reason));
    trace_begin(lock, kind_flags);
}
// The spin phase (or the episode) ends with the lock.
inline void spin_succeeded(const void* lock) noexcept
{
    bump(my_counters().spin_successes);
    trace_end(lock, 0);
}

}  // namespace reflock::detail
