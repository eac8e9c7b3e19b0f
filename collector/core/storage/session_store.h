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
// The format's version and history: session_format.h.
#pragma once

#include "core/model.h"
#include "core/storage/session_format.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace lockscope {

class SessionWriter {
public:
    // Creates the file (0644). Refuses a symlink at `path`, an existing
    // file unless `overwrite`, and a file another SessionWriter has open
    // (held with flock() until close()). The new session is made under a
    // temporary name beside `path` and renamed to it once it has its schema,
    // so an interrupted start leaves `path` as it was. Throws lockscope::Error.
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

}  // namespace lockscope
