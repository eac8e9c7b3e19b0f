// SessionWriter: the recorder's side of the session file. The loader is in
// session_load.cpp; the schema both agree on is in session_schema.h.
#include "core/storage/session_store.h"

#include "core/error.h"
#include "core/storage/session_schema.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace lockscope {

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

std::string join_frames(const std::vector<std::string>& frames)
{
    std::string s;
    for (const auto& f : frames) {
        if (!s.empty())
            s += '\n';
        s += f;
    }
    return s;
}

void bind_text(sqlite3_stmt* st, int col, const std::string& s)
{
    sqlite3_bind_text(st, col, s.data(), int(s.size()), SQLITE_TRANSIENT);
}

void bind_opt(sqlite3_stmt* st, int col, const std::optional<double>& v)
{
    if (v)
        sqlite3_bind_double(st, col, *v);
    else
        sqlite3_bind_null(st, col);
}

// Opens (creating if needed) the file ourselves so that a symlink planted
// at the path is refused rather than followed, before SQLite sees it.
int open_output(const std::string& path, bool overwrite)
{
    const char* op = "cannot create session file";
    int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
    if (!overwrite)
        flags |= O_EXCL;
    int fd = ::open(path.c_str(), flags, 0644);
    if (fd < 0) {
        int e = errno;
        struct stat st {};
        bool is_link = ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
        if (e == ELOOP || is_link)
            throw Error(op, path, 0, "it is a symbolic link, which lockscope will not follow");
        if (e == EEXIST)
            throw Error(op, path, e, "choose another name, or overwrite it with --force");
        throw Error(op, path, e);
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw Error(op, path, 0, "it exists and is not a regular file");
    }
    // One recorder per file, held until the writer closes: a second one
    // (--force included) must not truncate a session being written or
    // unlink its WAL. flock() is independent of SQLite's fcntl() locks.
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        ::close(fd);
        if (e == EWOULDBLOCK)
            throw Error(op, path, 0, "another lockscope is recording into it");
        throw Error(op, path, e);
    }
    if (overwrite && ::ftruncate(fd, 0) != 0) {
        int e = errno;
        ::close(fd);
        throw Error(op, path, e);
    }
    // Stale sidecars from an earlier session at this path would be replayed
    // into the new, empty database.
    for (const char* suffix : {"-wal", "-shm", "-journal"})
        ::unlink((path + suffix).c_str());
    return fd;
}

}  // namespace

