// The session file: one SQLite database, written incrementally by the
// recorder and read by report, diff and the GUI.
//
// Metadata keys (table `meta`, all values are text):
//   tool_version, schema_version      written by lockscope itself
//   host, kernel_release, kernel_version   (`uname -n`, `-r`, `-v`)
//   config.CONFIG_MUTEX_SPIN_ON_OWNER, config.CONFIG_RWSEM_SPIN_ON_OWNER,
//   config.CONFIG_PREEMPT (and the other CONFIG_PREEMPT* lines),
//   config.CONFIG_PARAVIRT_SPINLOCKS, config.CONFIG_LOCK_EVENT_COUNTS
//                                     value as in the kernel config ("y", "n" if unset)
//   cpu_model, online_cpus
//   command                           the recorded command line, if any
//   workload, workload.threads, workload.duration_s   (and other workload.*)
//   interval_ms, stack_period
//   timing, timing.period             "full" and 1, or "sampled" and N
//                                     (record --sample N; core/analysis/estimate.h)
//   start_time                        ISO 8601 with offset
//   scope                             "system", "pid N" or "command …"
//   trace, trace_buffer_mib           "on" and the ring buffer's size when
//                                     recorded with --trace (table `episodes`)
//
// Format history: bump kSchemaVersion on any change an older reader would
// misread; readers refuse files newer than they understand and read every
// older version (session_load.cpp says what each lacks).
//   1  the first format (lost_nested, lost_abandoned, episodes added within it)
//   2  locks.name_source, locks.detail, locks.instance (lock identity); meta
//      lock_identity says which kernel data sources named the locks
//   3  tasks.cgroup (the task's cgroup v2 path); holder stacks (stacks.role
//      "holder:<state>"), runs.holder_samples/holder_changed, table edges
//   4  counter columns timed and wait_var_us2; meta timing, timing.period
//      (record --sample: the time fields are estimates, see core/analysis/estimate.h)
//   5  counter columns spin_offcpu_ns and spin_yields: the off-CPU time inside
//      spin phases, so that the wait splits into four parts that add up
//      (LockCounters::spinning_ns() and the rest; older files cannot split it);
//      runs.holder_oncpu_samples/holder_oncpu_dropped; stacks.role
//      "holder:on-cpu" (a running holder's stack taken on its own CPU, no
//      wait); meta running_holders, running_holder_hz; tables user_locks,
//      user_lock_left_out, user_lock_runs and user_lock_chains added within
//      it (user-space locks of the recorded processes and their chains into
//      kernel locks: a file without them has none)
//   6  user_locks.oncpu_ns, asleep_ns, runnable_ns (a user lock's wait in
//      parts that add up to it; older files cannot split it), wakes and hist;
//      user_lock_runs.lost_wakers; tables user_lock_wakers (who woke the
//      waiters of each user lock) and user_lock_stacks (their sampled stacks);
//      table kernel_lock_user_stacks (the user frames above kernel locks'
//      sampled waiter stacks) and user_lock_words (the futex words of user
//      locks, naming --trace's user-lock waits: episodes with lock_flags
//      bit LS_F_FUTEX_WAIT) added within it
//   7  counter columns holder_running_ns, holder_runnable_ns and
//      holder_asleep_ns: the holder split, the wait by what the lock's holder
//      was doing (LockCounters::holder_unknown_ns() is the rest; older files
//      cannot split it); runs.holder_untracked; table holder_times (the
//      followed holders' and their preemptors' times, per lock)
#pragma once

#include "core/model.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace lockscope {

inline constexpr int kSchemaVersion = 7;

class SessionWriter {
public:
    // Creates the file (0644). Refuses a symlink at `path`, an existing
    // file unless `overwrite`, and a file another SessionWriter has open
    // (held with flock() until close()). Throws lockscope::Error.
    static SessionWriter create(const std::string& path, bool overwrite);

