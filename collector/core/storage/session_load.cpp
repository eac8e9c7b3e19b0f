// Reading session files. Files may come from other machines, other users
// or an interrupted recorder, so every row is validated: bad rows are
// skipped and counted in Session::warnings, never trusted.
#include "core/storage/policy_labels.h"
#include "core/error.h"
#include "core/storage/session_schema.h"
#include "core/storage/session_store.h"
#include "core/storage/session_tables.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

namespace lockscope {

using detail::RowReader;
using detail::Stmt;

namespace {

Error not_a_session(const std::string& path, const std::string& why)
{
    return Error("'" + path + "' is not a lockscope session", "", 0, why);
}

// Rejects what SQLite would misreport or block on (directories, FIFOs,
// empty files, other formats) before handing the path over.
void check_file(const std::string& path)
{
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        throw Error("cannot open session file", path, errno);
    if (S_ISDIR(st.st_mode))
        throw not_a_session(path, "it is a directory");
    if (!S_ISREG(st.st_mode))
        throw not_a_session(path, "it is not a regular file");
    if (st.st_size == 0)
        throw not_a_session(path, "the file is empty");
    int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        throw Error("cannot open session file", path, errno);
    char magic[16] = {};
    ssize_t n = ::read(fd, magic, sizeof magic);
    ::close(fd);
    if (n != ssize_t(sizeof magic) || std::memcmp(magic, "SQLite format 3", 16) != 0)
        throw not_a_session(path, "it is not an SQLite database");
}

std::string uri_escape(const std::string& path)
{
    std::string out = "file:";
    for (unsigned char c : path) {
        if (c == '%' || c == '?' || c == '#' || c < 0x20) {
            char buf[4];
            std::snprintf(buf, sizeof buf, "%%%02X", c);
            out += buf;
        } else {
            out += char(c);
        }
    }
    return out;
}

struct Db {
    sqlite3* db = nullptr;
    Db() = default;
    Db(const Db&) = delete;
    Db& operator=(const Db&) = delete;
    ~Db() { sqlite3_close_v2(db); }
};

int query_int(sqlite3* db, const char* sql, int* out)
{
    sqlite3_stmt* st = nullptr;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, nullptr);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            *out = sqlite3_column_int(st, 0);
            rc = SQLITE_OK;
        }
    }
    sqlite3_finalize(st);
    return rc;
}

// Opens read-only inside one read transaction (a consistent snapshot while
// a recorder appends) and checks the schema version before anything else.
void open_readonly(const std::string& path, Db& h, int* version)
{
    check_file(path);
    for (bool immutable : {false, true}) {
        sqlite3_close_v2(h.db);
        h.db = nullptr;
        // A file left in WAL mode by a killed recorder in a directory we
        // cannot write: SQLite cannot create the -shm, so read it as is.
        std::string name = immutable ? uri_escape(path) + "?immutable=1" : path;
        // One connection per load, used by one thread: no per-call mutex
        // (every sqlite3_column_* would otherwise lock and unlock one).
        int flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | (immutable ? SQLITE_OPEN_URI : 0);
        int rc = sqlite3_open_v2(name.c_str(), &h.db, flags, nullptr);
        if (rc == SQLITE_OK) {
            sqlite3_busy_timeout(h.db, 2000);
            rc = sqlite3_exec(h.db, "BEGIN", nullptr, nullptr, nullptr);
        }
        if (rc == SQLITE_OK)
            rc = query_int(h.db, "PRAGMA user_version", version);
        if (rc == SQLITE_OK)
            break;
        int code = rc & 0xff;
        if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT)
            throw not_a_session(path, "it is not an SQLite database or is damaged");
        if (immutable || (code != SQLITE_CANTOPEN && code != SQLITE_READONLY))
            throw Error("cannot open session file", path, 0, h.db ? sqlite3_errmsg(h.db) : sqlite3_errstr(rc));
    }
    if (*version > kSchemaVersion)
        throw Error("cannot read session file", path, 0,
                    "it has schema version " + std::to_string(*version) + "; this lockscope reads versions up to " +
                        std::to_string(kSchemaVersion) + ", use a newer lockscope");
    if (*version < 1)
        throw not_a_session(path, "it is an SQLite database without a lockscope schema version");
}

// Prepares a query against the session schema; a missing table or column
// means the file is some other database.
Stmt select(sqlite3* db, const std::string& path, const std::string& sql)
{
    try {
        return Stmt(db, sql.c_str());
    } catch (const std::runtime_error& e) {
        throw not_a_session(path, e.what());
    }
}

