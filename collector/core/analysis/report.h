// `lockscope report`: a session rolled up into totals and ranked rows, and
// its text, JSON (a public interface, see DESIGN.md) and CSV renderings.
// The GUI uses build_report for its key figures and tables too.
#pragma once

#include "core/analysis/chains.h"
#include "core/analysis/user_locks.h"
#include "core/lock_key.h"
#include "core/model.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lockscope {

// Instance: each lock object apart (the rows Lock rolls up into its class).
// Task and Cgroup group the per-task totals (every lock together).
enum class GroupBy { Lock, Caller, Task, Kind, Instance, Cgroup };

inline bool groups_tasks(GroupBy by)
{
    return by == GroupBy::Task || by == GroupBy::Cgroup;
}

// "lock", "caller", "task", "kind", "instance", "cgroup"; anything else is a
// UsageError that lists the valid values.
GroupBy parse_group_by(const std::string& text);
const char* group_by_name(GroupBy by);

// The order of the rows (-k/--sort): perf lock contention's keys
// (wait_total, contended, wait_max, avg_wait) and the spin failures.
enum class RowSort { Wait, Contentions, WaitMax, AvgWait, SpinFailures };

// perf's keys, "spinfail", and the older names "wait" and "contentions";
// anything else is a UsageError that lists the keys.
RowSort parse_row_sort(const std::string& text);
const char* row_sort_name(RowSort sort);  // perf's key: "wait_total", ...

struct ReportOptions {
    GroupBy by = GroupBy::Lock;
    size_t top = 20;             // 0: all rows
    std::optional<int64_t> run;  // one run only; all runs when empty
    bool chains = false;         // the text shows the wait chains (JSON always has them)
    RowSort sort = RowSort::Wait;
    LockScope scope = LockScope::All;  // user: no kernel rows; kernel: no user-lock rows
};

// A holder stack of a lock row: what the task holding the lock was running
// (and doing) when a waiter queued, from the sampled queueings.
// State "on-cpu": a holder a waiter saw running, its stack taken later on
// its own CPU by a timer tick while it still held the lock. No waiter's
// episode belongs to a tick, so those carry no wait: their share is of the
// row's on-CPU samples, the others' of the wait behind the queueing samples.
// State "asleep": where a holder followed for the holder split slept with
// the lock held, every such sleep (not sampled): samples are its sleeps,
// wait_ns the holder's own time asleep there, share of the row's.
struct HolderShare {
    std::vector<std::string> frames;  // innermost first; empty: it was running on another CPU
    std::string state;                // running, preempted, sleeping, io-wait, on-cpu, asleep
    uint64_t samples = 0;
    uint64_t wait_ns = 0;  // wait of the sampled episodes that queued behind it
    double share = 0;      // of the row's sampled holders' wait: "held while" (on-cpu: of its samples)

    bool on_cpu() const { return state == "on-cpu"; }
    bool asleep() const { return state == "asleep"; }
};

// The waiters' own code above a lock row's kernel stacks: a user stack
// sampled with a waiter's kernel stack (sleeping locks, while user locks
// are recorded too; KernelUserStack).
struct UserCodeShare {
    std::vector<std::string> frames;  // user frames, innermost first
    uint64_t samples = 0;
    uint64_t wait_ns = 0;  // of the sampled waits
    double share = 0;      // of the row's sampled user stacks' wait (their samples where none has wait)
};

// A task that held the row's lock when a waiter queued.
struct HolderTaskShare {
    uint32_t tid = 0;
    uint32_t tgid = 0;
    std::string comm;
    uint64_t samples = 0;
};

// A task's part in a row's holder split: its HolderTime rows rolled up
// over runs and locks (their run, lock_id and role are then left unset).
using HolderTimeShare = HolderTime;

struct ReportRow {
    std::string name;  // lock name, caller function, kind(/mode) or "comm[pid]"
    std::string kind;
    std::string mode;
    std::string caller;             // for a lock: the caller with the most wait
    size_t callers = 0;             // by lock, kind or instance: distinct callers seen (named, or in waiter stacks)
    std::string name_source;        // where the name came from (the source with the most wait); "" if unknown
    std::string detail;             // --by instance: the evidence behind the name
    std::string instance;           // --by instance: which object, where known
    size_t instances = 0;           // lock objects rolled into the row
    std::vector<int64_t> lock_ids;  // the session's lock rows (LockInfo::id) rolled into it, ascending
    LockCounters counters;
    double share_of_wait = 0;                   // of the totals' wait_ns
    std::vector<HolderShare> holders;           // by lock or instance: the top holder stacks, by wait
    uint64_t holder_samples = 0;                // all of the row's holder samples at queueings
    uint64_t holder_oncpu_samples = 0;          // the row's on-cpu holder samples (timer ticks)
    std::vector<HolderTaskShare> holder_tasks;  // the tasks behind those samples, most samples first
    // By lock or instance, the holder split's tasks, most wait first: the
    // holders followed, and the tasks that had preempted a runnable holder.
    std::vector<HolderTimeShare> holder_times;
    std::vector<HolderTimeShare> preemptors;
    // By lock or instance: where its followed holders slept holding it
    // (HolderShare state "asleep"), most time first; and that time, all stacks'.
    std::vector<HolderShare> holder_sleeps;
    uint64_t holder_sleep_ns = 0;
    std::vector<UserCodeShare> user_code;  // by lock or instance: the top user stacks, by wait
    uint64_t user_code_samples = 0;        // all of the row's sampled user stacks
    // By lock or instance: the cgroups whose tasks were sampled waiting on
    // it (path, sampled waiter stacks), most samples first; every one.
    std::vector<std::pair<std::string, uint64_t>> cgroups;
    // What the row keeps (DESIGN.md "One truth": a value not kept is null in
    // JSON, an empty cell in CSV, "-" in text). A task's row (by task or
    // cgroup) keeps the counters the kernel keeps per task
    // (CounterField::per_task) and what they give; no row keeps a maximum
    // it did not measure (report_max.h; counters.max_wait_ns is then an
    // upper bound).
    bool per_task = false;
    bool max_wait_known = true;
    // A user-space lock's row (user_lock_rows.h) keeps what its futex waits
    // give: no spin counters, sleeps, owner states or cgroups.
    LockScope scope = LockScope::Kernel;
    // A user lock's row keeps the holder split's parts where its session's
    // format does (UserLockReport::holder_split); a kernel lock's always
    // (the session's own holder_split_kept() says for the whole file).
    bool holder_split_kept = true;
    // Whether the row keeps a counter, a value computed from them (a JSON
    // key of a row: "spinning_ns", "mean_wait_ns"), "hist",
    // "owner_at_queueing" or "max_wait_bound_ns".
    bool keeps(std::string_view field) const;
    // By lock: the row's lock key.
    LockKey key() const { return {name, kind, mode}; }
};

