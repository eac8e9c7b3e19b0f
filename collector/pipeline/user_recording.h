// What the user-lock recorder found (Recorder::read()): its lock rows, the
// futex waits left out and why, and what it lost; plain value types, for the
// recorder and the row building alike.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/model.h"
#include "pipeline/snapshot.h"

namespace lockscope::userlock {

// Waits on one user lock that queued behind an owner who was, as the waiter
// went to sleep, itself waiting for this kernel lock: the chain
// waiter -> user lock -> owner -> kernel lock -> its holder (the root).
// The kernel lock is keyed as the kernel recorder keys its lock rows
// (ls_lock_key: address and kind bits, RawSnapshot's locks), so its name is
// the one the kernel side gives that row. A sample of the moment the waiter
// went to sleep: an owner that blocks in the kernel only later is not seen.
struct KernelChain {
    uint64_t kernel_lock = 0;   // the kernel lock's address (ls_lock_key.lock)
    uint32_t kernel_flags = 0;  // its kind bits (ls_lock_key.flags)
    std::string kernel_kind;    // "mutex", "rwsem", ... (lock_kind(kernel_flags))
    std::string kernel_mode;    // "read", "write" or ""
    uint64_t waits = 0;         // of UserLock::waits
    uint64_t wait_ns = 0;       // of UserLock::wait_ns: the wait this chain explains
    uint64_t max_wait_ns = 0;
    std::set<uint32_t> owner_tids;  // user lock owners seen waiting on the kernel lock (the last per futex word)
    std::set<uint32_t> root_tids;   // the kernel lock's holders seen (the last per futex word)
    // What the kernel lock's holder was doing, waits per state: "running",
    // "preempted", "sleeping", "io-wait" (as holder stacks say), or
    // "reader-owned" (no single holder), "no-owner" (released, or a handoff
    // in flight), "unknown". The root may itself wait for a further kernel
    // lock: the kernel recorder's own chains go on from kernel_lock.
    std::map<std::string, uint64_t> root_states;
};

// One user lock (a row): its waits on every futex word it has, per kind.
// wait_ns = oncpu_ns + asleep_ns + runnable_ns, exactly.
struct UserLock : UserLockWaits {
    pid_t tgid = 0;
    uint64_t caller_samples = 0;    // of them, those whose stack names `caller`
    std::set<std::string> ops;      // "FUTEX_WAIT", "FUTEX_WAIT_BITSET", "futex_waitv", ...
    std::set<uint32_t> owner_tids;  // holders seen by waiters (mutexes and PI futexes)
    // Its waits whose owner was waiting for a kernel lock, per kernel lock,
    // by wait time, longest first; empty without the kernel recorder.
    std::vector<KernelChain> kernel_chains;
    // Its wakers (the threads whose wakeup ended its waits), its sampled
    // stacks and its futex words, as the session keeps them: their keys
    // (run, process, name, kind) are the row's, set as it is stored.
    std::vector<UserLockWaker> wakers;  // by wakes, most first
    // The holder split's tasks (role "holder": the owners its waiters
    // followed; "preemptor": what ran instead of a runnable owner), by the
    // wait behind them, most first. Its holder_*_ns are their waits' parts.
    std::vector<HolderTime> holders;
    // Its sampled stacks, by samples, most first; at most 32 distinct
    // stacks per futex word and kind, the rest as one "[other stacks]".
    std::vector<UserLockStack> stacks;
    std::vector<UserLockInstance> words;  // its futex words' parts of its waits, by address
};

struct Recording {
    std::vector<UserLock> locks;  // by wait time, longest first
    // Futex waits that are no lock waits, per reason: "condition",
    // "semaphore", "other" (no known function on the stack), "not unwound"
    // (no sampled stack of the address named any frame), "unsampled" (no
    // stack of the address was sampled); the session's rows but for their run.
    std::map<std::string, UserLockLeftOut> left_out;
    // What the session keeps of how the run was recorded: the stacks
    // received and unwound, what was lost, the waits not timed from their
    // entry and their estimated time (its run, status and pids are set as
    // it is stored).
    UserLockRun counts;
    // Whether owners were followed into kernel locks: "on", "off (no kernel
    // recorder)" or "unavailable (why)".
    std::string chains = "off (no kernel recorder)";
    uint64_t lost_chains = 0;   // chained waits not counted: the chain map was full
    uint64_t lost_targets = 0;  // processes the targets created, not followed: the target map was full
    // With Options::kernel.user_stacks: the user code above the kernel
    // locks' sampled waiter stacks; at most 32 distinct user stacks per
    // kernel stack and process, the rest as one "[other stacks]".
    std::vector<RawUserStack> kernel_user_stacks;
    uint64_t kernel_user_samples = 0;  // kernel-lock waiters' user stacks received
    // Futex words found to be locks: (process, address) -> the row's name
    // and kind (the word's main kind, where rwlock readers and a writer
    // share it); and the words found to be no locks.
    std::map<std::pair<pid_t, uint64_t>, std::pair<std::string, std::string>> lock_words;
    std::set<std::pair<pid_t, uint64_t>> other_words;
    uint64_t lost_events = 0;   // traced waits not sent: the ring buffer was full
    uint64_t lost_holders = 0;  // owners not followed: no room, or their record busy
};

}  // namespace lockscope::userlock
