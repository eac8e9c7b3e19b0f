// SessionWriter: the recorder's side of the session file. The loader is in
// session_load.cpp; the schema both agree on is in session_schema.h and
// session_tables.h.
#include "core/storage/session_store.h"

#include "core/error.h"
#include "core/storage/atomic_file.h"
#include "core/storage/session_schema.h"
#include "core/storage/session_tables.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <utility>

namespace lockscope {

using detail::bind_opt;
using detail::bind_text;
using detail::Stmt;
using detail::to_db;

namespace {

std::string placeholders(int n)
{
    std::string s;
    for (int i = 0; i < n; ++i)
        s += i ? ",?" : "?";
    return s;
}

constexpr const char* kCreateOp = "cannot create session file";

[[noreturn]] void throw_symlink(const std::string& path)
{
    throw Error(kCreateOp, path, 0, "it is a symbolic link, which lockscope will not follow");
}

// What must not be replaced is refused before anything is written: a
// symbolic link at the path (never followed), an existing file unless
// `overwrite`, something that is not a regular file, a session another
// lockscope is recording into. Returns the existing file, opened and
// flock()ed so that no recorder starts on it before it is replaced; -1
// where there is none.
int check_target(const std::string& path, bool overwrite)
{
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno == ENOENT)
            return -1;
        throw Error(kCreateOp, path, errno);
    }
    if (S_ISLNK(st.st_mode))
        throw_symlink(path);
    if (!overwrite)
        throw Error(kCreateOp, path, EEXIST, "choose another name, or overwrite it with --force");
    if (!S_ISREG(st.st_mode))
        throw Error(kCreateOp, path, 0, "it exists and is not a regular file");
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ELOOP)
            throw_symlink(path);
        throw Error(kCreateOp, path, errno);
    }
    // One recorder per file, held until the writer closes: a second one
    // (--force included) must not replace a session being written.
    // flock() is independent of SQLite's fcntl() locks.
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int e = errno;
        ::close(fd);
        if (e == EWOULDBLOCK)
            throw Error(kCreateOp, path, 0, "another lockscope is recording into it");
        throw Error(kCreateOp, path, e);
    }
    return fd;
}

// The new session's own file beside `path`, under a temporary name until
// its schema is written (atomic_file.h): an interrupted start leaves no half
// session at `path`. flock()ed: the lock stays with the file through the
// rename, for as long as the writer has it open.
int open_temporary(const std::string& path, std::string& temp)
{
    const int fd = create_temporary_beside(path, temp, 0644);
    if (fd < 0)
        throw Error(kCreateOp, path, errno);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int e = errno;
        ::close(fd);
        ::unlink(temp.c_str());
        throw Error(kCreateOp, path, e);
    }
    return fd;
}

// The finished temporary file takes the name: over the old file with
// `overwrite`, else only where there still is none.
void put_in_place(const std::string& temp, const std::string& path, bool overwrite)
{
    // Stale sidecars from an earlier session at this path would be replayed
    // into the new database.
    for (const char* suffix : {"-wal", "-shm", "-journal"})
        ::unlink((path + suffix).c_str());
    const int e = rename_into_place(temp, path, overwrite);
    if (e == 0)
        return;
    if (e == EEXIST)
        throw Error(kCreateOp, path, EEXIST, "choose another name, or overwrite it with --force");
    throw Error(kCreateOp, path, e);
}

}  // namespace

// The per-run tables' statements: each interval's rows replace the run's.
struct RunTableStatements {
    Stmt remove, insert;
};

struct SessionWriter::Statements {
    Stmt upsert_meta, insert_run, update_run, insert_lock, insert_interval, insert_lock_interval, insert_episode;
    std::array<RunTableStatements, detail::kRunTableCount> run_tables;
};

SessionWriter::SessionWriter(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}

SessionWriter::SessionWriter(SessionWriter&& o) noexcept
    : path_(std::move(o.path_)),
      db_(std::exchange(o.db_, nullptr)),
      stmts_(std::move(o.stmts_)),
      lock_fd_(std::exchange(o.lock_fd_, -1))
{
}

