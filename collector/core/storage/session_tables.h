// Internal to the session store: the tables whose rows are read and written
// through a declaration of their columns, each bound to a member of its row
// type (locks, intervals, lock_intervals and the per-run tables). The
// writer's INSERT and binding, the loader's SELECT for a file's version and
// its checked read, and for the per-run tables the CREATE TABLE, all come
// from the declaration. A new per-run table (stacks, edges, lock_cgroups,
// holder_tasks, tasks, user_locks and its companions so far) is one entry in kRunTables, beside its row
// type in model.h and the vectors that hold its rows in Session and
// IntervalBatch: SessionWriter::write_interval replaces a run's rows with
// the batch's, and load_session reads them back.
#pragma once

#include "core/model.h"
#include "core/storage/session_schema.h"

#include <sqlite3.h>

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
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
//   std::optional<double>     REAL, NULL when unknown, else finite and >= 0
//   Histogram                 TEXT, sparse "bucket:count ..." (encode_sparse)
//   LockCounters              the kCounterColumnCount counter columns, read by
//                             the file's version (counter_columns)
using Histogram = std::array<uint64_t, kHistBuckets>;

template <typename Row>
using ColumnMember =
    std::variant<int64_t Row::*, uint64_t Row::*, uint32_t Row::*, std::string Row::*, std::vector<std::string> Row::*,
                 std::optional<double> Row::*, Histogram Row::*, LockCounters Row::*>;

// What an id column names; a row naming a lock the file does not have is skipped.
enum class Refers { nothing, lock };

template <typename Row>
struct Column {
    const char* name;  // for LockCounters only a label: the columns are the counters'
    ColumnMember<Row> member;
    Refers refers = Refers::nothing;
    int since_version = 1;     // a file older than this reads it as "" or 0
    bool bit_pattern = false;  // a uint64_t stored as its bits (an address): any INTEGER
};

// Rows with a run (int64_t Row::run) belong to a run: their table starts
// with `run INTEGER NOT NULL`, is read by run first, and a row of a run the
// file does not have is skipped.
template <typename Row>
concept PerRun = std::same_as<decltype(Row::run), int64_t>;

struct TableOptions {
    int since_version = 1;              // older files have no such table: no rows
    bool added_within_version = false;  // came to since_version without a bump: such a file may lack it
    bool index_by_run = false;          // an index on run, for tables with many rows per run
    const char* key = nullptr;          // the columns (after run) rows are read in; else the first, then insertion
};

template <typename Row, size_t N>
struct SessionTable {
    using RowType = Row;
    const char* name;
    std::vector<Row> Session::*loaded;         // where load_session puts the rows; null: not in a Session
    std::vector<Row> IntervalBatch::*written;  // the rows that replace the run's on every interval
    std::array<Column<Row>, N> columns;        // after run, for a PerRun row
    TableOptions options;
};

template <typename Row, size_t N>
constexpr SessionTable<Row, N> session_table(const char* name, std::vector<Row> Session::*loaded,
                                             std::vector<Row> IntervalBatch::*written, const Column<Row> (&columns)[N],
                                             TableOptions options = {})
{
    SessionTable<Row, N> table{name, loaded, written, {}, options};
    for (size_t i = 0; i < N; ++i)
        table.columns[i] = columns[i];
    return table;
}

// A table that is not one of kRunTables.
template <typename Row, size_t N>
constexpr SessionTable<Row, N> session_table(const char* name, const Column<Row> (&columns)[N],
                                             TableOptions options = {})
{
    return session_table<Row, N>(name, nullptr, nullptr, columns, options);
}

