// The BPF<->user ABI (bpf/lockscope_abi.h) checked at compile time: a struct
// whose size or layout changes on one side without the other fails the build
// here instead of misreading maps at run time. Every such check lives here.
#include <cstddef>
#include <cstdint>
#include <iterator>

#include "core/model.h"
#include "lockscope_abi.h"

namespace lockscope::probe {

static_assert(sizeof(ls_lock_key) == 16);
static_assert(sizeof(ls_lock_stats) ==
              sizeof(uint64_t) * (std::size(kCounterFields) + LS_OWNER_STATES + LS_HIST_BUCKETS));
static_assert(sizeof(ls_lock_identity) == 136);
static_assert(sizeof(ls_stack_key) == 24);
static_assert(sizeof(ls_stack_stats) == 16);
static_assert(sizeof(ls_task_stats) == 112);
static_assert(sizeof(ls_cpu_idle) == 16);
// ls_counters: thirteen event and sampling counters and one lost_<name> per
// cause of LS_LOST_CAUSES (a missing one fails below, an extra one here).
static_assert(sizeof(ls_counters) == sizeof(uint64_t) * (13 + std::size(kLostFields)));
#define LOCKSCOPE_X(name, label) static_assert(sizeof(ls_counters::lost_##name) == sizeof(uint64_t));
LS_LOST_CAUSES(LOCKSCOPE_X)
#undef LOCKSCOPE_X
#define LOCKSCOPE_X(name, version) static_assert(sizeof(ls_counters::name) == sizeof(uint64_t));
LS_RUN_COUNTS(LOCKSCOPE_X)
#undef LOCKSCOPE_X
static_assert(sizeof(ls_cpu_state) % 8 == 0);  // per-CPU values are copied in 8-byte units
static_assert(sizeof(ls_trace_phase) == 16);
static_assert(offsetof(ls_trace_episode, phases) == 88);
static_assert(sizeof(ls_trace_episode) == 88 + LS_TRACE_MAX_PHASES * sizeof(ls_trace_phase));
static_assert(sizeof(ls_rwsem_spin) == 16);
static_assert(LS_HIST_BUCKETS == kHistBuckets && LS_OWNER_STATES == kOwnerStates);
// The on-CPU table: tid slots are found by masking, so their count is a power of two.
static_assert((LS_ONCPU_DEFAULT_ENTRIES & (LS_ONCPU_DEFAULT_ENTRIES - 1)) == 0);
// A user stack copy (bpf/user_stack.h): three registers, the copied size, the bytes.
static_assert(sizeof(ls_user_regs) == 3 * sizeof(uint64_t));
static_assert(sizeof(ls_user_stack) == sizeof(ls_user_regs) + 8 + LS_USER_STACK_BYTES);

}  // namespace lockscope::probe
// A kernel-lock waiter's user stack: the key fields, then the copy.
static_assert(sizeof(ls_kernel_user_sample) == 32 + sizeof(ls_user_stack));
static_assert(sizeof(ls_user_stack_counts) == 4 * sizeof(uint64_t));
// The traced user-lock waits' flag, as the session's model spells it.
static_assert(LS_F_FUTEX_WAIT == lockscope::kFutexWaitFlag && !(LS_F_FUTEX_WAIT & LS_F_KIND_MASK));