// Counts skipped rows per table; one warning line each.
class Skips {
public:
    void add(const char* table, const std::string& why)
    {
        auto& [count, first] = by_table_[table];
        if (count++ == 0)
            first = why;
    }
    void report(std::vector<std::string>& out) const
    {
        for (const auto& [table, entry] : by_table_)
            out.push_back("skipped " + std::to_string(entry.first) + " invalid row" + (entry.first == 1 ? "" : "s") +
                          " of table " + table + " (first: " + entry.second + ")");
    }

private:
    std::map<std::string, std::pair<size_t, std::string>> by_table_;
};

// Steps a query, handing each row to `row`; an I/O error mid-way is an Error.
template <typename Fn>
void each_row(sqlite3* db, sqlite3_stmt* st, const std::string& path, Fn&& row)
{
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        row();
    if (rc != SQLITE_DONE)
        throw Error("cannot read session file", path, 0, sqlite3_errmsg(db));
}

// Number of rows a query's table holds, to reserve before loading; 0 on
// any problem (the load then reports it).
size_t row_count(sqlite3* db, const char* table)
{
    std::string sql = std::string("SELECT count(*) FROM ") + table;
    sqlite3_stmt* st = nullptr;
    size_t out = 0;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        out = size_t(std::max<sqlite3_int64>(sqlite3_column_int64(st, 0), 0));
    sqlite3_finalize(st);
    return std::min<size_t>(out, size_t(1) << 26);  // a hostile count must not exhaust memory
}

// Per-interval lock rows rolled up into one row per (run, lock), in
// (run, lock_id) order, index kRunTotalIndex.
std::vector<LockInterval> run_totals(const std::vector<LockInterval>& rows)
{
    std::map<std::pair<int64_t, int64_t>, LockCounters> totals;
    for (const LockInterval& li : rows)
        totals[{li.run, li.lock_id}].add(li.counters);
    std::vector<LockInterval> out;
    out.reserve(totals.size());
    for (auto& [key, c] : totals)
        out.push_back({key.first, kRunTotalIndex, key.second, c});
    return out;
}

// One row per (run, lock) with that run's totals, added up while stepping
// through the rows in key order (no sort, no per-interval vector: SQLite's
// GROUP BY sorts a million rows and takes seconds). Returns false when a
// row would be rejected by the full loader (wrong type, negative, malformed
// sparse text, unknown run or lock): the caller then loads the rows in full
// so warnings and totals are exactly the full load's. Sums saturate like
// LockCounters::add, so the totals equal the full load's roll-up.
bool load_run_totals(sqlite3* db, const std::string& path, Session& s, const std::set<int64_t>& run_ids)
{
    Stmt q = select(db, path,
                    "SELECT run, lock_id, idx, " + detail::counter_columns(s.schema_version) +
                        " FROM lock_intervals ORDER BY run, idx, lock_id");
    sqlite3_stmt* st = q.get();
    std::vector<LockInterval> out;
    // Per run, the lock's slot in `out`; locks are few and dense per run.
    std::unordered_map<int64_t, size_t> slot_of_lock;
    int64_t current_run = 0;
    bool any = false;
    LockCounters row;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        RowReader r(st);
        const int64_t run = r.i64(0, "run");
        const int64_t lock_id = r.i64(1, "lock_id");
        r.i64(2, "idx");  // not needed for a total, but a row the full load skips must not count
        r.counters(3, row);
        if (!r.ok())
            return false;
        if (!any || run != current_run) {
            if (!run_ids.count(run))
                return false;
            any = true;
            current_run = run;
            slot_of_lock.clear();
        }
        auto [it, added] = slot_of_lock.try_emplace(lock_id, out.size());
        if (added) {
            if (!s.lock(lock_id))
                return false;
            out.push_back({run, kRunTotalIndex, lock_id, {}});
        }
        out[it->second].counters.add(row);
    }
    if (rc != SQLITE_DONE)
        throw Error("cannot read session file", path, 0, sqlite3_errmsg(db));
    // The full load's order: by run, then lock.
    std::sort(out.begin(), out.end(), [](const LockInterval& a, const LockInterval& b) {
        return std::pair(a.run, a.lock_id) < std::pair(b.run, b.lock_id);
    });
    s.lock_intervals = std::move(out);
    return true;
}

}  // namespace

Session load_session(const std::string& path)
{
    return load_session(path, LoadOptions{});
}