// The session's locks, added as they are first seen (keyed by id in
// kFixedTablesSql). Version 2 added where each lock's name came from
// (name_source), the evidence (detail) and its object (instance).
inline constexpr auto kLockTable =
    session_table<LockInfo>("locks",
                            {{"id", &LockInfo::id},
                             {"name", &LockInfo::name},
                             {"kind", &LockInfo::kind},
                             {"mode", &LockInfo::mode},
                             {"caller", &LockInfo::caller},
                             {.name = "address", .member = &LockInfo::address, .bit_pattern = true},
                             {"flags", &LockInfo::flags},
                             {.name = "name_source", .member = &LockInfo::name_source, .since_version = 2},
                             {.name = "detail", .member = &LockInfo::detail, .since_version = 2},
                             {.name = "instance", .member = &LockInfo::instance, .since_version = 2}},
                            {.key = "id"});

// The runs, one row each, but for the lost counters (kLostFields, whose
// columns version 1 may lack: lost_columns()). A row is added when a run
// begins and updated as it goes (the writer's own UPDATE).
constexpr SessionTable<RunInfo, 6 + std::size(kRunFields)> run_table()
{
    SessionTable<RunInfo, 6 + std::size(kRunFields)> t{"runs",
                                                       nullptr,
                                                       nullptr,
                                                       {{{"id", &RunInfo::id},
                                                         {"label", &RunInfo::label},
                                                         {"start_ns", &RunInfo::start_ns},
                                                         {"end_ns", &RunInfo::end_ns},
                                                         {"status", &RunInfo::status},
                                                         {"ops", &RunInfo::ops}}},
                                                       {.key = "id"}};
    for (size_t i = 0; i < std::size(kRunFields); ++i)
        t.columns[6 + i] = {kRunFields[i].name, kRunFields[i].member, Refers::nothing, kRunFields[i].since_version};
    return t;
}
inline constexpr auto kRunTable = run_table();

// The rows of each interval, appended as it ends (their CREATE TABLE,
// keyed by run and idx, is in kFixedTablesSql). Each row is written under
// its batch's run and interval index.
inline constexpr auto kIntervalTable = session_table<IntervalTotals>("intervals",
                                                                     {{"idx", &IntervalTotals::index},
                                                                      {"start_ns", &IntervalTotals::start_ns},
                                                                      {"end_ns", &IntervalTotals::end_ns},
                                                                      {"idle_ns", &IntervalTotals::idle_ns},
                                                                      {"cpu_ns", &IntervalTotals::cpu_ns},
                                                                      {"events", &IntervalTotals::events},
                                                                      {"lost", &IntervalTotals::lost},
                                                                      {"ops", &IntervalTotals::ops},
                                                                      {"counters", &IntervalTotals::counters}},
                                                                     {.key = "idx"});
inline constexpr auto kLockIntervalTable =
    session_table<LockInterval>("lock_intervals",
                                {{"idx", &LockInterval::index},
                                 {"lock_id", &LockInterval::lock_id, Refers::lock},
                                 {"counters", &LockInterval::counters}},
                                {.key = "idx, lock_id"});

// The user-lock tables came to version 5 without a bump: a reader of
// version 5 that knows none of them reads the rest of the file as before.
inline constexpr TableOptions kUserLockTableOptions = {.since_version = 5, .added_within_version = true};