struct SessionWriter::Statements {
    Stmt upsert_meta, insert_run, update_run, insert_lock, insert_interval, insert_lock_interval, delete_stacks,
        insert_stack, delete_edges, insert_edge, delete_holder_tasks, insert_holder_task, delete_tasks, insert_task,
        insert_episode, delete_lock_cgroups, insert_lock_cgroup;
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
    int fd = open_output(path, overwrite);
    sqlite3* db = nullptr;
    int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, nullptr);
    SessionWriter w(path, db);  // owns db from here, even on failure
    w.lock_fd_ = fd;            // and the recorder's lock on the file
    struct stat ours {
    }, theirs{};
    bool same = ::fstat(fd, &ours) == 0 && ::lstat(path.c_str(), &theirs) == 0 && ours.st_dev == theirs.st_dev &&
                ours.st_ino == theirs.st_ino;
    if (!same)
        throw Error("cannot create session file", path, 0, "it was replaced while being opened");
    try {
        if (rc != SQLITE_OK)
            w.fail("cannot create session file");
        sqlite3_busy_timeout(db, 5000);
        // WAL lets report/GUI read while we record; NORMAL sync loses
        // nothing on a process kill (on power loss, the last intervals).
        w.exec("PRAGMA journal_mode=WAL");
        w.exec("PRAGMA synchronous=NORMAL");
        w.exec("BEGIN IMMEDIATE");
        w.exec(detail::kSchemaSql);
        w.exec(("PRAGMA user_version=" + std::to_string(kSchemaVersion)).c_str());
        w.exec(("INSERT INTO meta(key, value) VALUES('schema_version', '" + std::to_string(kSchemaVersion) + "')")
                   .c_str());
        w.exec("COMMIT");
        w.prepare();
    } catch (...) {
        // Leave no half-made file behind to block the retry, unless it was
        // the user's file to begin with.
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
    const string counters = detail::kCounterColumns;
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
        s->insert_lock = Stmt(db_,
                              "INSERT INTO locks(id, name, kind, mode, caller, address, "
                              "flags, name_source, detail, instance) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        s->insert_interval = Stmt(db_, ("INSERT INTO intervals(run, idx, start_ns, end_ns, idle_ns, cpu_ns, events, "
                                        "lost, ops, " +
                                        counters + ") VALUES(" + placeholders(9 + detail::kCounterColumnCount) + ")")
                                           .c_str());
        s->insert_lock_interval = Stmt(db_, ("INSERT INTO lock_intervals(run, idx, lock_id, " + counters + ") VALUES(" +
                                             placeholders(3 + detail::kCounterColumnCount) + ")")
                                                .c_str());
        s->delete_stacks = Stmt(db_, "DELETE FROM stacks WHERE run = ?");
        s->delete_edges = Stmt(db_, "DELETE FROM edges WHERE run = ?");
        s->insert_edge = Stmt(db_,
                              "INSERT INTO edges(run, lock_id, holder_lock_id, samples, wait_ns) "
                              "VALUES(?, ?, ?, ?, ?)");
        s->insert_stack = Stmt(db_,
                               "INSERT INTO stacks(run, lock_id, role, frames, samples, "
                               "wait_ns) VALUES(?, ?, ?, ?, ?, ?)");
        s->delete_holder_tasks = Stmt(db_, "DELETE FROM holder_tasks WHERE run = ?");
        s->insert_holder_task = Stmt(db_,
                                     "INSERT INTO holder_tasks(run, lock_id, tid, tgid, comm, samples) "
                                     "VALUES(?, ?, ?, ?, ?, ?)");
        s->delete_lock_cgroups = Stmt(db_, "DELETE FROM lock_cgroups WHERE run = ?");
        s->insert_lock_cgroup = Stmt(db_, "INSERT INTO lock_cgroups(run, lock_id, cgroup, samples) VALUES(?, ?, ?, ?)");
        s->delete_tasks = Stmt(db_, "DELETE FROM tasks WHERE run = ?");
        s->insert_task = Stmt(db_, ("INSERT INTO tasks(run, pid, tgid, comm, " + counters + ", cgroup) VALUES(" +
                                    placeholders(5 + detail::kCounterColumnCount) + ")")
                                       .c_str());
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

namespace {

// Runs a bound statement to completion and readies it for the next use.
bool step_done(sqlite3_stmt* st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE;
}

}  // namespace

#define LOCKSCOPE_STEP(st)                     \
    do {                                       \
        if (!step_done(st))                    \
            fail("cannot write session file"); \
    } while (0)

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
            LOCKSCOPE_STEP(st);
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
    LOCKSCOPE_STEP(st);
    return sqlite3_last_insert_rowid(db_);
}

namespace {

void bind_run_update(sqlite3_stmt* st, int64_t id, const RunInfo& r, const std::string& status)
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
}

}  // namespace

namespace {

void bind_episode(sqlite3_stmt* st, int64_t run, const Episode& e)
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
}

}  // namespace

