// Internal to the session store: the per-run tables (stacks, edges,
// lock_cgroups, holder_tasks, tasks). Each is declared once, in kRunTables,
// as its columns bound to the members of its row type; the one writer
// (SessionWriter::write_interval replaces a run's rows every interval) and
// the one loader serve them all, and the schema's CREATE TABLE comes from
// the same declaration. A new per-run table is one entry there, beside its
// row type in model.h and the vectors that hold its rows in Session and
// IntervalBatch.
#pragma once

#include "core/model.h"
#include "core/storage/session_schema.h"

#include <sqlite3.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <variant>
#include <vector>

namespace lockscope::detail {

// A column bound to a member of its row type. The member's type says how
// the column is stored and checked on load:
//   int64_t                   INTEGER, any value (run and lock ids)
//   uint64_t                  INTEGER >= 0, saturated on write (counts, ns)
//   uint32_t                  INTEGER 0..UINT32_MAX (thread and process ids)
//   std::string               TEXT
//   std::vector<std::string>  TEXT, one element per line (stack frames)
//   LockCounters              the kCounterColumnCount counter columns, read by
//                             the file's version (counter_columns)
template <typename Row>
using ColumnMember = std::variant<int64_t Row::*, uint64_t Row::*, uint32_t Row::*, std::string Row::*,
                                  std::vector<std::string> Row::*, LockCounters Row::*>;

// What an id column names; a row naming a lock the file does not have is skipped.
enum class Refers { nothing, lock };

template <typename Row>
struct Column {
    const char* name;  // for LockCounters only a label: the columns are the counters'
    ColumnMember<Row> member;
    Refers refers = Refers::nothing;
    int since_version = 1;  // a file older than this reads it as "" or 0
};

struct RunTableOptions {
    int since_version = 1;              // older files have no such table: no rows
    bool added_within_version = false;  // came to since_version without a bump: such a file may lack it
    bool index_by_run = false;          // an index on run, for tables with many rows per run
};

// One per-run table. Every one starts with `run INTEGER NOT NULL` (Row::run)
// and is read in the order of run, its first column, then insertion.
template <typename Row, size_t N>
struct RunTable {
    using RowType = Row;
    const char* name;
    std::vector<Row> Session::*loaded;         // where load_session puts the rows; null: not in a Session
    std::vector<Row> IntervalBatch::*written;  // the rows that replace the run's on every interval
    std::array<Column<Row>, N> columns;        // after run
    RunTableOptions options;
};

template <typename Row, size_t N>
constexpr RunTable<Row, N> run_table(const char* name, std::vector<Row> Session::*loaded,
                                     std::vector<Row> IntervalBatch::*written, const Column<Row> (&columns)[N],
                                     RunTableOptions options = {})
{
    RunTable<Row, N> table{name, loaded, written, {}, options};
    for (size_t i = 0; i < N; ++i)
        table.columns[i] = columns[i];
    return table;
}

// A table whose rows are not part of a Session (one read on its own).
template <typename Row, size_t N>
constexpr RunTable<Row, N> run_table(const char* name, const Column<Row> (&columns)[N], RunTableOptions options = {})
{
    return run_table<Row, N>(name, nullptr, nullptr, columns, options);
}

// The session's per-run tables, in load order (a missing table's warning
// comes in this order too).
inline constexpr auto kRunTables =
    std::tuple(run_table("stacks", &Session::stacks, &IntervalBatch::stacks,
                         {{"lock_id", &StackSample::lock_id, Refers::lock},
                          {"role", &StackSample::role},
                          {"frames", &StackSample::frames},
                          {"samples", &StackSample::samples},
                          {"wait_ns", &StackSample::wait_ns}},
                         {.index_by_run = true}),
               run_table("edges", &Session::edges, &IntervalBatch::edges,
                         {{"lock_id", &WaitEdge::lock_id, Refers::lock},
                          {"holder_lock_id", &WaitEdge::holder_lock_id, Refers::lock},
                          {"samples", &WaitEdge::samples},
                          {"wait_ns", &WaitEdge::wait_ns}},
                         {.since_version = 3}),
               run_table("lock_cgroups", &Session::lock_cgroups, &IntervalBatch::lock_cgroups,
                         {{"lock_id", &LockCgroup::lock_id, Refers::lock},
                          {"cgroup", &LockCgroup::cgroup},
                          {"samples", &LockCgroup::samples}},
                         {.since_version = 3, .added_within_version = true}),
               run_table("holder_tasks", &Session::holder_tasks, &IntervalBatch::holder_tasks,
                         {{"lock_id", &HolderTask::lock_id, Refers::lock},
                          {"tid", &HolderTask::tid},
                          {"tgid", &HolderTask::tgid},
                          {"comm", &HolderTask::comm},
                          {"samples", &HolderTask::samples}},
                         {.since_version = 3, .added_within_version = true}),
               run_table("tasks", &Session::tasks, &IntervalBatch::tasks,
                         {{"pid", &TaskStats::pid},
                          {"tgid", &TaskStats::tgid},
                          {"comm", &TaskStats::comm},
                          {"counters", &TaskStats::counters},
                          {.name = "cgroup", .member = &TaskStats::cgroup, .since_version = 3}},
                         {.index_by_run = true}));

// Calls fn(table) for each of kRunTables, in order.
template <typename Fn>
void for_each_run_table(Fn&& fn)
{
    std::apply([&](const auto&... table) { (fn(table), ...); }, kRunTables);
}
inline constexpr size_t kRunTableCount = std::tuple_size_v<decltype(kRunTables)>;

// The SQL each declaration makes: CREATE TABLE (and its index), the INSERT
// of one row, and the SELECT a file of `version` is read with.
struct RunTableSql {
    std::string create, insert, select;
};

namespace run_table_detail {

template <typename Row>
bool is_counters(const Column<Row>& c)
{
    return std::holds_alternative<LockCounters Row::*>(c.member);
}

template <typename Row>
bool is_text(const Column<Row>& c)
{
    return std::holds_alternative<std::string Row::*>(c.member) ||
           std::holds_alternative<std::vector<std::string> Row::*>(c.member);
}

std::string join_lines(const std::vector<std::string>& lines);
std::vector<std::string> split_lines(const std::string& text);

}  // namespace run_table_detail

template <typename Row, size_t N>
RunTableSql run_table_sql(const RunTable<Row, N>& t, int version)
{
    using namespace run_table_detail;
    std::string create = std::string("CREATE TABLE ") + t.name + "(run INTEGER NOT NULL";
    std::string columns = "run", placeholders = "?", selected = "run";
    for (const Column<Row>& c : t.columns) {
        if (is_counters(c)) {
            create += std::string(", ") + kCounterDdl;
            columns += std::string(", ") + kCounterColumns;
            for (int i = 0; i < kCounterColumnCount; ++i)
                placeholders += ", ?";
            selected += ", " + counter_columns(version);
            continue;
        }
        const char* type = is_text(c) ? " TEXT NOT NULL" : " INTEGER NOT NULL";
        create += std::string(", ") + c.name + type;
        if (c.since_version > 1)
            create += is_text(c) ? " DEFAULT ''" : " DEFAULT 0";
        columns += std::string(", ") + c.name;
        placeholders += ", ?";
        selected += version >= c.since_version ? std::string(", ") + c.name : is_text(c) ? ", ''" : ", 0";
    }
    create += ");";
    if (t.options.index_by_run)
        create += std::string("CREATE INDEX ") + t.name + "_by_run ON " + t.name + "(run);";
    return {create, std::string("INSERT INTO ") + t.name + "(" + columns + ") VALUES(" + placeholders + ")",
            "SELECT " + selected + " FROM " + t.name + " ORDER BY run, " + t.columns[0].name + ", rowid"};
}

// Binds one row, stored under `run`, to a statement made from
// run_table_sql().insert.
template <typename Row, size_t N>
void bind_run_row(sqlite3_stmt* st, const RunTable<Row, N>& t, int64_t run, const Row& row)
{
    int col = 1;
    sqlite3_bind_int64(st, col++, run);
    for (const Column<Row>& c : t.columns) {
        std::visit(
            [&](auto member) {
                using T = std::remove_cvref_t<decltype(row.*member)>;
                const T& v = row.*member;
                if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, uint32_t>)
                    sqlite3_bind_int64(st, col++, int64_t(v));
                else if constexpr (std::is_same_v<T, uint64_t>)
                    sqlite3_bind_int64(st, col++, to_db(v));
                else if constexpr (std::is_same_v<T, std::string>)
                    bind_text(st, col++, v);
                else if constexpr (std::is_same_v<T, std::vector<std::string>>)
                    bind_text(st, col++, run_table_detail::join_lines(v));
                else {
                    bind_counters(st, col, v);
                    col += kCounterColumnCount;
                }
            },
            c.member);
    }
}