// The session's per-run tables, in load order (a missing table's warning
// comes in this order too).
inline constexpr auto kRunTables = std::tuple(
    session_table("stacks", &Session::stacks, &IntervalBatch::stacks,
                  {{"lock_id", &StackSample::lock_id, Refers::lock},
                   {"role", &StackSample::role},
                   {"frames", &StackSample::frames},
                   {"samples", &StackSample::samples},
                   {"wait_ns", &StackSample::wait_ns}},
                  {.index_by_run = true}),
    session_table("edges", &Session::edges, &IntervalBatch::edges,
                  {{"lock_id", &WaitEdge::lock_id, Refers::lock},
                   {"holder_lock_id", &WaitEdge::holder_lock_id, Refers::lock},
                   {"samples", &WaitEdge::samples},
                   {"wait_ns", &WaitEdge::wait_ns}},
                  {.since_version = 3}),
    session_table("lock_cgroups", &Session::lock_cgroups, &IntervalBatch::lock_cgroups,
                  {{"lock_id", &LockCgroup::lock_id, Refers::lock},
                   {"cgroup", &LockCgroup::cgroup},
                   {"samples", &LockCgroup::samples}},
                  {.since_version = 3, .added_within_version = true}),
    session_table("holder_tasks", &Session::holder_tasks, &IntervalBatch::holder_tasks,
                  {{"lock_id", &HolderTask::lock_id, Refers::lock},
                   {"tid", &HolderTask::tid},
                   {"tgid", &HolderTask::tgid},
                   {"comm", &HolderTask::comm},
                   {"samples", &HolderTask::samples}},
                  {.since_version = 3, .added_within_version = true}),
    session_table("holder_times", &Session::holder_times, &IntervalBatch::holder_times,
                  {{"lock_id", &HolderTime::lock_id, Refers::lock},
                   {"role", &HolderTime::role},
                   {"tid", &HolderTime::tid},
                   {"tgid", &HolderTime::tgid},
                   {"comm", &HolderTime::comm},
                   {"running_ns", &HolderTime::running_ns},
                   {"runnable_ns", &HolderTime::runnable_ns},
                   {"asleep_ns", &HolderTime::asleep_ns},
                   {"waits", &HolderTime::waits}},
                  {.since_version = 7}),
    session_table("tasks", &Session::tasks, &IntervalBatch::tasks,
                  {{"pid", &TaskStats::pid},
                   {"tgid", &TaskStats::tgid},
                   {"comm", &TaskStats::comm},
                   {"counters", &TaskStats::counters},
                   {.name = "cgroup", .member = &TaskStats::cgroup, .since_version = 3}},
                  {.index_by_run = true}),
    session_table("user_locks", &Session::user_locks, &IntervalBatch::user_locks,
                  {{"pid", &UserLockRow::pid},
                   {"name", &UserLockRow::name},
                   {"name_source", &UserLockRow::name_source},
                   {"module", &UserLockRow::module},
                   {"kind", &UserLockRow::kind},
                   {"caller", &UserLockRow::caller},
                   {"waits", &UserLockRow::waits},
                   {"wait_ns", &UserLockRow::wait_ns},
                   {"max_wait_ns", &UserLockRow::max_wait_ns},
                   {"samples", &UserLockRow::samples},
                   {"owner_tids", &UserLockRow::owner_tids},
                   {"ops", &UserLockRow::ops},
                   {.name = "oncpu_ns", .member = &UserLockRow::oncpu_ns, .since_version = 6},
                   {.name = "asleep_ns", .member = &UserLockRow::asleep_ns, .since_version = 6},
                   {.name = "runnable_ns", .member = &UserLockRow::runnable_ns, .since_version = 6},
                   {.name = "wakes", .member = &UserLockRow::wakes, .since_version = 6},
                   {.name = "hist", .member = &UserLockRow::hist, .since_version = 6},
                   {.name = "holder_running_ns", .member = &UserLockRow::holder_running_ns, .since_version = 9},
                   {.name = "holder_runnable_ns", .member = &UserLockRow::holder_runnable_ns, .since_version = 9},
                   {.name = "holder_asleep_ns", .member = &UserLockRow::holder_asleep_ns, .since_version = 9}},
                  kUserLockTableOptions),
    session_table("user_lock_left_out", &Session::user_lock_left_out, &IntervalBatch::user_lock_left_out,
                  {{"reason", &UserLockLeftOut::reason},
                   {"addresses", &UserLockLeftOut::addresses},
                   {"waits", &UserLockLeftOut::waits}},
                  kUserLockTableOptions),
    session_table("user_lock_runs", &Session::user_lock_runs, &IntervalBatch::user_lock_runs,
                  {{"status", &UserLockRun::status},
                   {"pids", &UserLockRun::pids},
                   {"samples", &UserLockRun::samples},
                   {"samples_unwound", &UserLockRun::samples_unwound},
                   {"lost_keys", &UserLockRun::lost_keys},
                   {"lost_samples", &UserLockRun::lost_samples},
                   {"lost_inflight", &UserLockRun::lost_inflight},
                   {"rate_limited", &UserLockRun::rate_limited},
                   {.name = "lost_wakers", .member = &UserLockRun::lost_wakers, .since_version = 6},
                   {.name = "untimed_waits", .member = &UserLockRun::untimed_waits, .since_version = 8},
                   {.name = "untimed_estimated_ns", .member = &UserLockRun::untimed_estimated_ns, .since_version = 8}},
                  kUserLockTableOptions),
    session_table("user_lock_chains", &Session::user_lock_chains, &IntervalBatch::user_lock_chains,
                  {{"pid", &UserLockChain::pid},
                   {"name", &UserLockChain::name},
                   {"kind", &UserLockChain::kind},
                   {"kernel_lock_id", &UserLockChain::kernel_lock_id, Refers::lock},
                   {"kernel_mode", &UserLockChain::kernel_mode},
                   {"waits", &UserLockChain::waits},
                   {"wait_ns", &UserLockChain::wait_ns},
                   {"max_wait_ns", &UserLockChain::max_wait_ns},
                   {"owner_tids", &UserLockChain::owner_tids},
                   {"root_tids", &UserLockChain::root_tids},
                   {"root_states", &UserLockChain::root_states}},
                  kUserLockTableOptions),
    session_table("user_lock_wakers", &Session::user_lock_wakers, &IntervalBatch::user_lock_wakers,
                  {{"pid", &UserLockWaker::pid},
                   {"name", &UserLockWaker::name},
                   {"kind", &UserLockWaker::kind},
                   {"waker_tid", &UserLockWaker::waker_tid},
                   {"waker_pid", &UserLockWaker::waker_pid},
                   {"waker_comm", &UserLockWaker::waker_comm},
                   {"wakes", &UserLockWaker::wakes}},
                  {.since_version = 6}),
    session_table("user_lock_holders", &Session::user_lock_holders, &IntervalBatch::user_lock_holders,
                  {{"pid", &UserLockHolder::pid},
                   {"name", &UserLockHolder::name},
                   {"kind", &UserLockHolder::kind},
                   {"role", &UserLockHolder::role},
                   {"tid", &UserLockHolder::tid},
                   {"tgid", &UserLockHolder::tgid},
                   {"comm", &UserLockHolder::comm},
                   {"running_ns", &UserLockHolder::running_ns},
                   {"runnable_ns", &UserLockHolder::runnable_ns},
                   {"asleep_ns", &UserLockHolder::asleep_ns},
                   {"waits", &UserLockHolder::waits}},
                  {.since_version = 9}),
    session_table("user_lock_stacks", &Session::user_lock_stacks, &IntervalBatch::user_lock_stacks,
                  {{"pid", &UserLockStack::pid},
                   {"name", &UserLockStack::name},
                   {"kind", &UserLockStack::kind},
                   {"frames", &UserLockStack::frames},
                   {"samples", &UserLockStack::samples},
                   {"wait_ns", &UserLockStack::wait_ns}},
                  {.since_version = 6}),
    session_table("kernel_lock_user_stacks", &Session::kernel_user_stacks, &IntervalBatch::kernel_user_stacks,
                  {{"lock_id", &KernelUserStack::lock_id, Refers::lock},
                   {"pid", &KernelUserStack::pid},
                   {"kernel_frames", &KernelUserStack::kernel_frames},
                   {"frames", &KernelUserStack::frames},
                   {"samples", &KernelUserStack::samples},
                   {"wait_ns", &KernelUserStack::wait_ns}},
                  {.since_version = 6, .added_within_version = true}),
    session_table("user_lock_words", &Session::user_lock_words, &IntervalBatch::user_lock_words,
                  {{"pid", &UserLockWord::pid},
                   {.name = "address", .member = &UserLockWord::address, .bit_pattern = true},
                   {"name", &UserLockWord::name},
                   {"kind", &UserLockWord::kind}},
                  {.since_version = 6, .added_within_version = true}),
    session_table("user_lock_instances", &Session::user_lock_instances, &IntervalBatch::user_lock_instances,
                  {{"pid", &UserLockInstance::pid},
                   {.name = "address", .member = &UserLockInstance::address, .bit_pattern = true},
                   {"shared", &UserLockInstance::shared},
                   {"name", &UserLockInstance::name},
                   {"kind", &UserLockInstance::kind},
                   {"waits", &UserLockInstance::waits},
                   {"wait_ns", &UserLockInstance::wait_ns},
                   {"max_wait_ns", &UserLockInstance::max_wait_ns},
                   {"samples", &UserLockInstance::samples},
                   {"oncpu_ns", &UserLockInstance::oncpu_ns},
                   {"asleep_ns", &UserLockInstance::asleep_ns},
                   {"runnable_ns", &UserLockInstance::runnable_ns},
                   {"wakes", &UserLockInstance::wakes},
                   {"hist", &UserLockInstance::hist}},
                  {.since_version = 6, .added_within_version = true}));

