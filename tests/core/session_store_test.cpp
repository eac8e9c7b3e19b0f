// The session file as a user relies on it: what is written reads back,
// it stays small, it survives a killed recorder, and it can be read while
// being written and by other users.
#include "core/analysis/report.h"
#include "core/error.h"
#include "core/storage/session_store.h"
#include "sample_session.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <csignal>
#include <filesystem>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace lockscope;
using lockscope::testing::sample_batch;
using lockscope::testing::sample_meta;
using lockscope::testing::TempDir;
using lockscope::testing::write_sample;

namespace {

std::string query_text(const std::string& path, const std::string& sql)
{
    sqlite3* db = nullptr;
    sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* st = nullptr;
    std::string out = "<error>";
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
}

void expect_same(const LockInfo& a, const LockInfo& b)
{
    EXPECT_EQ(a.id, b.id);
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.mode, b.mode);
    EXPECT_EQ(a.caller, b.caller);
    EXPECT_EQ(a.address, b.address);
    EXPECT_EQ(a.flags, b.flags);
}

}  // namespace

TEST(SessionStoreTest, RoundTripReadsBackWhatWasWritten)
{
    TempDir dir;
    const std::string path = dir.file("s.lockscope");
    std::vector<IntervalBatch> batches;
    RunInfo done;
    {
        auto w = SessionWriter::create(path, false);
        w.set_meta(sample_meta());
        w.set_meta({{"command", "make -j8"}, {"host", "renamed"}});  // upsert
        int64_t run = w.begin_run("baseline", 1'000'000'000ull);
        EXPECT_EQ(run, 1);
        for (int i = 0; i < 5; ++i) {
            batches.push_back(sample_batch(run, i, 4));
            w.write_interval(batches.back());
        }
        done = batches.back().run;
        done.end_ns = 9'000'000'000ull;
        done.status = "complete";
        done.lost.nested = 4;
        done.lost.abandoned = 5;
        w.end_run(done);
    }  // destructor closes

    Session s = load_session(path);
    EXPECT_TRUE(s.warnings.empty());
    EXPECT_EQ(s.schema_version, kSchemaVersion);
    EXPECT_EQ(s.meta_value("schema_version"), std::to_string(kSchemaVersion));
    EXPECT_EQ(s.meta_value("host"), "renamed");
    EXPECT_EQ(s.meta_value("command"), "make -j8");
    EXPECT_EQ(s.meta_value("kernel_release"), "6.1.0-test");
    EXPECT_EQ(s.meta_value("missing", "fallback"), "fallback");

    ASSERT_EQ(s.runs.size(), 1u);
    EXPECT_EQ(s.runs[0].label, "baseline");
    EXPECT_EQ(s.runs[0].status, "complete");
    EXPECT_EQ(s.runs[0].start_ns, 1'000'000'000ull);
    EXPECT_EQ(s.runs[0].end_ns, done.end_ns);
    EXPECT_EQ(s.runs[0].lost, done.lost);
    EXPECT_EQ(s.runs[0].unmatched_ends, done.unmatched_ends);
    EXPECT_EQ(s.runs[0].stack_samples, done.stack_samples);
    EXPECT_EQ(s.runs[0].ops, done.ops);

    ASSERT_EQ(s.locks.size(), 4u);
    for (size_t i = 0; i < 4; ++i)
        expect_same(s.locks[i], batches[0].new_locks[i]);
    ASSERT_NE(s.lock(3), nullptr);
    EXPECT_EQ(s.lock(3)->name, "lock_3");
    EXPECT_EQ(s.lock(99), nullptr);

    ASSERT_EQ(s.intervals.size(), 5u);
    for (size_t i = 0; i < 5; ++i) {
        const IntervalTotals &got = s.intervals[i], &want = batches[i].totals;
        EXPECT_EQ(got.run, want.run);
        EXPECT_EQ(got.index, want.index);
        EXPECT_EQ(got.start_ns, want.start_ns);
        EXPECT_EQ(got.end_ns, want.end_ns);
        EXPECT_EQ(got.idle_ns, want.idle_ns);
        EXPECT_EQ(got.cpu_ns, want.cpu_ns);
        EXPECT_EQ(got.events, want.events);
        EXPECT_EQ(got.lost, want.lost);
        EXPECT_EQ(got.ops, want.ops);
        EXPECT_EQ(got.counters, want.counters);
    }

    // Only the changed rows (4 per interval), in (run, index, lock) order.
    ASSERT_EQ(s.lock_intervals.size(), 20u);
    for (size_t i = 0; i < 20; ++i) {
        const LockInterval& got = s.lock_intervals[i];
        const LockInterval& want = batches[i / 4].locks[i % 4 + 1];  // [0] is the unchanged one
        EXPECT_EQ(got.index, want.index);
        EXPECT_EQ(got.lock_id, want.lock_id);
        EXPECT_EQ(got.counters, want.counters);
    }

    // Stacks and tasks are cumulative: the last interval's replace earlier ones.
    const IntervalBatch& last = batches.back();
    ASSERT_EQ(s.stacks.size(), last.stacks.size());
    for (size_t i = 0; i < s.stacks.size(); ++i) {
        EXPECT_EQ(s.stacks[i].lock_id, last.stacks[i].lock_id);
        EXPECT_EQ(s.stacks[i].role, last.stacks[i].role);
        EXPECT_EQ(s.stacks[i].frames, last.stacks[i].frames);
        EXPECT_EQ(s.stacks[i].samples, last.stacks[i].samples);
        EXPECT_EQ(s.stacks[i].wait_ns, last.stacks[i].wait_ns);
    }
    ASSERT_EQ(s.tasks.size(), 2u);
    EXPECT_EQ(s.tasks[1].comm, "worker, \"2\"");
    EXPECT_EQ(s.tasks[0].counters, last.tasks[0].counters);
    EXPECT_EQ(s.tasks[0].tgid, 100u);
    EXPECT_EQ(s.tasks[0].cgroup, "/system.slice/db.service");
}

// The sampled holders' tasks per lock: cumulative per run like stacks, and
// absent (not an error) in files written before the table existed.
TEST(SessionStoreTest, HolderTasksRoundTripAndOlderFilesHaveNone)
{
    TempDir dir;
    const std::string path = dir.file("h.lockscope");
    {
        auto w = SessionWriter::create(path, false);
        const int64_t run = w.begin_run("r", 1'000'000'000ull);
        for (int i = 0; i < 2; ++i) {
            IntervalBatch b = sample_batch(run, i, 2);
            b.holder_tasks = {{run, 1, 4242, 4240, "uffd-writer", uint64_t(3 + i)},
                              {run, 2, 4243, 4240, "splice \"x\"", 1}};
            w.write_interval(b);
        }
        RunInfo done;
        done.id = run;
        done.end_ns = 3'000'000'000ull;
        done.status = "complete";
        w.end_run(done);
    }
    Session s = load_session(path);
    EXPECT_TRUE(s.warnings.empty());
    ASSERT_EQ(s.holder_tasks.size(), 2u) << "the last interval's rows replace earlier ones";
    EXPECT_EQ(s.holder_tasks[0].lock_id, 1);
    EXPECT_EQ(s.holder_tasks[0].tid, 4242u);
    EXPECT_EQ(s.holder_tasks[0].tgid, 4240u);
    EXPECT_EQ(s.holder_tasks[0].comm, "uffd-writer");
    EXPECT_EQ(s.holder_tasks[0].samples, 4u);
    EXPECT_EQ(s.holder_tasks[1].comm, "splice \"x\"");

    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    // an older file: version 3, written before the table existed
    ASSERT_EQ(sqlite3_exec(db, "DROP TABLE holder_tasks; PRAGMA user_version = 3", nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
    s = load_session(path);
    EXPECT_TRUE(s.warnings.empty());
    EXPECT_TRUE(s.holder_tasks.empty());
    EXPECT_EQ(s.locks.size(), 2u);
}

// Files written before nested and abandoned episodes were counted as lost
// have no such columns: they load, with those causes 0 and the others intact.
TEST(SessionStoreTest, LoadsFilesWrittenBeforeNestedAndAbandonedLossesWereCounted)
{
    TempDir dir;
    const std::string path = dir.file("old.lockscope");
    RunInfo done;
    {
        auto w = SessionWriter::create(path, false);
        w.set_meta(sample_meta());
        const int64_t run = w.begin_run("old", 1'000'000'000ull);
        IntervalBatch b = sample_batch(run, 0, 2);
        w.write_interval(b);
        done = b.run;
        done.end_ns = 2'000'000'000ull;
        done.status = "complete";
        done.lost.task_storage = 7;
        w.end_run(done);
    }
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    // A version-1 file as the first lockscope wrote it: no lock identity
    // columns, no nested/abandoned counters.
    for (const char* sql : {"ALTER TABLE runs DROP COLUMN lost_nested", "ALTER TABLE runs DROP COLUMN lost_abandoned",
                            "ALTER TABLE locks DROP COLUMN name_source", "ALTER TABLE locks DROP COLUMN detail",
                            "ALTER TABLE locks DROP COLUMN instance", "ALTER TABLE tasks DROP COLUMN cgroup",
                            "PRAGMA user_version=1", "UPDATE meta SET value = '1' WHERE key = 'schema_version'"})
        EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);

    Session s = load_session(path);
    EXPECT_TRUE(s.warnings.empty());
    EXPECT_EQ(s.schema_version, 1);
    ASSERT_FALSE(s.locks.empty());
    for (const LockInfo& l : s.locks)
        EXPECT_EQ(l.name_source, "") << "a version-1 file says nothing of where names came from";
    ASSERT_EQ(s.runs.size(), 1u);
    EXPECT_EQ(s.runs[0].lost.nested, 0u);
    EXPECT_EQ(s.runs[0].lost.abandoned, 0u);
    EXPECT_EQ(s.runs[0].lost.task_storage, 7u);
    EXPECT_EQ(s.runs[0].lost.depth, done.lost.depth);
    EXPECT_EQ(s.runs[0].lost.ring_buffer, done.lost.ring_buffer);
    ASSERT_FALSE(s.tasks.empty());
    for (const TaskStats& t : s.tasks)
        EXPECT_EQ(t.cgroup, "") << "files before version 3 kept no cgroup";
}

// A version-4 file kept no off-CPU time of spin phases: it loads, and the
// report says the wait cannot be split instead of printing parts that would
// overlap (spin phases holding off-CPU time).
TEST(SessionStoreTest, AVersion4FileSaysItsWaitIsNotSplit)
{
    TempDir dir;
    const std::string path = dir.file("v4.lockscope");
    write_sample(path, 1, 2, 3);
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    std::vector<std::string> tables;
    sqlite3_exec(
        db, "SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) c WHERE c.name = 'spin_offcpu_ns'",
        [](void* out, int, char** values, char**) {
            static_cast<std::vector<std::string>*>(out)->push_back(values[0]);
            return 0;
        },
        &tables, nullptr);
    ASSERT_FALSE(tables.empty());
    for (const std::string& t : tables)
        for (const char* column : {"spin_offcpu_ns", "spin_yields"})
            ASSERT_EQ(
                sqlite3_exec(db, ("ALTER TABLE " + t + " DROP COLUMN " + column).c_str(), nullptr, nullptr, nullptr),
                SQLITE_OK)
                << sqlite3_errmsg(db);
    for (const char* sql :
         {"ALTER TABLE runs DROP COLUMN holder_oncpu_samples", "ALTER TABLE runs DROP COLUMN holder_oncpu_dropped",
          "PRAGMA user_version=4", "UPDATE meta SET value = '4' WHERE key = 'schema_version'"})
        ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);

    const Session s = load_session(path);
    EXPECT_TRUE(s.warnings.empty());
    EXPECT_EQ(s.schema_version, 4);
    const Report rep = build_report(s, ReportOptions{});
    EXPECT_FALSE(rep.wait_parts_split);
    const std::string text = format_text(rep);
    EXPECT_NE(text.find("spin phases"), std::string::npos) << text;
    EXPECT_NE(text.find("not split in this session's format"), std::string::npos) << text;
    EXPECT_EQ(text.find("  queued on CPU"), std::string::npos) << text;
    const std::string json = format_json(rep);
    EXPECT_NE(json.find("\"spinning_ns\": null"), std::string::npos);
    EXPECT_NE(json.find("\"wait_parts_split\": false"), std::string::npos);
}

TEST(SessionStoreTest, StoresHistogramsSparselyAndEndsAsOneFile)
{
    TempDir dir;
    const std::string path = dir.file("s.lockscope");
    write_sample(path, 1, 2, 3);
    // Lock 1 at interval 0: buckets 9..16 hold 1+h; owner states 0 and 2.
    EXPECT_EQ(query_text(path, "SELECT hist FROM lock_intervals WHERE idx = 0 AND lock_id = 1"),
              "9:10 10:11 11:12 12:13 13:14 14:15 15:16 16:17");
    EXPECT_EQ(query_text(path, "SELECT owner FROM lock_intervals WHERE idx = 0 AND lock_id = 1"), "0:2 2:1");
    EXPECT_EQ(query_text(path, "SELECT count(*) FROM lock_intervals"), "6");
    EXPECT_EQ(query_text(path, "PRAGMA journal_mode"), "delete");
    EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
    EXPECT_FALSE(std::filesystem::exists(path + "-shm"));
    EXPECT_EQ(std::filesystem::status(path).permissions() & std::filesystem::perms::others_read,
              std::filesystem::perms::others_read);
}

TEST(SessionStoreTest, SixtyIntervalsOfTwentyLocksStayUnderOneMegabyte)
{
    TempDir dir;
    const std::string path = dir.file("s.lockscope");
    write_sample(path, 1, 60, 20);
    auto size = std::filesystem::file_size(path);
    EXPECT_LT(size, 1u << 20) << "a minute at 1 s intervals took " << size << " bytes";
    EXPECT_EQ(load_session(path).lock_intervals.size(), 60u * 20u);
}

// Records 20-lock intervals in a child until `kill_after` have committed,
// then SIGKILLs it, most likely in the middle of the next transaction.
static void record_and_kill(const std::string& path, int64_t kill_after)
{
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        close(fds[0]);
        try {
            auto w = SessionWriter::create(path, false);
            w.set_meta(sample_meta());
            int64_t run = w.begin_run("doomed", 0);
            for (int64_t i = 0;; ++i) {
                w.write_interval(sample_batch(run, i, 20));
                if (write(fds[1], &i, sizeof i) != sizeof i)
                    _exit(2);
            }
        } catch (...) {
            _exit(3);
        }
    }
    close(fds[1]);
    int64_t committed = -1;
    while (committed < kill_after && read(fds[0], &committed, sizeof committed) > 0) {
    }
    kill(child, SIGKILL);
    int status = 0;
    waitpid(child, &status, 0);
    close(fds[0]);
    ASSERT_TRUE(WIFSIGNALED(status)) << "recorder exited early, status " << status;
}

TEST(SessionStoreTest, SurvivesSigkillAtAnyInterval)
{
    for (int64_t kill_after : {0, 1, 7, 30}) {
        TempDir dir;
        const std::string path = dir.file("killed.lockscope");
        ASSERT_NO_FATAL_FAILURE(record_and_kill(path, kill_after));

        Session s = load_session(path);
        EXPECT_TRUE(s.warnings.empty());
        ASSERT_EQ(s.runs.size(), 1u);
        EXPECT_EQ(s.runs[0].status, "running");
        ASSERT_GE(int64_t(s.intervals.size()), kill_after + 1);
        EXPECT_EQ(s.locks.size(), 20u);
        // Every stored interval is whole: contiguous, with all its lock rows.
        for (size_t i = 0; i < s.intervals.size(); ++i)
            EXPECT_EQ(s.intervals[i].index, int64_t(i));
        EXPECT_EQ(s.lock_intervals.size(), s.intervals.size() * 20);
        EXPECT_EQ(s.runs[0].end_ns, s.intervals.back().end_ns);
    }
}

TEST(SessionStoreTest, ReadableWhileBeingRecorded)
{
    TempDir dir;
    const std::string path = dir.file("live.lockscope");
    auto w = SessionWriter::create(path, false);
    w.set_meta(sample_meta());
    int64_t run = w.begin_run("live", 0);
    for (int i = 0; i < 3; ++i)
        w.write_interval(sample_batch(run, i, 5));
    Session s = load_session(path);
    EXPECT_EQ(s.intervals.size(), 3u);
    EXPECT_EQ(s.runs.at(0).status, "running");
    EXPECT_TRUE(peek_session(path).recording);
    w.write_interval(sample_batch(run, 3, 5));
    EXPECT_EQ(load_session(path).intervals.size(), 4u);
    w.close();
    w.close();  // idempotent
    SessionSummary sum = peek_session(path);
    EXPECT_EQ(sum.intervals, 4u);
    EXPECT_EQ(sum.locks, 5u);
    EXPECT_DOUBLE_EQ(sum.duration_s, 4.0);
    EXPECT_EQ(sum.meta.at("host"), "testhost");
    EXPECT_THROW(w.write_interval(sample_batch(run, 4, 5)), Error);
}

TEST(SessionStoreTest, MovedWriterKeepsWriting)
{
    TempDir dir;
    const std::string path = dir.file("moved.lockscope");
    auto a = SessionWriter::create(path, false);
    SessionWriter b = std::move(a);
    int64_t run = b.begin_run("r", 0);
    b.write_interval(sample_batch(run, 0, 2));
    b.close();
    EXPECT_EQ(load_session(path).intervals.size(), 1u);
}

TEST(SessionStoreTest, RejectsBadRunUpdates)
{
    TempDir dir;
    auto w = SessionWriter::create(dir.file("s.lockscope"), false);
    RunInfo r;
    r.id = w.begin_run("r", 0);
    r.status = "finished";
    EXPECT_THROW(w.end_run(r), Error);
    r.status = "complete";
    r.id = 42;
    EXPECT_THROW(w.end_run(r), Error);
    // A lock id given twice is a recorder bug, not something to paper over.
    IntervalBatch b = sample_batch(1, 0, 2);
    w.write_interval(b);
    b.totals.index = 1;
    EXPECT_THROW(w.write_interval(b), Error);
}

TEST(SessionStoreTest, RefusesExistingFileUnlessOverwriting)
{
    TempDir dir;
    const std::string path = dir.file("s.lockscope");
    write_sample(path, 1, 3, 2);
    try {
        SessionWriter::create(path, false);
        FAIL() << "an existing session was overwritten";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("File exists"), std::string::npos) << e.what();
    }
    EXPECT_EQ(load_session(path).intervals.size(), 3u);
    SessionWriter::create(path, true).close();
    EXPECT_EQ(load_session(path).intervals.size(), 0u);
}

TEST(SessionStoreTest, RefusesSymlinkAtOutputPath)
{
    TempDir dir;
    const std::string victim = dir.file("victim");
    const std::string link = dir.file("s.lockscope");
    {
        FILE* f = fopen(victim.c_str(), "w");
        fputs("precious", f);
        fclose(f);
    }
    std::filesystem::create_symlink(victim, link);
    for (bool overwrite : {false, true}) {
        try {
            SessionWriter::create(link, overwrite);
            FAIL() << "followed a symlink, overwrite=" << overwrite;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("symbolic link"), std::string::npos) << e.what();
        }
    }
    EXPECT_EQ(std::filesystem::file_size(victim), 8u);
    // A dangling link must not create its target either.
    std::filesystem::create_symlink(dir.file("nowhere"), dir.file("dangling"));
    EXPECT_THROW(SessionWriter::create(dir.file("dangling"), false), Error);
    EXPECT_FALSE(std::filesystem::exists(dir.file("nowhere")));
}

TEST(SessionStoreTest, UnwritablePathIsAClearError)
{
    TempDir dir;
    try {
        SessionWriter::create(dir.file("no/such/dir/s.lockscope"), false);
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()), "cannot create session file '" + dir.file("no/such/dir/s.lockscope") +
                                             "': No such file or directory");
    }
    EXPECT_THROW(SessionWriter::create(dir.path(), true), Error);  // a directory
}