SessionWriter& SessionWriter::operator=(SessionWriter&& o) noexcept
{
    if (this != &o) {
        try {
            close();
        } catch (...) {
        }
        path_ = std::move(o.path_);
        db_ = std::exchange(o.db_, nullptr);
        stmts_ = std::move(o.stmts_);
        lock_fd_ = std::exchange(o.lock_fd_, -1);
    }
    return *this;
}

SessionWriter::~SessionWriter()
{
    try {
        close();
    } catch (...) {
    }
}

SessionWriter SessionWriter::create(const std::string& path, bool overwrite)
{
    const int old_fd = check_target(path, overwrite);
    struct OldFile {
        int fd;
        ~OldFile()
        {
            if (fd >= 0)
                ::close(fd);
        }
    } old{old_fd};
    std::string temp;
    const int fd = open_temporary(path, temp);
    SessionWriter w(path, nullptr);
    w.lock_fd_ = fd;  // the recorder's lock on the file, from here
    try {
        // The schema, in the temporary file; closed before the rename, since
        // SQLite names its sidecar files after the path it opened.
        if (sqlite3_open_v2(temp.c_str(), &w.db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, nullptr) != SQLITE_OK)
            w.fail(kCreateOp);
        w.exec("BEGIN IMMEDIATE");
        w.exec(detail::schema_sql().c_str());
        w.exec(("PRAGMA user_version=" + std::to_string(kSchemaVersion)).c_str());
        w.exec(("INSERT INTO meta(key, value) VALUES('schema_version', '" + std::to_string(kSchemaVersion) + "')")
                   .c_str());
        w.exec("COMMIT");
        if (sqlite3_close(std::exchange(w.db_, nullptr)) != SQLITE_OK)
            throw Error(kCreateOp, path, 0, "the new session could not be closed");
        put_in_place(temp, path, overwrite);
    } catch (...) {
        sqlite3_close_v2(std::exchange(w.db_, nullptr));
        ::unlink(temp.c_str());
        throw;
    }
    const int rc = sqlite3_open_v2(path.c_str(), &w.db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, nullptr);
    struct stat ours {
    }, theirs{};
    const bool same = ::fstat(fd, &ours) == 0 && ::lstat(path.c_str(), &theirs) == 0 && ours.st_dev == theirs.st_dev &&
                      ours.st_ino == theirs.st_ino;
    if (!same)
        throw Error(kCreateOp, path, 0, "it was replaced while being opened");
    try {
        if (rc != SQLITE_OK)
            w.fail(kCreateOp);
        sqlite3_busy_timeout(w.db_, 5000);
        // WAL lets report/GUI read while we record; NORMAL sync loses
        // nothing on a process kill (on power loss, the last intervals).
        w.exec("PRAGMA journal_mode=WAL");
        w.exec("PRAGMA synchronous=NORMAL");
        w.prepare();
    } catch (...) {
        // Leave no half-made file behind to block the retry, unless it
        // replaced the user's file (that one is gone either way).
        w.close();
        if (!overwrite)
            ::unlink(path.c_str());
        throw;
    }
    return w;
}

void SessionWriter::prepare()
{
    using std::string;
    stmts_ = std::make_unique<Statements>();
    Statements* s = stmts_.get();
    try {
        s->upsert_meta = Stmt(db_,
                              "INSERT INTO meta(key, value) VALUES(?, ?) "
                              "ON CONFLICT(key) DO UPDATE SET value = excluded.value");
        s->insert_run = Stmt(db_, "INSERT INTO runs(label, start_ns, status) VALUES(?, ?, 'running')");
        string update = "UPDATE runs SET end_ns = ?, status = ?, ops = ?";
        for (const RunField& f : kRunFields)
            update += string(", ") + f.name + " = ?";
        for (const string& c : detail::lost_column_names())
            update += ", " + c + " = ?";
        s->update_run = Stmt(db_, (update + " WHERE id = ?").c_str());
        s->insert_lock = Stmt(db_, detail::table_sql(detail::kLockTable, kSchemaVersion).insert.c_str());
        s->insert_interval = Stmt(db_, detail::table_sql(detail::kIntervalTable, kSchemaVersion).insert.c_str());
        s->insert_lock_interval =
            Stmt(db_, detail::table_sql(detail::kLockIntervalTable, kSchemaVersion).insert.c_str());
        size_t i = 0;
        detail::for_each_run_table([&](const auto& table) {
            RunTableStatements& t = s->run_tables[i++];
            t.remove = Stmt(db_, (string("DELETE FROM ") + table.name + " WHERE run = ?").c_str());
            t.insert = Stmt(db_, detail::table_sql(table, kSchemaVersion).insert.c_str());
        });
        s->insert_episode = Stmt(db_, (string("INSERT INTO episodes(run, tid, tgid, lock_address, lock_flags, "
                                              "begin_ns, end_ns, spin_ns, sleep_ns, preempt_ns, sleeps, "
                                              "preemptions, ret, waker, truncated, phases, waker_tgid, wake_ns) "
                                              "VALUES(") +
                                       placeholders(18) + ")")
                                          .c_str());
    } catch (const std::runtime_error& e) {
        throw Error("cannot prepare session file", path_, 0, e.what());
    }
}