struct ReportTotals {
    LockCounters counters;
    double duration_s = 0;     // summed interval durations
    double idle_fraction = 0;  // idle ns / CPU ns over all intervals
    uint64_t lost = 0;
    LostCounters lost_by_cause;
    uint64_t events = 0;
    std::optional<double> ops_per_s;  // workload throughput, when a workload ran
    size_t runs = 0;
    size_t intervals = 0;
    // Wait and distinct lock objects by name source (identity/name_source.h); empty
    // for sessions recorded before lock identity.
    struct SourceShare {
        uint64_t wait_ns = 0;
        size_t locks = 0;
    };
    std::map<std::string, SourceShare> by_name_source;
};

struct Report {
    std::map<std::string, std::string> session;  // the session's metadata
    ReportTotals totals;
    std::vector<ReportRow> rows;  // by the sort key, descending (ties by wait, contentions); at most `top`
    size_t rows_total = 0;        // before the `top` cut
    GroupBy by = GroupBy::Lock;
    RowSort sort = RowSort::Wait;
    std::vector<std::string> notes;     // how the rows were estimated, when they were
    uint64_t holder_samples = 0;        // holder stacks captured, over the runs reported
    uint64_t holder_changed = 0;        // holder stacks dropped: the lock changed hands meanwhile
    uint64_t holder_oncpu_samples = 0;  // running holders' stacks taken on their own CPU
    uint64_t holder_oncpu_dropped = 0;  // ticks on a holder still holding its lock, no stack taken
    std::vector<Chain> chains;          // heaviest first (chains.h)
    bool show_chains = false;
    // The wait's four parts add up (LockCounters::spinning_ns()): false for
    // sessions recorded before the off-CPU time in spin phases was kept.
    bool wait_parts_split = true;
    // The holder split (LockCounters::holder_unknown_ns()): whether the
    // session keeps it (false for sessions before version 7), and the
    // waiting each holder task caused over every lock, most first.
    struct HolderSplit {
        bool kept = true;
        std::vector<HolderTimeShare> by_task;
    } holder_split;
    // The runs and intervals reported, each with its counters (all locks).
    struct RunTotals {
        int64_t id = 0;
        std::string label;
        LockCounters counters;
    };
    std::vector<RunTotals> runs;
    std::vector<IntervalTotals> intervals;
    // The session's user-space locks (empty with --scope kernel, and for a
    // session that recorded none).
    LockScope scope = LockScope::All;
    UserLockReport user_locks;
};

// Whether a session of this format splits the wait into parts that add up
// (0: built in memory, not read from a file).
inline bool wait_parts_split(int schema_version)
{
    return schema_version == 0 || schema_version >= 5;
}

// Whether a session of this format keeps the holder split (0: built in memory).
inline bool holder_split_kept(int schema_version)
{
    return schema_version == 0 || schema_version >= 7;
}

// Rows ordered by `sort`, largest first; rows it ties keep their order.
void sort_rows(std::vector<ReportRow>& rows, RowSort sort);

// Throws UsageError when options.run names a run the session lacks.
Report build_report(const Session& session, const ReportOptions& options);

struct TextOptions {
    // Names whole, however wide the table; else it fits 100 columns, its
    // names cut where needed but never so that two rows look alike.
    bool full_names = false;
    // The rows alone (report -q): no header, totals, legend or notes; the
    // kernel locks' table, or with LockScope::User the user-space locks'.
    bool rows_only = false;
};

std::string format_text(const Report& report, const TextOptions& options = {});
std::string format_json(const Report& report);
std::string format_csv(const Report& report);  // header + one line per row, RFC 4180 quoting
// The user-space lock rows (report --scope user --format csv, export --table user-locks).
std::string format_user_locks_csv(const Report& report);

}  // namespace lockscope