// Calls fn(table) for each of kRunTables, in order.
template <typename Fn>
void for_each_run_table(Fn&& fn)
{
    std::apply([&](const auto&... table) { (fn(table), ...); }, kRunTables);
}
inline constexpr size_t kRunTableCount = std::tuple_size_v<decltype(kRunTables)>;

// The SQL each declaration makes: the CREATE TABLE of one of kRunTables
// (and its index; the other tables' keys are in kFixedTablesSql), the
// INSERT of one row, and the SELECT a file of `version` is read with.
struct TableSql {
    std::string create, insert, select;
    std::string selected;  // the SELECT's column list alone
};

namespace table_detail {

template <typename Row>
bool is_counters(const Column<Row>& c)
{
    return std::holds_alternative<LockCounters Row::*>(c.member);
}

template <typename Row>
bool is_text(const Column<Row>& c)
{
    return std::holds_alternative<std::string Row::*>(c.member) ||
           std::holds_alternative<std::vector<std::string> Row::*>(c.member) ||
           std::holds_alternative<Histogram Row::*>(c.member);
}

std::string join_lines(const std::vector<std::string>& lines);
std::vector<std::string> split_lines(const std::string& text);

}  // namespace table_detail

template <typename Row, size_t N>
TableSql table_sql(const SessionTable<Row, N>& t, int version)
{
    using namespace table_detail;
    std::string create = std::string("CREATE TABLE ") + t.name + "(";
    std::string columns, placeholders, selected, order;
    if constexpr (PerRun<Row>) {
        create += "run INTEGER NOT NULL";
        columns = selected = order = "run";
        placeholders = "?";
    }
    for (const Column<Row>& c : t.columns) {
        const char* comma = columns.empty() ? "" : ", ";
        if (is_counters(c)) {
            create += comma + std::string(kCounterDdl);
            columns += comma + std::string(kCounterColumns);
            for (int i = 0; i < kCounterColumnCount; ++i)
                placeholders += i || *comma ? ", ?" : "?";
            selected += comma + counter_columns(version);
            continue;
        }
        const bool real = std::holds_alternative<std::optional<double> Row::*>(c.member);
        const char* type = real ? " REAL" : is_text(c) ? " TEXT NOT NULL" : " INTEGER NOT NULL";
        create += comma + std::string(c.name) + type;
        if (c.since_version > 1 && !real)
            create += is_text(c) ? " DEFAULT ''" : " DEFAULT 0";
        columns += comma + std::string(c.name);
        placeholders += comma + std::string("?");
        selected += comma + std::string(version >= c.since_version ? c.name : real ? "NULL" : is_text(c) ? "''" : "0");
    }
    create += ");";
    if (t.options.index_by_run)
        create += std::string("CREATE INDEX ") + t.name + "_by_run ON " + t.name + "(run);";
    return {create, std::string("INSERT INTO ") + t.name + "(" + columns + ") VALUES(" + placeholders + ")",
            "SELECT " + selected + " FROM " + t.name + " ORDER BY " + order + (order.empty() ? "" : ", ") +
                (t.options.key ? std::string(t.options.key) : t.columns[0].name + std::string(", rowid")),
            selected};
}

