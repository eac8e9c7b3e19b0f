// Internal to the session store: the SQL schema and the row encodings that
// the writer and the loader must agree on. Not part of the public API.
#pragma once

#include "core/model.h"

#include <sqlite3.h>

#include <array>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lockscope::detail {

// Counter columns shared by intervals, lock_intervals and tasks: one per
// LS_LOCK_COUNTERS entry, named as the field, then owner and hist. Scalars
// are plain INTEGER columns (SQLite stores 0 and 1 in zero payload bytes,
// small values in one or two); the owner-state counters and the 36-bucket
// histogram are sparse text "bucket:count ..." because most buckets are 0.
#define LOCKSCOPE_X(name, merge, help) #name ", "
inline constexpr const char* kCounterColumns = LS_LOCK_COUNTERS(LOCKSCOPE_X) "owner, hist";
#undef LOCKSCOPE_X
inline constexpr int kCounterColumnCount = int(std::size(kCounterFields)) + 2;
// The counter columns a file of `version` can be read with: version 4 added
// timed (read as contentions before: every episode was timed) and
// wait_var_us2 (read as 0: no estimate).
std::string counter_columns(int version);

#define LOCKSCOPE_COUNTER_COLUMN(name, merge, help) #name " INTEGER NOT NULL DEFAULT 0, "
#define LOCKSCOPE_COUNTER_DDL \
    LS_LOCK_COUNTERS(LOCKSCOPE_COUNTER_COLUMN) "owner TEXT NOT NULL DEFAULT '', hist TEXT NOT NULL DEFAULT ''"
inline constexpr const char* kCounterDdl = LOCKSCOPE_COUNTER_DDL;

// Run-level lost counters: one column lost_<name> per LS_LOST_CAUSES entry,
// in that order.
inline constexpr int kLostColumnCount = int(std::size(kLostFields));
// "lost_depth, lost_lock_map_full, ...", or with `missing` columns (a
// version-1 file written before they were counted) read as 0.
std::string lost_columns(const std::vector<std::string>& missing = {});
std::vector<std::string> lost_column_names();
// Version-1 files got lost columns without a version bump: a file may lack
// any added after the first release. Version 2 files have them all.
inline constexpr const char* kLostColumnsInEveryVersion1[] = {
    "lost_depth",         "lost_lock_map_full", "lost_stack",      "lost_stack_map_full",
    "lost_task_map_full", "lost_task_storage",  "lost_ring_buffer"};

// Episodes of `record --trace`, one row each (see Episode). No index: rows
// are only ever streamed in insertion order, and inserts must stay cheap.
// Added after version 1 without a bump: older readers ignore the table, and
// this reader treats a session without it as one recorded without --trace.
#define LOCKSCOPE_EPISODES_DDL                                                                  \
    "CREATE TABLE episodes(run INTEGER NOT NULL, tid INTEGER NOT NULL, tgid INTEGER NOT NULL, " \
    " lock_address INTEGER NOT NULL, lock_flags INTEGER NOT NULL, begin_ns INTEGER NOT NULL, "  \
    " end_ns INTEGER NOT NULL, spin_ns INTEGER NOT NULL, sleep_ns INTEGER NOT NULL, "           \
    " preempt_ns INTEGER NOT NULL, sleeps INTEGER NOT NULL, preemptions INTEGER NOT NULL, "     \
    " ret INTEGER NOT NULL, waker INTEGER NOT NULL, truncated INTEGER NOT NULL, "               \
    " phases TEXT NOT NULL, waker_tgid INTEGER NOT NULL DEFAULT 0, "                            \
    " wake_ns INTEGER NOT NULL DEFAULT 0);"