namespace {

// One loader per table. Each reads its rows in key order and skips (and
// counts, for the warnings) a row it cannot use, so one bad row costs that
// row; the order matters: runs and locks first, for the rows that name them.
class Loader {
public:
    explicit Loader(const std::string& path) : path_(path)
    {
        open_readonly(path, h_, &s_.schema_version);
        db_ = h_.db;
    }

    Session load(const LoadOptions& options)
    {
        meta();
        runs();
        locks();
        intervals();
        lock_intervals(options);
        detail::for_each_run_table([&](const auto& table) { run_rows(table); });
        skips_.report(s_.warnings);
        upgrade_policy_labels(s_);
        return std::move(s_);
    }

private:
    template <typename Fn>
    void each(const std::string& sql, Fn&& row)
    {
        Stmt q = select(db_, path_, sql);
        each_row(db_, q.get(), path_, [&] {
            RowReader r(q.get());
            row(r);
        });
    }

    // Rows come ordered by run: one look-up per run.
    void known_run(RowReader& r, int64_t run)
    {
        if (r.ok() && last_run_ == run)
            return;
        if (r.ok() && run_ids_.count(run))
            last_run_ = run;
        else if (r.ok())
            r.fail("run " + std::to_string(run) + " does not exist");
    }

    void known_lock(RowReader& r, int64_t id)
    {
        if (r.ok() && !s_.lock(id))
            r.fail("lock " + std::to_string(id) + " does not exist");
    }

    // Whether the file has `table`: none before its version. One added to a
    // version without a bump (lock_cgroups and holder_tasks to version 3)
    // may be missing from a file of that version, which loads without it.
    // Every later file has it: there its absence is damage, said in the
    // warnings, and the rest still loads (files are opened read-only, so
    // none is migrated; a format change since is a version bump, read by
    // version).
    bool has_run_table(const char* table, const detail::TableOptions& options)
    {
        if (s_.schema_version < options.since_version)
            return false;
        if (!options.added_within_version || has_table(table))
            return true;
        if (s_.schema_version > options.since_version)
            s_.warnings.push_back(std::string("table ") + table + " is missing (every file of schema version " +
                                  std::to_string(s_.schema_version) + " has it): its data is not shown");
        return false;
    }

    bool has_table(const char* name)
    {
        int n = 0;
        const std::string sql =
            std::string("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '") + name + "'";
        if (query_int(db_, sql.c_str(), &n) != SQLITE_OK)
            throw Error("cannot read session file", path_, 0, sqlite3_errmsg(db_));
        return n == 1;
    }

    void meta()
    {
        each("SELECT key, value FROM meta", [&](RowReader& r) {
            std::string key = r.text(0, "key"), value = r.text(1, "value");
            if (r.ok())
                s_.meta[key] = value;
            else
                skips_.add("meta", r.why());
        });
    }

    // Version 1 gained lost columns without a bump: a missing one reads as 0.
    std::vector<std::string> lost_columns_missing_in_version1()
    {
        std::vector<std::string> missing;
        if (s_.schema_version >= 2)
            return missing;
        for (const std::string& column : detail::lost_column_names()) {
            if (std::find(std::begin(detail::kLostColumnsInEveryVersion1),
                          std::end(detail::kLostColumnsInEveryVersion1),
                          column) != std::end(detail::kLostColumnsInEveryVersion1))
                continue;
            int present = 0;
            const std::string sql = "SELECT count(*) FROM pragma_table_info('runs') WHERE name = '" + column + "'";
            if (query_int(db_, sql.c_str(), &present) != SQLITE_OK)
                throw Error("cannot read session file", path_, 0, sqlite3_errmsg(db_));
            if (!present)
                missing.push_back(column);
        }
        return missing;
    }

    void runs()
    {
        each("SELECT " + detail::table_sql(detail::kRunTable, s_.schema_version).selected + ", " +
                 detail::lost_columns(lost_columns_missing_in_version1()) + " FROM runs ORDER BY id",
             [&](RowReader& r) {
                 RunInfo run = detail::read_row(r, detail::kRunTable);
                 int col = int(detail::kRunTable.columns.size());
                 for (const LostField& f : kLostFields)
                     run.lost.*f.member = r.u64(col++, f.column);
                 if (!r.ok())
                     return skips_.add("runs", r.why());
                 run_ids_.insert(run.id);
                 s_.runs.push_back(std::move(run));
             });
    }

    void locks()
    {
        rows_of(detail::kLockTable, s_.locks, [](RowReader& r, LockInfo& l) {
            if (r.ok() && l.name.empty())
                r.fail("empty lock name");
        });
    }