// Binds one row to a statement made from table_sql().insert; returns it.
template <typename Row, size_t N>
sqlite3_stmt* bind_row(sqlite3_stmt* st, const SessionTable<Row, N>& t, const Row& row)
{
    int col = 1;
    if constexpr (PerRun<Row>)
        sqlite3_bind_int64(st, col++, row.run);
    for (const Column<Row>& c : t.columns) {
        std::visit(
            [&](auto member) {
                using T = std::remove_cvref_t<decltype(row.*member)>;
                const T& v = row.*member;
                if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, uint32_t>)
                    sqlite3_bind_int64(st, col++, int64_t(v));
                else if constexpr (std::is_same_v<T, uint64_t>)
                    sqlite3_bind_int64(st, col++, c.bit_pattern ? int64_t(v) : to_db(v));
                else if constexpr (std::is_same_v<T, std::string>)
                    bind_text(st, col++, v);
                else if constexpr (std::is_same_v<T, std::vector<std::string>>)
                    bind_text(st, col++, table_detail::join_lines(v));
                else if constexpr (std::is_same_v<T, std::optional<double>>)
                    bind_opt(st, col++, v);
                else if constexpr (std::is_same_v<T, Histogram>)
                    bind_text(st, col++, encode_sparse(v.data(), v.size()));
                else {
                    bind_counters(st, col, v);
                    col += kCounterColumnCount;
                }
            },
            c.member);
    }
    return st;
}