#define LOCKSCOPE_LOST_DDL(name, label) " lost_" #name " INTEGER NOT NULL DEFAULT 0, "
#define LOCKSCOPE_RUN_DDL(name, version) " " #name " INTEGER NOT NULL DEFAULT 0, "
// The tables other than the per-run ones (session_tables.h); schema_sql() is all.
inline constexpr const char* kFixedTablesSql =
    "CREATE TABLE meta(key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) WITHOUT ROWID;"
    "CREATE TABLE runs(id INTEGER PRIMARY KEY, label TEXT NOT NULL, start_ns INTEGER NOT NULL, "
    " end_ns INTEGER NOT NULL DEFAULT 0, status TEXT NOT NULL, "
    LS_LOST_CAUSES(LOCKSCOPE_LOST_DDL)
    LS_RUN_COUNTS(LOCKSCOPE_RUN_DDL)
    " ops REAL);"
    "CREATE TABLE locks(id INTEGER PRIMARY KEY, name TEXT NOT NULL, kind TEXT NOT NULL, "
    " mode TEXT NOT NULL, caller TEXT NOT NULL, address INTEGER NOT NULL, flags INTEGER NOT NULL, "
    " name_source TEXT NOT NULL DEFAULT '', detail TEXT NOT NULL DEFAULT '', "
    " instance TEXT NOT NULL DEFAULT '');"
    "CREATE TABLE intervals(run INTEGER NOT NULL, idx INTEGER NOT NULL, start_ns INTEGER NOT NULL, "
    " end_ns INTEGER NOT NULL, idle_ns INTEGER NOT NULL, cpu_ns INTEGER NOT NULL, "
    " events INTEGER NOT NULL, lost INTEGER NOT NULL, ops REAL, " LOCKSCOPE_COUNTER_DDL ", "
    " PRIMARY KEY(run, idx)) WITHOUT ROWID;"
    "CREATE TABLE lock_intervals(run INTEGER NOT NULL, idx INTEGER NOT NULL, "
    " lock_id INTEGER NOT NULL, " LOCKSCOPE_COUNTER_DDL ", "
    " PRIMARY KEY(run, idx, lock_id)) WITHOUT ROWID;"
    LOCKSCOPE_EPISODES_DDL;

#undef LOCKSCOPE_COUNTER_DDL
#undef LOCKSCOPE_COUNTER_COLUMN
#undef LOCKSCOPE_EPISODES_DDL
#undef LOCKSCOPE_LOST_DDL
#undef LOCKSCOPE_RUN_DDL

// The whole schema a new session file is created with.
std::string schema_sql();

// SQLite integers are signed; no real counter reaches 2^63, so saturate
// instead of letting a bit pattern turn negative (which the loader rejects).
inline int64_t to_db(uint64_t v)
{
    return v > uint64_t(INT64_MAX) ? INT64_MAX : int64_t(v);
}

// "i:count i:count" for the non-zero entries; "" when all are zero.
std::string encode_sparse(const uint64_t* values, size_t n);
// Strict inverse of encode_sparse; false on any malformed, out-of-range or
// repeated index, or a count that does not fit.
bool decode_sparse(const char* text, uint64_t* values, size_t n);

void bind_text(sqlite3_stmt* st, int col, const std::string& text);
void bind_opt(sqlite3_stmt* st, int col, const std::optional<double>& v);  // NULL when unset
// Binds the kCounterColumnCount counter columns starting at `first` (1-based).
void bind_counters(sqlite3_stmt* st, int first, const LockCounters& c);

// Reads and validates one row's columns. The first problem found is kept
// in `why` and the row should be skipped.
class RowReader {
public:
    explicit RowReader(sqlite3_stmt* st) : st_(st) {}
    uint64_t u64(int col, const char* name);                                           // INTEGER >= 0
    int64_t i64(int col, const char* name);                                            // any INTEGER
    uint32_t u32(int col, const char* name);                                           // INTEGER 0..UINT32_MAX
    std::string text(int col, const char* name);                                       // TEXT, not NULL
    std::optional<double> opt_real(int col, const char* name);                         // NULL or finite >= 0
    void counters(int first, LockCounters& c);                                         // kCounterColumnCount columns
    void histogram(int col, const char* name, std::array<uint64_t, kHistBuckets>& h);  // sparse TEXT
    void fail(std::string why)
    {
        if (ok_)
            why_ = std::move(why);
        ok_ = false;
    }
    bool ok() const { return ok_; }
    const std::string& why() const { return why_; }

private:
    const char* sparse_text(int col, const char* name);  // TEXT, valid until the next step
    sqlite3_stmt* st_;
    bool ok_ = true;
    std::string why_;
};

// Owns one prepared statement.
class Stmt {
public:
    Stmt() = default;
    Stmt(sqlite3* db, const char* sql);  // throws std::runtime_error with sqlite's message
    Stmt(Stmt&& o) noexcept : st_(o.st_) { o.st_ = nullptr; }
    Stmt& operator=(Stmt&& o) noexcept
    {
        std::swap(st_, o.st_);
        return *this;
    }
    Stmt(const Stmt&) = delete;
    Stmt& operator=(const Stmt&) = delete;
    ~Stmt() { sqlite3_finalize(st_); }
    sqlite3_stmt* get() const { return st_; }

private:
    sqlite3_stmt* st_ = nullptr;
};

}  // namespace lockscope::detail