    void intervals()
    {
        s_.intervals.reserve(row_count(db_, "intervals"));
        rows_of(detail::kIntervalTable, s_.intervals, [](RowReader& r, IntervalTotals& t) {
            if (r.ok() && t.end_ns < t.start_ns)
                r.fail("interval ends before it starts");
            // Idle accounting at interval edges can overshoot slightly.
            t.idle_ns = std::min(t.idle_ns, t.cpu_ns);
        });
    }

    void lock_intervals(const LoadOptions& options)
    {
        if (!options.lock_intervals && !options.lock_totals)
            return;  // nothing per lock: a first look
        if (!options.lock_intervals && load_run_totals(db_, path_, s_, run_ids_))
            return;
        s_.lock_intervals.clear();
        s_.lock_intervals.reserve(row_count(db_, "lock_intervals"));
        rows_of(detail::kLockIntervalTable, s_.lock_intervals);
        if (!options.lock_intervals)
            s_.lock_intervals = run_totals(s_.lock_intervals);
    }

    // One per-run table (session_tables.h), if the file's version has it.
    template <typename Table>
    void run_rows(const Table& table)
    {
        if (has_run_table(table.name, table.options))
            rows_of(table, s_.*table.loaded);
    }

    // A table's rows in key order, each checked by its columns' types, by
    // `check` and against the runs and locks it names; a row that fails is
    // skipped and counted.
    template <typename Table, typename Check = void (*)(RowReader&, typename Table::RowType&)>
    void rows_of(
        const Table& table, std::vector<typename Table::RowType>& out,
        Check&& check = [](RowReader&, typename Table::RowType&) {})
    {
        each(detail::table_sql(table, s_.schema_version).select, [&](RowReader& r) {
            auto row = detail::read_row(r, table);
            check(r, row);
            if constexpr (detail::PerRun<typename Table::RowType>)
                known_run(r, row.run);
            detail::lock_ids_of(table, row, [&](int64_t id) { known_lock(r, id); });
            if (!r.ok())
                return skips_.add(table.name, r.why());
            out.push_back(std::move(row));
        });
    }

    std::string path_;
    Db h_;
    sqlite3* db_ = nullptr;
    Session s_;
    Skips skips_;
    std::set<int64_t> run_ids_;
    std::optional<int64_t> last_run_;
};

}  // namespace

Session load_session(const std::string& path, const LoadOptions& options)
{
    return Loader(path).load(options);
}

struct EpisodeReader::Impl {
    std::string path;
    Db h;
    bool has_table = false;
    bool has_wake = false;  // waker_tgid and wake_ns, added later without a bump
};

EpisodeReader::EpisodeReader(const std::string& path) : impl_(std::make_unique<Impl>())
{
    impl_->path = path;
    int version = 0;
    open_readonly(path, impl_->h, &version);
    int tables = 0;
    if (query_int(impl_->h.db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'episodes'",
                  &tables) != SQLITE_OK)
        throw Error("cannot read session file", path, 0, sqlite3_errmsg(impl_->h.db));
    impl_->has_table = tables == 1;
    // waker_tgid and wake_ns came to version 3 without a bump (every later
    // file has them); a file without them reads as never woken.
    int wake = 0;
    if (impl_->has_table &&
        query_int(impl_->h.db, "SELECT count(*) FROM pragma_table_info('episodes') WHERE name = 'wake_ns'", &wake) !=
            SQLITE_OK)
        throw Error("cannot read session file", path, 0, sqlite3_errmsg(impl_->h.db));
    impl_->has_wake = wake == 1;
}

EpisodeReader::EpisodeReader(EpisodeReader&&) noexcept = default;
EpisodeReader& EpisodeReader::operator=(EpisodeReader&&) noexcept = default;
EpisodeReader::~EpisodeReader() = default;

size_t EpisodeReader::count()
{
    return impl_->has_table ? row_count(impl_->h.db, "episodes") : 0;
}

uint64_t EpisodeReader::first_begin_ns()
{
    if (!impl_->has_table)
        return 0;
    Stmt q = select(impl_->h.db, impl_->path,
                    "SELECT min(begin_ns) FROM episodes WHERE typeof(begin_ns) = 'integer' "
                    "AND begin_ns >= 0");
    uint64_t out = 0;
    each_row(impl_->h.db, q.get(), impl_->path, [&] {
        if (sqlite3_column_type(q.get(), 0) == SQLITE_INTEGER)
            out = uint64_t(sqlite3_column_int64(q.get(), 0));
    });
    return out;
}