    SessionWriter(SessionWriter&& other) noexcept;
    SessionWriter& operator=(SessionWriter&& other) noexcept;
    SessionWriter(const SessionWriter&) = delete;
    SessionWriter& operator=(const SessionWriter&) = delete;
    ~SessionWriter();

    void set_meta(const std::map<std::string, std::string>& meta);  // upsert
    int64_t begin_run(const std::string& label, uint64_t start_ns);
    void write_interval(const IntervalBatch& batch);
    // status: "complete", "interrupted" or "failed".
    void end_run(const RunInfo& run);
    // Checkpoints and leaves a single self-contained file. Idempotent.
    void close();

    const std::string& path() const { return path_; }

private:
    struct Statements;
    SessionWriter(std::string path, sqlite3* db);
    void prepare();
    void exec(const char* sql);
    void require_open() const;
    void transaction(const std::function<void()>& body);  // one COMMIT, or ROLLBACK on throw
    [[noreturn]] void fail(const char* what) const;
    void step(sqlite3_stmt* st);  // runs a bound statement; throws on failure
    void replace_run_rows(const IntervalBatch& batch);

    void release_lock();

    std::string path_;
    sqlite3* db_ = nullptr;
    std::unique_ptr<Statements> stmts_;
    int lock_fd_ = -1;  // the output file, flock()ed while this writer has it open
};

// Loads a whole session read-only (works on a file being recorded and on
// another user's file). Invalid rows are skipped and listed in
// Session::warnings; a file that is not a session, or is newer than this
// lockscope reads, throws lockscope::Error with one clear sentence.
Session load_session(const std::string& path);

// What load_session reads. The default is everything.
struct LoadOptions {
    // false: Session::lock_intervals holds, instead of the per-interval rows,
    // one row per run and lock with that run's totals (index kRunTotalIndex),
    // added up while reading. build_report gives the same totals and rows;
    // per-lock time series need the full load. Several times faster on long
    // sessions (first paint in the GUI). A file with invalid lock_intervals
    // rows is read in full and rolled up, so warnings match the full load.
    bool lock_intervals = true;
    // With lock_intervals false: false leaves Session::lock_intervals empty
    // (no per-lock figures at all; the cheapest look, for a first paint).
    bool lock_totals = true;
};
inline constexpr int64_t kRunTotalIndex = -1;
Session load_session(const std::string& path, const LoadOptions& options);

// Cheap look at a session for lists of recent files (no per-lock rows).
struct SessionSummary {
    int schema_version = 0;
    std::map<std::string, std::string> meta;
    size_t runs = 0;
    size_t intervals = 0;
    size_t locks = 0;
    double duration_s = 0;   // summed interval durations
    bool recording = false;  // a run is still marked "running"
};
SessionSummary peek_session(const std::string& path);

// Streams the episodes of a `record --trace` session row by row: traces are
// far larger than everything else in a session, so load_session never
// reads them. Opens like load_session (same errors).
class EpisodeReader {
public:
    explicit EpisodeReader(const std::string& path);
    EpisodeReader(EpisodeReader&&) noexcept;
    EpisodeReader& operator=(EpisodeReader&&) noexcept;
    ~EpisodeReader();

    size_t count();             // rows in the table (0 for sessions made before it existed)
    uint64_t first_begin_ns();  // earliest episode begin, 0 when there are none
    // Calls `fn` for each valid episode in the order they were stored;
    // returns how many invalid rows were skipped.
    size_t for_each(const std::function<void(const Episode&)>& fn);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// The `episodes` column encoding of phases: "s0 q1520:0 s80211", each a kind
// (s spin, q queued), the start as ns after the episode's begin, and for a
// queueing the owner state seen. Exposed for tests.
std::string encode_phases(const Episode& e);
// Strict inverse; false on anything malformed or out of order.
bool decode_phases(const std::string& text, Episode& e);

}  // namespace lockscope
