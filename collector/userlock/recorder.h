// Records the user-space lock waits of target processes (bpf/userlock.bpf.c):
// futex sleeps per (process, futex address), a bounded sample of them with
// the waiter's user stack, unwound at once (while the process runs) with the
// binaries' CFI. read() classifies each address by its samples' stacks and
// names its lock; futex waits that are no lock waits (condition variables,
// semaphores, the rest) are left out and counted.
//
// The user side is five calls: prepare, start, poll (as often as samples
// should be drained), stop, read. Root, or CAP_BPF + CAP_PERFMON.
//
// Chains into the kernel: given the kernel recorder's contention state
// (Options::kernel_task_state_fd and kernel_cpu_states_fd, from
// probe::Probe::contention_state_fds(), the Probe attached first), a waiter
// whose mutex has a known owner looks, as it goes to sleep, whether that
// owner is itself waiting for a kernel lock; UserLock::kernel_chains holds
// what it found. Without them the chain part is absent (Recording::chains).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/model.h"
#include "userlock/classify.h"

struct userlock_bpf;

namespace lockscope::userlock {

struct Options {
    std::vector<pid_t> tgids;            // the processes whose waits are recorded
    uint32_t sample_one_in = 16;         // after each address's first wait, 1 in this many
    uint32_t max_samples_per_sec = 200;  // then at most this many stacks a second, over all targets
    bool follow_children = false;        // the processes the targets create (and theirs) are targets too
    // Every process on the machine but the caller's own (tgids and
    // follow_children then say nothing); the maps are sized for it.
    bool all_processes = false;
    // The kernel recorder's task_state and cpu_states maps
    // (probe::Probe::contention_state_fds()): both, or neither (-1, no chains).
    // The Recorder keeps its own references; the caller keeps its fds.
    int kernel_task_state_fd = -1;
    int kernel_cpu_states_fd = -1;
    // The kernel recorder's ring buffer of kernel-lock waiters' user stacks
    // (probe::ContentionStateFds::user_stacks): drained and unwound with the
    // user locks' samples, into Recording::kernel_user_stacks; -1: none.
    int kernel_user_stacks_fd = -1;
    // Every finished wait, one by one (record --trace), through a ring
    // buffer of this many bytes (a power of two, page-aligned).
    bool trace_waits = false;
    uint32_t trace_buffer_bytes = 16u << 20;
};

// The user stacks above one sampled kernel stack of a kernel lock's
// waiters: keyed as the kernel recorder keys its lock rows and stacks
// (lock address, kind bits, stack id in its stack map), per process.
struct KernelUserStack {
    uint64_t kernel_lock = 0;
    uint32_t kernel_flags = 0;
    int32_t kernel_stack_id = 0;
    pid_t tgid = 0;
    std::vector<std::string> frames;  // user frames, innermost first (as SampledStack's)
    uint64_t samples = 0;
    uint64_t wait_ns = 0;
};

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

// A thread whose wakeup ended waits on a user lock (for a mutex, its unlock).
struct Waker {
    uint32_t tid = 0;
    uint32_t tgid = 0;
    std::string comm;  // the thread's name at its last such wakeup
    uint64_t wakes = 0;
};

// Sampled waits of a user lock with one user stack (frames innermost first:
// demangled functions, "[module+0xoffset]" where a module has no symbol for
// the address, "[unknown]" outside any module).
struct SampledStack {
    std::vector<std::string> frames;
    uint64_t samples = 0;
    uint64_t wait_ns = 0;  // those samples' wait
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
    std::vector<Waker> wakers;  // by wakes, most first
    // Its sampled stacks, by samples, most first; at most 32 distinct
    // stacks per futex word and kind, the rest as one "[other stacks]".
    std::vector<SampledStack> stacks;
};

// Futex waits that are no lock waits, per reason: "condition",
// "semaphore", "other" (no known function on the stack), "not unwound"
// (no sampled stack of the address named any frame), "unsampled" (no stack
// of the address was sampled).
struct LeftOut {
    uint64_t addresses = 0;
    uint64_t waits = 0;
};

struct Recording {
    std::vector<UserLock> locks;  // by wait time, longest first
    std::map<std::string, LeftOut> left_out;
    uint64_t samples = 0;          // stacks received
    uint64_t samples_unwound = 0;  // of them, unwound to at least one named frame
    uint64_t lost_keys = 0;        // waits not counted: the per-address map was full
    uint64_t lost_samples = 0;     // stacks not sent: the ring buffer was full
    uint64_t lost_inflight = 0;    // waits not timed: no room for a thread's wait state
    uint64_t rate_limited = 0;     // stacks not taken because of max_samples_per_sec
    // Whether owners were followed into kernel locks: "on", "off (no kernel
    // recorder)" or "unavailable (why)".
    std::string chains = "off (no kernel recorder)";
    uint64_t lost_chains = 0;   // chained waits not counted: the chain map was full
    uint64_t lost_targets = 0;  // processes the targets created, not followed: the target map was full
    uint64_t lost_wakers = 0;   // wakeups not credited to their waker: the waker map was full
    // With Options::kernel_user_stacks_fd: the user code above the kernel
    // locks' sampled waiter stacks; at most 32 distinct user stacks per
    // kernel stack and process, the rest as one "[other stacks]".
    std::vector<KernelUserStack> kernel_user_stacks;
    uint64_t kernel_user_samples = 0;  // kernel-lock waiters' user stacks received
    // Futex words found to be locks: (process, address) -> the row's name
    // and kind (the word's main kind, where rwlock readers and a writer
    // share it); and the words found to be no locks.
    std::map<std::pair<pid_t, uint64_t>, std::pair<std::string, std::string>> lock_words;
    std::set<std::pair<pid_t, uint64_t>> other_words;
    uint64_t lost_events = 0;  // traced waits not sent: the ring buffer was full
};

class Recorder {
public:
    // Opens and loads the BPF program and fills its target set. Throws
    // lockscope::Error with the reason and a remedy.
    static Recorder prepare(const Options& options);