void SessionWriter::fail(const char* what) const
{
    int code = db_ ? sqlite3_errcode(db_) : SQLITE_NOMEM;
    int sys = db_ ? sqlite3_system_errno(db_) : 0;
    if (code == SQLITE_FULL)
        throw Error(what, path_, ENOSPC);
    if ((code == SQLITE_IOERR || code == SQLITE_CANTOPEN) && sys != 0)
        throw Error(what, path_, sys);
    throw Error(what, path_, 0, db_ ? sqlite3_errmsg(db_) : "out of memory");
}

void SessionWriter::require_open() const
{
    if (!stmts_)
        throw Error("cannot write session file", path_, 0, "the session is closed");
}

void SessionWriter::exec(const char* sql)
{
    if (!db_)
        require_open();
    if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK)
        fail("cannot write session file");
}

void SessionWriter::transaction(const std::function<void()>& body)
{
    exec("BEGIN IMMEDIATE");
    try {
        body();
        exec("COMMIT");
    } catch (...) {
        sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
    }
}

void SessionWriter::step(sqlite3_stmt* st)
{
    // Runs to completion and readies the statement for its next use.
    const int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (rc != SQLITE_DONE)
        fail("cannot write session file");
}

void SessionWriter::set_meta(const std::map<std::string, std::string>& meta)
{
    require_open();
    auto body = [&] {
        sqlite3_stmt* st = stmts_->upsert_meta.get();
        for (const auto& [key, value] : meta) {
            if (key == "schema_version")
                continue;  // owned by the store, never by the caller
            bind_text(st, 1, key);
            bind_text(st, 2, value);
            step(st);
        }
    };
    transaction(body);
}

int64_t SessionWriter::begin_run(const std::string& label, uint64_t start_ns)
{
    require_open();
    sqlite3_stmt* st = stmts_->insert_run.get();
    bind_text(st, 1, label);
    sqlite3_bind_int64(st, 2, to_db(start_ns));
    step(st);
    return sqlite3_last_insert_rowid(db_);
}