void SessionWriter::write_interval(const IntervalBatch& b)
{
    require_open();
    const IntervalTotals& t = b.totals;
    auto body = [&] {
        sqlite3_stmt* st = stmts_->insert_lock.get();
        for (const LockInfo& l : b.new_locks) {
            sqlite3_bind_int64(st, 1, l.id);
            bind_text(st, 2, l.name);
            bind_text(st, 3, l.kind);
            bind_text(st, 4, l.mode);
            bind_text(st, 5, l.caller);
            sqlite3_bind_int64(st, 6, int64_t(l.address));  // bit pattern; informational only
            sqlite3_bind_int64(st, 7, l.flags);
            bind_text(st, 8, l.name_source);
            bind_text(st, 9, l.detail);
            bind_text(st, 10, l.instance);
            LOCKSCOPE_STEP(st);
        }

        st = stmts_->insert_interval.get();
        sqlite3_bind_int64(st, 1, t.run);
        sqlite3_bind_int64(st, 2, t.index);
        sqlite3_bind_int64(st, 3, to_db(t.start_ns));
        sqlite3_bind_int64(st, 4, to_db(t.end_ns));
        sqlite3_bind_int64(st, 5, to_db(t.idle_ns));
        sqlite3_bind_int64(st, 6, to_db(t.cpu_ns));
        sqlite3_bind_int64(st, 7, to_db(t.events));
        sqlite3_bind_int64(st, 8, to_db(t.lost));
        bind_opt(st, 9, t.ops);
        detail::bind_counters(st, 10, t.counters);
        LOCKSCOPE_STEP(st);

        st = stmts_->insert_lock_interval.get();
        for (const LockInterval& li : b.locks) {
            if (li.counters == LockCounters{})
                continue;  // unchanged: the sparse format stores nothing
            sqlite3_bind_int64(st, 1, t.run);
            sqlite3_bind_int64(st, 2, t.index);
            sqlite3_bind_int64(st, 3, li.lock_id);
            detail::bind_counters(st, 4, li.counters);
            LOCKSCOPE_STEP(st);
        }

        // Stacks, edges, holders' tasks and tasks are cumulative per run:
        // each interval's rows replace the run's earlier ones.
        auto replace_run_rows = [&](sqlite3_stmt* del, sqlite3_stmt* ins, const auto& rows, const auto& bind) {
            sqlite3_bind_int64(del, 1, t.run);
            LOCKSCOPE_STEP(del);
            for (const auto& row : rows) {
                sqlite3_bind_int64(ins, 1, t.run);
                bind(ins, row);
                LOCKSCOPE_STEP(ins);
            }
        };
        replace_run_rows(stmts_->delete_stacks.get(), stmts_->insert_stack.get(), b.stacks,
                         [](sqlite3_stmt* q, const StackSample& s) {
                             sqlite3_bind_int64(q, 2, s.lock_id);
                             bind_text(q, 3, s.role);
                             bind_text(q, 4, join_frames(s.frames));
                             sqlite3_bind_int64(q, 5, to_db(s.samples));
                             sqlite3_bind_int64(q, 6, to_db(s.wait_ns));
                         });
        replace_run_rows(stmts_->delete_edges.get(), stmts_->insert_edge.get(), b.edges,
                         [](sqlite3_stmt* q, const WaitEdge& e) {
                             sqlite3_bind_int64(q, 2, e.lock_id);
                             sqlite3_bind_int64(q, 3, e.holder_lock_id);
                             sqlite3_bind_int64(q, 4, to_db(e.samples));
                             sqlite3_bind_int64(q, 5, to_db(e.wait_ns));
                         });
        replace_run_rows(stmts_->delete_holder_tasks.get(), stmts_->insert_holder_task.get(), b.holder_tasks,
                         [](sqlite3_stmt* q, const HolderTask& h) {
                             sqlite3_bind_int64(q, 2, h.lock_id);
                             sqlite3_bind_int64(q, 3, h.tid);
                             sqlite3_bind_int64(q, 4, h.tgid);
                             bind_text(q, 5, h.comm);
                             sqlite3_bind_int64(q, 6, to_db(h.samples));
                         });
        replace_run_rows(stmts_->delete_lock_cgroups.get(), stmts_->insert_lock_cgroup.get(), b.lock_cgroups,
                         [](sqlite3_stmt* q, const LockCgroup& c) {
                             sqlite3_bind_int64(q, 2, c.lock_id);
                             bind_text(q, 3, c.cgroup);
                             sqlite3_bind_int64(q, 4, to_db(c.samples));
                         });
        replace_run_rows(stmts_->delete_tasks.get(), stmts_->insert_task.get(), b.tasks,
                         [](sqlite3_stmt* q, const TaskStats& task) {
                             sqlite3_bind_int64(q, 2, task.pid);
                             sqlite3_bind_int64(q, 3, task.tgid);
                             bind_text(q, 4, task.comm);
                             detail::bind_counters(q, 5, task.counters);
                             bind_text(q, 5 + detail::kCounterColumnCount, task.cgroup);
                         });

        st = stmts_->insert_episode.get();
        for (const Episode& e : b.episodes) {
            bind_episode(st, t.run, e);
            LOCKSCOPE_STEP(st);
        }

        // Progress, so that a killed recording still reports its drops.
        RunInfo progress = b.run;
        progress.end_ns = t.end_ns;
        st = stmts_->update_run.get();
        bind_run_update(st, t.run, progress, "running");
        LOCKSCOPE_STEP(st);
    };
    transaction(body);
}

void SessionWriter::end_run(const RunInfo& r)
{
    require_open();
    if (r.status != "complete" && r.status != "interrupted" && r.status != "failed")
        throw Error("cannot end run", std::to_string(r.id), 0,
                    "status must be complete, interrupted or failed, not '" + r.status + "'");
    sqlite3_stmt* st = stmts_->update_run.get();
    bind_run_update(st, r.id, r, r.status);
    LOCKSCOPE_STEP(st);
    if (sqlite3_changes(db_) != 1)
        throw Error("cannot end run", std::to_string(r.id), 0, "no such run in the session");
}

#undef LOCKSCOPE_STEP

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