// Root records, users read: a 0644 session in a root-owned directory must
// load for an unprivileged user, also while the recorder still writes it;
// and that user gets a plain "Permission denied" when creating one there.
TEST(SessionStoreTest, UnprivilegedUserReadsRootSession)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "needs root to create a root-owned session and switch users";
    const passwd* nobody = getpwnam("nobody");
    if (!nobody)
        GTEST_SKIP() << "no 'nobody' user to switch to";
    TempDir dir;
    ASSERT_EQ(chmod(dir.path().c_str(), 0755), 0);
    const std::string finished = dir.file("done.lockscope");
    const std::string live = dir.file("live.lockscope");
    const std::string killed = dir.file("killed.lockscope");
    const std::string bare_wal = dir.file("bare-wal.lockscope");
    write_sample(finished, 1, 3, 4);
    // Left in WAL mode with its -wal and -shm by a killed root recorder ...
    ASSERT_NO_FATAL_FAILURE(record_and_kill(killed, 5));
    // ... and a copy of such a file without them (SQLite cannot create the
    // -shm in a directory the reader may not write).
    ASSERT_NO_FATAL_FAILURE(record_and_kill(bare_wal, 2));
    {
        sqlite3* db = nullptr;  // fold the WAL into the file; it stays in WAL mode
        ASSERT_EQ(sqlite3_open(bare_wal.c_str(), &db), SQLITE_OK);
        EXPECT_EQ(sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr), SQLITE_OK);
        sqlite3_close(db);
    }
    std::filesystem::remove(bare_wal + "-wal");
    std::filesystem::remove(bare_wal + "-shm");
    ASSERT_EQ(query_text(bare_wal, "PRAGMA journal_mode"), "wal");
    auto w = SessionWriter::create(live, false);
    int64_t run = w.begin_run("live", 0);
    w.write_interval(sample_batch(run, 0, 4));

    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        if (setgid(nobody->pw_gid) != 0 || setuid(nobody->pw_uid) != 0)
            _exit(10);
        try {
            if (load_session(finished).intervals.size() != 3)
                _exit(11);
            if (load_session(live).intervals.size() != 1)
                _exit(12);
            if (load_session(killed).intervals.size() < 6)
                _exit(16);
            if (load_session(bare_wal).intervals.size() < 3)
                _exit(17);
        } catch (const std::exception& e) {
            fprintf(stderr, "load as nobody: %s\n", e.what());
            _exit(13);
        }
        try {
            SessionWriter::create(dir.file("mine.lockscope"), false);
            _exit(14);
        } catch (const Error& e) {
            std::string want = "cannot create session file '" + dir.file("mine.lockscope") + "': Permission denied";
            _exit(e.what() == want ? 0 : 15);
        }
    }
    int status = 0;
    waitpid(child, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "see the exit codes in the child above";
}