namespace {

sqlite3_stmt* bind_run_update(sqlite3_stmt* st, int64_t id, const RunInfo& r, const std::string& status)
{
    sqlite3_bind_int64(st, 1, to_db(r.end_ns));
    bind_text(st, 2, status);
    bind_opt(st, 3, r.ops);
    int col = 4;
    for (const RunField& f : kRunFields)
        sqlite3_bind_int64(st, col++, to_db(r.*f.member));
    for (const LostField& f : kLostFields)
        sqlite3_bind_int64(st, col++, to_db(r.lost.*f.member));
    sqlite3_bind_int64(st, col, id);
    return st;
}

// A row of a per-run table, stored under the batch's run whatever its own
// says (IntervalBatch::totals).
template <typename Table, typename Row>
sqlite3_stmt* bind_under_run(sqlite3_stmt* st, const Table& table, int64_t run, const Row& row)
{
    detail::bind_row(st, table, row);
    sqlite3_bind_int64(st, 1, run);  // every per-run table starts with run
    return st;
}

// A row of an interval table, stored under the batch's run and index.
template <typename Table, typename Row>
sqlite3_stmt* bind_interval_row(sqlite3_stmt* st, const Table& table, const IntervalTotals& t, Row row)
{
    row.index = t.index;
    return bind_under_run(st, table, t.run, row);
}

sqlite3_stmt* bind_episode(sqlite3_stmt* st, int64_t run, const Episode& e)
{
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int64(st, 2, e.tid);
    sqlite3_bind_int64(st, 3, e.tgid);
    sqlite3_bind_int64(st, 4, int64_t(e.lock_address));  // bit pattern, as in locks.address
    sqlite3_bind_int64(st, 5, e.lock_flags);
    int col = 6;
    for (uint64_t v : {e.begin_ns, e.end_ns, e.spin_ns, e.sleep_ns, e.preempt_ns})
        sqlite3_bind_int64(st, col++, to_db(v));
    sqlite3_bind_int64(st, col++, e.sleeps);
    sqlite3_bind_int64(st, col++, e.preemptions);
    sqlite3_bind_int64(st, col++, e.ret);
    sqlite3_bind_int64(st, col++, e.waker_tid);
    sqlite3_bind_int64(st, col++, e.truncated ? 1 : 0);
    bind_text(st, col++, encode_phases(e));
    sqlite3_bind_int64(st, col++, e.waker_tgid);
    sqlite3_bind_int64(st, col, to_db(e.wake_ns));
    return st;
}

}  // namespace

void SessionWriter::write_interval(const IntervalBatch& b)
{
    require_open();
    const IntervalTotals& t = b.totals;
    transaction([&] {
        for (const LockInfo& l : b.new_locks)
            step(detail::bind_row(stmts_->insert_lock.get(), detail::kLockTable, l));
        step(bind_interval_row(stmts_->insert_interval.get(), detail::kIntervalTable, t, t));
        for (const LockInterval& li : b.locks)
            if (li.counters != LockCounters{})  // unchanged: the sparse format stores nothing
                step(bind_interval_row(stmts_->insert_lock_interval.get(), detail::kLockIntervalTable, t, li));
        replace_run_rows(b);
        for (const Episode& e : b.episodes)
            step(bind_episode(stmts_->insert_episode.get(), t.run, e));
        // Progress, so that a killed recording still reports its drops.
        RunInfo progress = b.run;
        progress.end_ns = t.end_ns;
        step(bind_run_update(stmts_->update_run.get(), t.run, progress, "running"));
    });
}

// Stacks, edges, holders' tasks, cgroups and tasks are cumulative per run:
// each interval's rows replace the run's earlier ones.
void SessionWriter::replace_run_rows(const IntervalBatch& b)
{
    size_t i = 0;
    detail::for_each_run_table([&](const auto& table) {
        RunTableStatements& st = stmts_->run_tables[i++];
        sqlite3_bind_int64(st.remove.get(), 1, b.totals.run);
        step(st.remove.get());
        for (const auto& row : b.*table.written)
            step(bind_under_run(st.insert.get(), table, b.totals.run, row));
    });
}

void SessionWriter::end_run(const RunInfo& r)
{
    require_open();
    if (r.status != "complete" && r.status != "interrupted" && r.status != "failed")
        throw Error("cannot end run", std::to_string(r.id), 0,
                    "status must be complete, interrupted or failed, not '" + r.status + "'");
    step(bind_run_update(stmts_->update_run.get(), r.id, r, r.status));
    if (sqlite3_changes(db_) != 1)
        throw Error("cannot end run", std::to_string(r.id), 0, "no such run in the session");
}

void SessionWriter::close()
{
    if (!db_) {
        release_lock();
        return;
    }
    stmts_.reset();
    // Fold the WAL back and leave a single self-contained file. Either step
    // may be refused while a reader is attached; the file is valid anyway.
    sqlite3_exec(db_, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr);
    sqlite3_exec(db_, "PRAGMA journal_mode=DELETE", nullptr, nullptr, nullptr);
    sqlite3_close_v2(db_);
    db_ = nullptr;
    // Only now: closing any descriptor of the file drops this process's
    // fcntl() locks on it, SQLite's included.
    release_lock();
}

void SessionWriter::release_lock()
{
    if (lock_fd_ >= 0)
        ::close(lock_fd_);
    lock_fd_ = -1;
}

}  // namespace lockscope