// Reads one row of a statement made from table_sql().select, checking
// each column's type and range; a problem fails `r`, and the row should be
// skipped. What the ids name is the caller's to check (lock_ids_of).
template <typename Row, size_t N>
Row read_row(RowReader& r, const SessionTable<Row, N>& t)
{
    Row row{};
    int col = 0;
    if constexpr (PerRun<Row>)
        row.run = r.i64(col++, "run");
    for (const Column<Row>& c : t.columns) {
        std::visit(
            [&](auto member) {
                using T = std::remove_cvref_t<decltype(row.*member)>;
                T& v = row.*member;
                if constexpr (std::is_same_v<T, int64_t>)
                    v = r.i64(col++, c.name);
                else if constexpr (std::is_same_v<T, uint64_t>)
                    v = c.bit_pattern ? uint64_t(r.i64(col++, c.name)) : r.u64(col++, c.name);
                else if constexpr (std::is_same_v<T, uint32_t>)
                    v = r.u32(col++, c.name);
                else if constexpr (std::is_same_v<T, std::string>)
                    v = r.text(col++, c.name);
                else if constexpr (std::is_same_v<T, std::vector<std::string>>)
                    v = table_detail::split_lines(r.text(col++, c.name));
                else if constexpr (std::is_same_v<T, std::optional<double>>)
                    v = r.opt_real(col++, c.name);
                else if constexpr (std::is_same_v<T, Histogram>)
                    r.histogram(col++, c.name, v);
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
void lock_ids_of(const SessionTable<Row, N>& t, const Row& row, Fn&& fn)
{
    for (const Column<Row>& c : t.columns)
        if (c.refers == Refers::lock)
            fn(row.*std::get<int64_t Row::*>(c.member));
}

}  // namespace lockscope::detail
