// The per-run tables are declarations: a new one needs nothing from the
// store but its declaration, and the ones sessions have keep the columns
// older lockscopes wrote and read.
#include "core/storage/session_tables.h"
#include "core/storage/session_store.h"
#include "sample_session.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <vector>

using namespace lockscope;
using lockscope::testing::TempDir;
using lockscope::testing::write_sample;

namespace {

// A table no session has: a user-space lock's sampled waits, with every
// kind of column a declaration can bind.
struct UserLockWait {
    int64_t run = 0;
    int64_t lock_id = 0;
    uint32_t tid = 0;
    std::string symbol;
    std::vector<std::string> frames;
    uint64_t samples = 0;
    LockCounters counters;
};

constexpr auto kUserLockWaits = detail::session_table<UserLockWait>(
    "user_lock_waits", {{"lock_id", &UserLockWait::lock_id, detail::Refers::lock},
                        {"tid", &UserLockWait::tid},
                        {"symbol", &UserLockWait::symbol},
                        {.name = "frames", .member = &UserLockWait::frames, .since_version = 5},
                        {"samples", &UserLockWait::samples},
                        {"counters", &UserLockWait::counters}});

sqlite3* open_rw(const std::string& path)
{
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
    return db;
}

void write_rows(sqlite3* db, int64_t run, const std::vector<UserLockWait>& rows)
{
    const detail::Stmt insert(db, detail::table_sql(kUserLockWaits, kSchemaVersion).insert.c_str());
    for (const UserLockWait& row : rows) {
        UserLockWait stored = row;
        stored.run = run;
        detail::bind_row(insert.get(), kUserLockWaits, stored);
        ASSERT_EQ(sqlite3_step(insert.get()), SQLITE_DONE) << sqlite3_errmsg(db);
        sqlite3_reset(insert.get());
    }
}

struct Read {
    std::vector<UserLockWait> rows;
    std::vector<std::string> skipped;  // why, one per skipped row
};

// Reads as the session loader reads a per-run table: columns checked, then
// the locks a row names against the loaded session's.
Read read_rows(sqlite3* db, const Session& s, int version)
{
    Read out;
    const detail::Stmt select(db, detail::table_sql(kUserLockWaits, version).select.c_str());
    while (sqlite3_step(select.get()) == SQLITE_ROW) {
        detail::RowReader r(select.get());
        UserLockWait row = detail::read_row(r, kUserLockWaits);
        detail::lock_ids_of(kUserLockWaits, row, [&](int64_t id) {
            if (r.ok() && !s.lock(id))
                r.fail("lock " + std::to_string(id) + " does not exist");
        });
        if (r.ok())
            out.rows.push_back(std::move(row));
        else
            out.skipped.push_back(r.why());
    }
    return out;
}

std::string column_list(sqlite3* db, const std::string& table)
{
    const detail::Stmt q(db, ("SELECT name, type, \"notnull\" FROM pragma_table_info('" + table + "')").c_str());
    std::string out;
    while (sqlite3_step(q.get()) == SQLITE_ROW) {
        if (!out.empty())
            out += ", ";
        out += reinterpret_cast<const char*>(sqlite3_column_text(q.get(), 0));
        out += std::string(" ") + reinterpret_cast<const char*>(sqlite3_column_text(q.get(), 1));
        if (sqlite3_column_int(q.get(), 2) == 0)
            out += " NULL";
    }
    return out;
}

}  // namespace