    Recorder(Recorder&& other) noexcept;
    Recorder& operator=(Recorder&& other) noexcept;
    Recorder(const Recorder&) = delete;
    Recorder& operator=(const Recorder&) = delete;
    ~Recorder();

    void start();              // attaches to the syscall tracepoints
    int poll(int timeout_ms);  // drains and unwinds samples; returns how many
    void stop();               // detaches; read() still works
    // With Options::trace_waits: the waits that finished since the last
    // call, as poll() received them, each as an Episode with
    // kFutexWaitFlag (its run not set); whether it was a lock wait is known
    // from its word (Recording::lock_words: tgid, lock_address).
    std::vector<Episode> take_waits();
    Recording read();  // classifies and names; needs the targets still running

    // Waits being timed now (threads asleep in a futex).
    std::size_t in_flight() const;

    // Its BPF programs attached (sys_enter, sys_exit, sched_switch,
    // sched_waking, and with follow_children the fork and exit ones), for
    // their run-time stats.
    std::vector<int> prog_fds() const;

    // Reads the symbol tables and unwind tables of tgid's binaries now and
    // keeps them, so that its samples are still unwound, and read() still
    // names its global locks, after it has exited (a zombie has no maps).
    // Call again when its binaries change (exec, dlopen).
    void read_names(pid_t tgid);
    // The processes recorded now: those of Options::tgids and, with
    // follow_children, the living processes they created.
    std::vector<pid_t> targets() const;
    // The processes whose samples poll() received since the last call: they
    // run now (a waiter of theirs just woke), so their maps can be read.
    std::set<pid_t> take_sampled();

    struct State;

private:
    explicit Recorder(std::unique_ptr<State> state) noexcept;
    std::unique_ptr<State> state_;
};

}  // namespace lockscope::userlock
