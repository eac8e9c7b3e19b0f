// Value types for everything a session holds. Shared by the recorder, the
// session store, the reports, diff and the GUI; no libbpf, no Qt.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockscope_abi.h"

namespace lockscope {

// Counters come from files we may not have written; saturate rather than
// wrap so a hostile or huge value cannot turn a sum into a small number.
inline uint64_t sat_add(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

inline constexpr int kHistBuckets = LS_HIST_BUCKETS;  // log2(ns) buckets, the last is open-ended
inline constexpr int kOwnerStates = LS_OWNER_STATES;

enum class OwnerState : int { OnCpu = 0, OffCpu, ReaderOwned, NonSpinnable, None };
const char* owner_state_name(int state);  // "on-cpu", "off-cpu", "reader-owned", ...

// Counters of one lock (or any roll-up of locks) over some span of time.
// One member per LS_LOCK_COUNTERS entry (bpf/lockscope_abi.h: the kernel's
// names, what each counts): contentions, spin_attempts, spin_failures,
// spin_successes, wait_ns, spin_ns, sleep_ns (off CPU, blocked), preempt_ns
// (off CPU, runnable), sleeps, preemptions, max_wait_ns, errors (waits that
// ended with a signal or timeout), wakeups. kCounterFields lists them.
struct LockCounters {
#define LOCKSCOPE_X(name, merge, help) uint64_t name = 0;
    LS_LOCK_COUNTERS(LOCKSCOPE_X)
#undef LOCKSCOPE_X
    std::array<uint64_t, kOwnerStates> owner{};  // owner state at queueing
    std::array<uint64_t, kHistBuckets> hist{};   // wait-time log2 histogram

    uint64_t offcpu_ns() const
    {
        return sleep_ns + preempt_ns;
    }
    uint64_t queued_ns() const
    {
        return wait_ns > spin_ns ? wait_ns - spin_ns : 0;
    }
    // The wait's four parts (DESIGN.md "Metrics"): each nanosecond of a wait
    // is in exactly one, and they add up to wait_ns. Spinning is spin-phase
    // time on CPU; queued on CPU is the rest of the time on CPU; asleep and
    // runnable are the time switched out blocked and runnable. Sessions
    // older than version 5 lack spin_offcpu_ns: their spinning is the spin
    // phases' whole time, and the parts may overlap (see wait_parts_split()).
    uint64_t spinning_ns() const
    {
        return spin_ns > spin_offcpu_ns ? spin_ns - spin_offcpu_ns : 0;
    }
    uint64_t asleep_ns() const
    {
        return sleep_ns;
    }
    uint64_t runnable_ns() const
    {
        return preempt_ns;
    }
    uint64_t queued_on_cpu_ns() const
    {
        const uint64_t other = sat_add(spinning_ns(), offcpu_ns());
        return wait_ns > other ? wait_ns - other : 0;
    }
    // The holder split (DESIGN.md "Metrics"), a second partition of the
    // same wait, by what the lock's holder was doing: holder_running_ns,
    // holder_runnable_ns, holder_asleep_ns (counters) and unknown, the rest.
    // Sessions older than version 7 keep none of them (holder_split_kept()).
    uint64_t holder_known_ns() const
    {
        return sat_add(sat_add(holder_running_ns, holder_runnable_ns), holder_asleep_ns);
    }
    uint64_t holder_unknown_ns() const
    {
        const uint64_t known = holder_known_ns();
        return wait_ns > known ? wait_ns - known : 0;
    }
    // failures / attempts; 0 when there were no attempts.
    double spin_failure_rate() const;
    void add(const LockCounters& o);  // sums, max of max_wait_ns
    bool empty() const
    {
        return contentions == 0 && spin_attempts == 0;
    }
    bool operator==(const LockCounters&) const = default;
};

// A lock as the user knows it. `name` is the identity across sessions and
// kernels: a class from kernel data ("inode.i_rwsem", "mm_struct.mmap_lock",
// "rq.__lock"), a global symbol ("rtnl_mutex"), a class recognised from the
// caller ("pipe_inode_info.mutex") or "<kind>@<caller function>"; never an
// address. Sessions recorded before lock identity carry the names of their
// time ("pipe->mutex", "i_rwsem", "mmap_lock") and no name_source.
struct LockInfo {
    int64_t id = 0;  // row id within the session
    std::string name;
    std::string kind;      // mutex, rwsem, spinlock, rwlock, percpu-rwsem, rtmutex, semaphore, user-mutex, user-rwsem
    std::string mode;      // "read", "write" or ""
    std::string caller;    // first function outside the locking code, "" if unknown
    uint64_t address = 0;  // informational only
    uint32_t flags = 0;    // contention_begin kind bits
    std::string name_source;  // slab, global, percpu, task, kernel-data, caller, unknown; "" in old sessions
    std::string detail;       // the evidence: "ext4_inode_cache: struct ext4_inode_info +0x1a8 (vfs_inode.i_rwsem)"
    std::string instance;     // which object, where known: "inode 1234 on ext4 (8:1) 'work'"
};

// Per-run totals over one interval.
struct IntervalTotals {
    int64_t run = 0;
    int64_t index = 0;      // 0-based within the run
    uint64_t start_ns = 0;  // CLOCK_MONOTONIC
    uint64_t end_ns = 0;
    LockCounters counters;      // all locks of the interval
    uint64_t idle_ns = 0;       // summed over CPUs
    uint64_t cpu_ns = 0;        // (end - start) * online CPUs
    uint64_t events = 0;        // tracepoint events handled
    uint64_t lost = 0;          // drops of any kind in the interval
    std::optional<double> ops;  // workload operations in the interval

    double seconds() const { return (end_ns - start_ns) / 1e9; }
    double idle_fraction() const { return cpu_ns ? double(idle_ns) / double(cpu_ns) : 0.0; }
};

// One lock's counters within one interval (stored sparsely: only changes).
struct LockInterval {
    int64_t run = 0;
    int64_t index = 0;
    int64_t lock_id = 0;
    LockCounters counters;
};

// A sampled kernel stack that waited on (or woke) a lock.
struct StackSample {
    int64_t run = 0;
    int64_t lock_id = 0;
    std::string role;                 // "waiter", "waker" or "holder:<state>" (see stack_role_name)
    std::vector<std::string> frames;  // innermost first, "function+0xoff"
    uint64_t samples = 0;
    uint64_t wait_ns = 0;  // of the sampled episodes (waiter and holder roles)

    bool holder() const { return role.starts_with("holder:"); }
    // "running", "preempted", "sleeping", "io-wait", "on-cpu", "asleep": what a holder was doing
    std::string holder_state() const { return holder() ? role.substr(7) : ""; }
};

// A wait-chain edge, from the sampled holders: waiters of lock_id queued
// behind a holder that was itself waiting for holder_lock_id.
struct WaitEdge {
    int64_t run = 0;
    int64_t lock_id = 0;
    int64_t holder_lock_id = 0;
    uint64_t samples = 0;
    uint64_t wait_ns = 0;  // of the sampled waiters
};

// A task found holding lock_id when a waiter queued (sampled holders). The
// recorder's snapshot holds the same under the kernel's lock key (raw.h).
struct HolderTask {
    int64_t run = 0;
    int64_t lock_id = 0;
    uint32_t tid = 0;
    uint32_t tgid = 0;
    std::string comm;
    uint64_t samples = 0;
};

// What a task did while waiters of lock_id waited for it (the holder
// split, followed, not sampled): as the lock's holder (role "holder"), the
// waiters' wait while it ran, was runnable and was asleep; or as the task
// its CPU ran instead of a runnable holder (role "preemptor"), the wait
// behind the holder it had preempted (runnable_ns only). Sessions from
// version 7.
struct HolderTime {
    int64_t run = 0;
    int64_t lock_id = 0;
    std::string role;  // "holder" or "preemptor"
    uint32_t tid = 0;
    uint32_t tgid = 0;
    std::string comm;
    uint64_t running_ns = 0;
    uint64_t runnable_ns = 0;
    uint64_t asleep_ns = 0;
    uint64_t waits = 0;  // waiters' followings of it that had time in them

    uint64_t total_ns() const { return sat_add(sat_add(running_ns, runnable_ns), asleep_ns); }
};

// A cgroup whose tasks were sampled waiting on lock_id (waiter stacks).
struct LockCgroup {
    int64_t run = 0;
    int64_t lock_id = 0;
    std::string cgroup;  // cgroup v2 path ("/" the root); "" when it could not be resolved
    uint64_t samples = 0;
};

// What a user-space lock is and how long it was waited for: the same in a
// recording (userlock::UserLock) and in a session's row (UserLockRow).
struct UserLockWaits {
    std::string name;         // "g_cache_lock", "pthread_mutex@Cache::get"
    std::string name_source;  // "user-symbol", "user-caller", "unknown"
    std::string module;       // the binary that holds a user-symbol lock
    std::string kind;         // "pthread_mutex", "pthread_rwlock/r", "pthread_rwlock/w", "futex"
    std::string caller;       // the first caller outside the locking library, most sampled
    uint64_t waits = 0;
    uint64_t wait_ns = 0;
    uint64_t max_wait_ns = 0;
    uint64_t samples = 0;  // sampled waiter stacks
    // wait_ns in parts that add up to it (sessions of format 6 on; older
    // files have 0s: their wait is not split): in the futex syscall on a
    // CPU, switched out blocked, switched out runnable (preempted, or woken
    // and waiting for a CPU).
    uint64_t oncpu_ns = 0;
    uint64_t asleep_ns = 0;
    uint64_t runnable_ns = 0;
    uint64_t wakes = 0;                         // waits whose sleep a thread's wakeup ended
    std::array<uint64_t, kHistBuckets> hist{};  // waits per log2(wait ns), as LockCounters::hist
    // The holder split (sessions of format 9 on; 0s before): of the waits
    // that slept behind the owner they read (a mutex's, a PI futex's) and
    // that this owner woke, what the owner did from the waiter's first
    // sleep to that wakeup. The rest of wait_ns is unknown. A lock row's
    // only: its futex words' rows (UserLockInstance) keep 0s.
    uint64_t holder_running_ns = 0;
    uint64_t holder_runnable_ns = 0;
    uint64_t holder_asleep_ns = 0;

    // As a kernel lock's counters, for what treats both alike (stack
    // exports, Prometheus): contentions = waits, wait_ns, max_wait_ns,
    // sleep_ns = asleep, preempt_ns = runnable, wakeups = wakes, hist, the
    // holder split's parts.
    LockCounters counters() const;
    // Adds another's counts and times (the longest wait is the longer one);
    // the names stay.
    void add_waits(const UserLockWaits& o);
};

// A user-space lock of a recorded process (collector/probe/user_probe.h): its futex
// waits over the run, one row per (process, name, kind).
struct UserLockRow : UserLockWaits {
    int64_t run = 0;
    uint32_t pid = 0;
    std::string owner_tids;  // "1234 1240": the holders waiters saw (mutexes, PI futexes)
    std::string ops;         // "FUTEX_WAIT FUTEX_WAIT_BITSET": the futex operations seen
};

// Waits on a user lock whose owner was, as the waiter went to sleep, itself
// waiting for a kernel lock: one edge of a wait chain from user space into
// the kernel (the kernel's own edges go on from that lock).
struct UserLockChain {
    int64_t run = 0;
    uint32_t pid = 0;
    std::string name;            // the user lock's, as its UserLockRow's
    std::string kind;            // the user lock's kind, as its UserLockRow's
    int64_t kernel_lock_id = 0;  // the kernel lock the owner waited for (a row of `locks`)
    std::string kernel_mode;     // "read", "write" or "" (an rwsem's side)
    uint64_t waits = 0;          // of the user lock's waits
    uint64_t wait_ns = 0;        // their wait: what the chain explains
    uint64_t max_wait_ns = 0;
    std::string owner_tids;   // "1234": the user lock's owners seen waiting in the kernel
    std::string root_tids;    // "1240": the kernel lock's holders seen
    std::string root_states;  // "sleeping:12 running:1": what those holders were doing, in waits
};

// A sampled waiter stack of a user lock: its user frames, innermost first
// (demangled functions, "[module+0xoffset]" where a module has no symbol),
// with the samples and the wait of the sampled waits that had it.
struct UserLockStack {
    int64_t run = 0;
    uint32_t pid = 0;
    std::string name;  // the user lock's, as its UserLockRow's
    std::string kind;
    std::vector<std::string> frames;
    uint64_t samples = 0;
    uint64_t wait_ns = 0;
};

// The user code above a kernel lock's sampled waiter stack: a waiter's user
// frames (innermost first, as UserLockStack's), taken with one of the lock's
// kernel stacks (kernel_frames, as that StackSample's frames). A sleeping
// lock's waiters only, at most a few hundred a second, while user locks are
// recorded too.
struct KernelUserStack {
    int64_t run = 0;
    int64_t lock_id = 0;
    uint32_t pid = 0;
    std::vector<std::string> kernel_frames;
    std::vector<std::string> frames;
    uint64_t samples = 0;
    uint64_t wait_ns = 0;
};

// A futex word found to be a user lock, and the row it counts under: how
// the traced user-lock waits (Episode::futex_wait()) are named.
struct UserLockWord {
    int64_t run = 0;
    uint32_t pid = 0;
    uint64_t address = 0;
    std::string name;  // as its UserLockRow's
    std::string kind;
};

// One futex word of a user lock row (run, pid, name, kind) and its part of
// the row's waits: report --by instance shows each word as a lock of its
// own. A word in shared memory (`shared`, its place) is one lock in every
// process that maps it. The names and the rest are its row's.
struct UserLockInstance : UserLockWaits {
    int64_t run = 0;
    uint32_t pid = 0;
    uint64_t address = 0;  // in process pid
    std::string shared;    // "DEV:INODE+0xOFFSET" in shared memory; "" for a private word
};

// Who woke the waiters of a user lock: a thread whose wakeup ended their
// sleep (for a mutex, its unlock), and how often.
struct UserLockWaker {
    int64_t run = 0;
    uint32_t pid = 0;
    std::string name;  // the user lock's, as its UserLockRow's
    std::string kind;
    uint32_t waker_tid = 0;
    uint32_t waker_pid = 0;  // the waker's process
    std::string waker_comm;  // the waker thread's name
    uint64_t wakes = 0;
};

// What a thread did while waiters of a user lock (run, pid, name, kind)
// waited for it, as HolderTime says for a kernel lock (lock_id unused):
// role "holder", the owner they followed; role "preemptor", the task its
// CPU ran instead of it while it was runnable. Sessions from version 9.
struct UserLockHolder : HolderTime {
    uint32_t pid = 0;
    std::string name;  // the user lock's, as its UserLockRow's
    std::string kind;
};

// Futex waits of the recorded processes that are no lock waits, per reason:
// "condition", "semaphore", "other", "not unwound", "unsampled".
struct UserLockLeftOut {
    int64_t run = 0;
    std::string reason;
    uint64_t addresses = 0;  // futex words
    uint64_t waits = 0;
};

// How a run's user locks were recorded: one row per run that tried.
struct UserLockRun {
    int64_t run = 0;
    std::string status;            // "recorded", or "unavailable: " and why
    std::string pids;              // the processes recorded, "1234 1250"
    uint64_t samples = 0;          // waiter stacks received
    uint64_t samples_unwound = 0;  // of them, unwound to at least one named frame
    uint64_t lost_keys = 0;        // waits not counted: the per-address map was full
    uint64_t lost_samples = 0;     // stacks not sent: the ring buffer was full
    uint64_t lost_inflight = 0;    // waits not timed: too many threads asleep at once
    uint64_t rate_limited = 0;     // stacks not taken: over the rate cap
    uint64_t lost_wakers = 0;      // wakeups not credited to their waker: the waker map was full (format 6)
    // Waits not timed from their entry (about 15 in 16; record --trace times
    // every one) and the time given to them at the timed waits' means: part
    // of the wait times (format 8; 0 in older files, which timed every wait).
    uint64_t untimed_waits = 0;
    uint64_t untimed_estimated_ns = 0;
};

// LS_ROLE_* as stored: "waiter", "waker", "holder:running",
// "holder:preempted", "holder:sleeping", "holder:io-wait", "holder:on-cpu"
// (a running holder sampled on its own CPU by a timer: no waiter's wait),
// "holder:asleep" (a followed holder's stack where it slept holding the
// lock, one sample a sleep, wait_ns its time asleep there: the holder
// split's, not a waiter's).
std::string stack_role_name(uint32_t role);

struct TaskStats {
    int64_t run = 0;
    uint32_t pid = 0;
    uint32_t tgid = 0;
    std::string comm;
    LockCounters counters;  // contentions, spin_*, wait/spin/sleep/preempt ns, sleeps
    std::string cgroup;     // cgroup v2 path when last switched out ("/" the root); "" unknown, old sessions
};

// Drops, by cause: one member per LS_LOST_CAUSES entry (bpf/lockscope_abi.h:
// depth, lock_map_full, stack, stack_map_full, task_map_full, task_storage,
// ring_buffer, nested, abandoned, process_map_full). kLostFields lists them.
// Always stored, always reported.
struct LostCounters {
#define LOCKSCOPE_X(name, label) uint64_t name = 0;
    LS_LOST_CAUSES(LOCKSCOPE_X)
#undef LOCKSCOPE_X
    uint64_t total() const;
    void add(const LostCounters& o);
    // What was counted after `base` (cumulative counters; never below 0).
    LostCounters since(const LostCounters& base) const;
    bool operator==(const LostCounters&) const = default;
};

// The field tables: every consumer that adds, subtracts, stores, loads or
// prints counters walks these instead of naming members. `name` is the
// member's, the BPF field's, the session column's and the JSON/CSV key.
enum class Merge { sum, max };  // over CPUs, locks and intervals; a max is no count
struct CounterField {
    const char* name;
    uint64_t LockCounters::*member;
    Merge merge;
    const char* help;  // what it counts, one phrase
    bool per_task;     // also kept per task (LS_TASK_COUNTERS)
};
namespace field_detail {
#define LOCKSCOPE_X(name) || std::string_view(#name) == field
constexpr bool per_task(std::string_view field)
{
    return false LS_TASK_COUNTERS(LOCKSCOPE_X);
}
#undef LOCKSCOPE_X
}  // namespace field_detail
inline constexpr CounterField kCounterFields[] = {
#define LOCKSCOPE_X(name, merge, help) {#name, &LockCounters::name, Merge::merge, help, field_detail::per_task(#name)},
    LS_LOCK_COUNTERS(LOCKSCOPE_X)
#undef LOCKSCOPE_X
};

struct LostField {
    const char* name;    // also the JSON's lost_by_cause key
    const char* column;  // the session's runs column: lost_<name>
    const char* label;   // in the text report
    uint64_t LostCounters::*member;
};
inline constexpr LostField kLostFields[] = {
#define LOCKSCOPE_X(name, label) {#name, "lost_" #name, label, &LostCounters::name},
    LS_LOST_CAUSES(LOCKSCOPE_X)
#undef LOCKSCOPE_X
};

struct RunInfo {
    int64_t id = 0;
    std::string label;
    uint64_t start_ns = 0;
    uint64_t end_ns = 0;
    std::string status;  // "running", "complete", "interrupted", "failed"
    LostCounters lost;
    // One per LS_RUN_COUNTS entry: unmatched_ends (ends whose begin preceded
    // the recording), stack_samples, holder_samples (holder stacks captured;
    // sessions from version 3), holder_changed (holder stacks dropped: the
    // lock changed hands while one was taken), and from version 7
    // holder_untracked (holders not followed for the holder split: their
    // waiters' time is unknown). kRunFields lists them.
#define LOCKSCOPE_X(name, version) uint64_t name = 0;
    LS_RUN_COUNTS(LOCKSCOPE_X)
#undef LOCKSCOPE_X
    std::optional<double> ops;  // workload operations over the run
};

// The run's counts, as kLostFields for its losses: name is also the column.
struct RunField {
    const char* name;
    uint64_t RunInfo::*member;
    int since_version;  // the session version whose runs table has the column
};
inline constexpr RunField kRunFields[] = {
#define LOCKSCOPE_X(name, version) {#name, &RunInfo::name, version},
    LS_RUN_COUNTS(LOCKSCOPE_X)
#undef LOCKSCOPE_X
};

// One phase of a traced episode; it lasts until the next phase starts, the
// last one until the episode ends.
struct EpisodePhase {
    bool spin = false;      // an optimistic spin (or a spinlock's whole wait); else queued
    uint64_t start_ns = 0;  // CLOCK_MONOTONIC
    int owner = -1;         // OwnerState seen when it queued; -1 for a spin phase or unknown
    bool operator==(const EpisodePhase&) const = default;
};

// One finished episode of a `record --trace` session (table `episodes`).
// With kFutexWaitFlag in lock_flags it is a user-space lock's futex wait:
// lock_address is its futex word in process tgid (UserLockWord names it),
// spin_ns its on-CPU part, sleep_ns asleep, preempt_ns runnable (they add
// up to its wait), and it has no phases.
inline constexpr uint32_t kFutexWaitFlag = 1u << 17;  // LS_F_FUTEX_WAIT
struct Episode {
    int64_t run = 0;
    uint32_t tid = 0;
    uint32_t tgid = 0;
    uint64_t lock_address = 0;  // with lock_flags, the key of the session's lock rows
    uint32_t lock_flags = 0;
    int64_t lock_id = 0;    // filled by the reader; 0 when no lock row matches
    uint64_t begin_ns = 0;  // first begin, CLOCK_MONOTONIC
    uint64_t end_ns = 0;
    uint64_t spin_ns = 0;
    uint64_t sleep_ns = 0;
    uint64_t preempt_ns = 0;
    uint32_t sleeps = 0;
    uint32_t preemptions = 0;
    int32_t ret = 0;                   // contention_end's return value (non-zero: error)
    uint32_t waker_tid = 0;            // the last task that woke it while queued, 0: none
    uint32_t waker_tgid = 0;           // the waker's process; 0 with waker_tid 0, or in older sessions
    uint64_t wake_ns = 0;              // when that waker woke it; 0: unknown (older sessions)
    bool truncated = false;            // phases past the kernel's per-episode cap were dropped
    std::vector<EpisodePhase> phases;  // in time order

    uint64_t wait_ns() const { return end_ns - begin_ns; }
    bool futex_wait() const { return (lock_flags & kFutexWaitFlag) != 0; }
    // End of phase i: the next phase's start, or the episode's end.
    uint64_t phase_end(size_t i) const { return i + 1 < phases.size() ? phases[i + 1].start_ns : end_ns; }
    bool operator==(const Episode&) const = default;
};

// What the recorder hands over once per interval; stored in one transaction.
struct IntervalBatch {
    IntervalTotals totals;                 // totals.run is the run every row below is stored under
    std::vector<LockInfo> new_locks;       // locks first seen in this interval, ids preassigned
    std::vector<LockInterval> locks;       // sparse deltas: only locks that changed
    std::vector<StackSample> stacks;       // the run's cumulative samples: replace that run's rows
    std::vector<WaitEdge> edges;           // the same, for the wait-chain edges
    std::vector<HolderTask> holder_tasks;  // the same, for the sampled holders' tasks
    std::vector<HolderTime> holder_times;  // the same, for the followed holders' and their preemptors' times
    std::vector<LockCgroup> lock_cgroups;  // the same, for the sampled waiters' cgroups
    std::vector<TaskStats> tasks;          // cumulative per task: replace that run's rows
    // User-space locks (record's user-lock recorder): the run's rows, given
    // with its last interval.
    std::vector<UserLockRow> user_locks;
    std::vector<UserLockLeftOut> user_lock_left_out;
    std::vector<UserLockRun> user_lock_runs;
    std::vector<UserLockChain> user_lock_chains;
    std::vector<UserLockWaker> user_lock_wakers;
    std::vector<UserLockHolder> user_lock_holders;
    std::vector<UserLockStack> user_lock_stacks;
    std::vector<KernelUserStack> kernel_user_stacks;  // the run's rows, with the user locks'
    std::vector<UserLockWord> user_lock_words;        // the same (record --trace)
    RunInfo run;                                      // progress so far: lost, unmatched_ends, stack_samples, ops
    std::vector<Episode> episodes;  // --trace: episodes finished in the interval (stored under totals.run)
    // Each user lock's futex words (report --by instance): the run's rows, as the user locks'.
    std::vector<UserLockInstance> user_lock_instances;
};

// Everything a session file holds, loaded.
struct Session {
    int schema_version = 0;
    std::map<std::string, std::string> meta;  // see session_store.h for the keys
    std::vector<RunInfo> runs;
    std::vector<IntervalTotals> intervals;  // ordered by run, index
    std::vector<LockInfo> locks;
    std::vector<LockInterval> lock_intervals;  // ordered by run, index, lock_id
    std::vector<StackSample> stacks;
    std::vector<WaitEdge> edges;           // sessions from version 3
    std::vector<HolderTask> holder_tasks;  // table holder_tasks, added to version 3 without a bump
    std::vector<LockCgroup> lock_cgroups;  // table lock_cgroups, the same
    std::vector<HolderTime> holder_times;  // sessions from version 7
    std::vector<TaskStats> tasks;
    // User-space locks: tables added to version 5 without a bump (older
    // files have none: no user locks were recorded); wakers and stacks from
    // version 6.
    std::vector<UserLockRow> user_locks;
    std::vector<UserLockLeftOut> user_lock_left_out;
    std::vector<UserLockRun> user_lock_runs;
    std::vector<UserLockChain> user_lock_chains;
    std::vector<UserLockWaker> user_lock_wakers;
    std::vector<UserLockHolder> user_lock_holders;
    std::vector<UserLockStack> user_lock_stacks;
    // User frames above kernel locks' waiter stacks: table added to
    // version 6 without a bump (older files have none).
    std::vector<KernelUserStack> kernel_user_stacks;
    std::vector<UserLockWord> user_lock_words;  // the same
    // Each user lock's futex words: table added to version 6 without a bump (older files have none).
    std::vector<UserLockInstance> user_lock_instances;
    // Rows the loader skipped as invalid (hostile or damaged file), one line each.
    std::vector<std::string> warnings;

    const LockInfo* lock(int64_t id) const;
    std::string meta_value(const std::string& key, const std::string& fallback = {}) const;
};

}  // namespace lockscope