TEST(RunTableTest, ANewPerRunTableRoundTripsFromItsDeclarationAlone)
{
    TempDir dir;
    const std::string path = dir.file("user-locks.lockscope");
    write_sample(path, 1, 2, 3);  // run 1, locks 1..3
    const Session s = load_session(path);
    ASSERT_EQ(s.runs.size(), 1u);
    const int64_t run = s.runs[0].id;

    UserLockWait wait;
    wait.lock_id = 2;
    wait.tid = 4242;
    wait.symbol = "cache_lock";
    wait.frames = {"pthread_mutex_lock", "cache_get+0x1c", "main"};
    wait.samples = 7;
    wait.counters.contentions = 5;
    wait.counters.wait_ns = 123456;
    wait.counters.hist[12] = 5;
    wait.counters.owner[1] = 2;
    UserLockWait dangling = wait;
    dangling.lock_id = 999;

    sqlite3* db = open_rw(path);
    ASSERT_EQ(
        sqlite3_exec(db, detail::table_sql(kUserLockWaits, kSchemaVersion).create.c_str(), nullptr, nullptr, nullptr),
        SQLITE_OK)
        << sqlite3_errmsg(db);
    write_rows(db, run, {wait, dangling});
    // A row no lockscope writes: a thread id past 32 bits.
    ASSERT_EQ(sqlite3_exec(db,
                           ("INSERT INTO user_lock_waits(run, lock_id, tid, symbol, frames, samples) VALUES(" +
                            std::to_string(run) + ", 1, 4294967296, 'x', '', 1)")
                               .c_str(),
                           nullptr, nullptr, nullptr),
              SQLITE_OK);

    const Read got = read_rows(db, s, kSchemaVersion);
    ASSERT_EQ(got.rows.size(), 1u);
    const UserLockWait& back = got.rows[0];
    EXPECT_EQ(back.run, run);
    EXPECT_EQ(back.lock_id, 2);
    EXPECT_EQ(back.tid, 4242u);
    EXPECT_EQ(back.symbol, "cache_lock");
    EXPECT_EQ(back.frames, wait.frames);
    EXPECT_EQ(back.samples, 7u);
    EXPECT_EQ(back.counters, wait.counters);
    EXPECT_EQ(got.skipped, (std::vector<std::string>{"tid out of range", "lock 999 does not exist"}));

    // A file older than a column reads it as empty.
    const Read older = read_rows(db, s, 4);
    ASSERT_EQ(older.rows.size(), 1u);
    EXPECT_TRUE(older.rows[0].frames.empty());
    EXPECT_EQ(older.rows[0].symbol, "cache_lock");
    sqlite3_close_v2(db);

    // And the session around it still loads as before.
    const Session again = load_session(path);
    EXPECT_EQ(again.locks.size(), 3u);
    EXPECT_TRUE(again.warnings.empty());
}

// What older lockscopes wrote and read: the per-run tables' columns, in
// order, with their types, made now from the declarations.
TEST(RunTableTest, TheSessionsPerRunTablesKeepTheirColumns)
{
    TempDir dir;
    const std::string path = dir.file("columns.lockscope");
    write_sample(path, 1, 1, 1);
    sqlite3* db = open_rw(path);
    std::string counters;
    for (const CounterField& f : kCounterFields)
        counters += std::string(f.name) + " INTEGER, ";
    counters += "owner TEXT, hist TEXT";
    EXPECT_EQ(column_list(db, "stacks"),
              "run INTEGER, lock_id INTEGER, role TEXT, frames TEXT, samples INTEGER, wait_ns INTEGER");
    EXPECT_EQ(column_list(db, "edges"),
              "run INTEGER, lock_id INTEGER, holder_lock_id INTEGER, samples INTEGER, wait_ns INTEGER");
    EXPECT_EQ(column_list(db, "lock_cgroups"), "run INTEGER, lock_id INTEGER, cgroup TEXT, samples INTEGER");
    EXPECT_EQ(column_list(db, "holder_tasks"),
              "run INTEGER, lock_id INTEGER, tid INTEGER, tgid INTEGER, comm TEXT, samples INTEGER");
    EXPECT_EQ(column_list(db, "tasks"),
              "run INTEGER, pid INTEGER, tgid INTEGER, comm TEXT, " + counters + ", cgroup TEXT");
    const detail::Stmt indexes(db,
                               "SELECT group_concat(name, ' ') FROM (SELECT name FROM sqlite_master "
                               "WHERE type = 'index' AND sql IS NOT NULL ORDER BY name)");
    ASSERT_EQ(sqlite3_step(indexes.get()), SQLITE_ROW);
    EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(indexes.get(), 0)), "stacks_by_run tasks_by_run");
    sqlite3_close_v2(db);
}