size_t EpisodeReader::for_each(const std::function<void(const Episode&)>& fn)
{
    if (!impl_->has_table)
        return 0;
    sqlite3* db = impl_->h.db;
    const std::string& path = impl_->path;
    // Episodes name their lock by key, as the kernel saw it; the session's
    // lock rows carry the same key.
    std::map<std::pair<uint64_t, uint32_t>, int64_t> lock_ids;
    Stmt q = select(db, path, "SELECT id, address, flags FROM locks");
    each_row(db, q.get(), path, [&] {
        RowReader r(q.get());
        const int64_t id = r.i64(0, "id");
        const uint64_t address = uint64_t(r.i64(1, "address"));
        const uint64_t flags = r.u64(2, "flags");
        if (r.ok() && flags <= UINT32_MAX)
            lock_ids.emplace(std::pair(address, uint32_t(flags)), id);
    });

    size_t skipped = 0;
    q = select(db, path,
               "SELECT run, tid, tgid, lock_address, lock_flags, begin_ns, end_ns, spin_ns, "
               "sleep_ns, preempt_ns, sleeps, preemptions, ret, waker, truncated, phases, " +
                   std::string(impl_->has_wake ? "waker_tgid, wake_ns " : "0, 0 ") + "FROM episodes ORDER BY rowid");
    Episode e;
    each_row(db, q.get(), path, [&] {
        RowReader r(q.get());
        e.run = r.i64(0, "run");
        e.tid = r.u32(1, "tid");
        e.tgid = r.u32(2, "tgid");
        e.lock_address = uint64_t(r.i64(3, "lock_address"));
        e.lock_flags = r.u32(4, "lock_flags");
        e.begin_ns = r.u64(5, "begin_ns");
        e.end_ns = r.u64(6, "end_ns");
        e.spin_ns = r.u64(7, "spin_ns");
        e.sleep_ns = r.u64(8, "sleep_ns");
        e.preempt_ns = r.u64(9, "preempt_ns");
        e.sleeps = r.u32(10, "sleeps");
        e.preemptions = r.u32(11, "preemptions");
        const int64_t ret = r.i64(12, "ret");
        e.waker_tid = r.u32(13, "waker");
        e.truncated = r.u64(14, "truncated") != 0;
        const std::string phases = r.text(15, "phases");
        e.waker_tgid = r.u32(16, "waker_tgid");
        e.wake_ns = r.u64(17, "wake_ns");
        if (r.ok() && (ret < INT32_MIN || ret > INT32_MAX))
            r.fail("ret out of range");
        if (r.ok() && e.end_ns < e.begin_ns)
            r.fail("episode ends before it begins");
        if (r.ok() && !decode_phases(phases, e))
            r.fail("malformed phases");
        if (!r.ok()) {
            skipped++;
            return;
        }
        e.ret = int32_t(ret);
        auto id = lock_ids.find({e.lock_address, e.lock_flags});
        e.lock_id = id == lock_ids.end() ? 0 : id->second;
        fn(e);
    });
    return skipped;
}

SessionSummary peek_session(const std::string& path)
{
    Db h;
    SessionSummary sum;
    open_readonly(path, h, &sum.schema_version);
    sqlite3* db = h.db;

    Stmt q = select(db, path, "SELECT key, value FROM meta");
    each_row(db, q.get(), path, [&] {
        RowReader r(q.get());
        std::string key = r.text(0, "key"), value = r.text(1, "value");
        if (r.ok())
            sum.meta[key] = value;
    });
    // Hostile values must not make the duration negative or overflow.
    q = select(db, path,
               "SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM locks), "
               "(SELECT count(*) FROM intervals), "
               "(SELECT total(max(end_ns - start_ns, 0)) FROM intervals "
               "  WHERE typeof(end_ns) = 'integer' AND typeof(start_ns) = 'integer'), "
               "EXISTS(SELECT 1 FROM runs WHERE status = 'running')");
    each_row(db, q.get(), path, [&] {
        sqlite3_stmt* st = q.get();
        sum.runs = size_t(sqlite3_column_int64(st, 0));
        sum.locks = size_t(sqlite3_column_int64(st, 1));
        sum.intervals = size_t(sqlite3_column_int64(st, 2));
        sum.duration_s = sqlite3_column_double(st, 3) / 1e9;
        sum.recording = sqlite3_column_int(st, 4) != 0;
    });
    return sum;
}

}  // namespace lockscope