// Reads one row of a statement made from run_table_sql().select, checking
// each column's type and range; a problem fails `r`, and the row should be
// skipped. What the ids name is the caller's to check (lock_ids_of).
template <typename Row, size_t N>
Row read_run_row(RowReader& r, const RunTable<Row, N>& t)
{
    Row row{};
    int col = 0;
    row.run = r.i64(col++, "run");
    for (const Column<Row>& c : t.columns) {
        std::visit(
            [&](auto member) {
                using T = std::remove_cvref_t<decltype(row.*member)>;
                T& v = row.*member;
                if constexpr (std::is_same_v<T, int64_t>)
                    v = r.i64(col++, c.name);
                else if constexpr (std::is_same_v<T, uint64_t>)
                    v = r.u64(col++, c.name);
                else if constexpr (std::is_same_v<T, uint32_t>) {
                    const uint64_t wide = r.u64(col++, c.name);
                    if (wide > UINT32_MAX)
                        r.fail(std::string(c.name) + " out of range");
                    v = uint32_t(wide);
                } else if constexpr (std::is_same_v<T, std::string>)
                    v = r.text(col++, c.name);
                else if constexpr (std::is_same_v<T, std::vector<std::string>>)
                    v = run_table_detail::split_lines(r.text(col++, c.name));
                else {
                    r.counters(col, v);
                    col += kCounterColumnCount;
                }
            },
            c.member);
    }
    return row;
}

// Calls fn(id) for each lock id the row names.
template <typename Row, size_t N, typename Fn>
void lock_ids_of(const RunTable<Row, N>& t, const Row& row, Fn&& fn)
{
    for (const Column<Row>& c : t.columns)
        if (c.refers == Refers::lock)
            fn(row.*std::get<int64_t Row::*>(c.member));
}

}  // namespace lockscope::detail
