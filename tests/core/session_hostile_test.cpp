// Files lockscope did not write, or that were tampered with: each must end
// in one clear Error or in skipped rows with a warning, never a crash.
#include "core/analysis/report.h"
#include "core/error.h"
#include "core/storage/session_schema.h"
#include "core/storage/session_store.h"
#include "sample_session.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <sys/stat.h>

using namespace lockscope;
using lockscope::testing::TempDir;
using lockscope::testing::write_sample;

namespace {

void exec_sql(const std::string& path, const std::string& sql)
{
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
    EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "") << " in: " << sql;
    sqlite3_free(err);
    sqlite3_close(db);
}

std::string load_error(const std::string& path)
{
    try {
        load_session(path);
    } catch (const Error& e) {
        return e.what();
    }
    return "<loaded>";
}

void write_file(const std::string& path, const std::string& content)
{
    std::ofstream(path, std::ios::binary) << content;
}

}  // namespace

TEST(SessionLoadTest, RefusesNewerSchemaNamingBothVersions)
{
    TempDir dir;
    const std::string path = dir.file("future.lockscope");
    write_sample(path, 1, 1, 1);
    const std::string newer = std::to_string(kSchemaVersion + 1);
    exec_sql(path, "PRAGMA user_version = " + newer + "; DROP TABLE locks;");  // and a layout we cannot read
    EXPECT_EQ(load_error(path), "cannot read session file '" + path + "' (it has schema version " + newer +
                                    "; this lockscope reads versions up to " + std::to_string(kSchemaVersion) +
                                    ", use a newer lockscope)");
    EXPECT_THROW(peek_session(path), Error);
}

TEST(SessionLoadTest, NonSessionFilesAreOneClearSentence)
{
    TempDir dir;
    auto expect_not_session = [&](const std::string& path, const std::string& why) {
        EXPECT_EQ(load_error(path), "'" + path + "' is not a lockscope session (" + why + ")");
    };
    write_file(dir.file("empty"), "");
    expect_not_session(dir.file("empty"), "the file is empty");
    write_file(dir.file("text"), "name,wait_ns\nrtnl_mutex,12\n");
    expect_not_session(dir.file("text"), "it is not an SQLite database");
    write_file(dir.file("short"), "SQLite");
    expect_not_session(dir.file("short"), "it is not an SQLite database");
    std::string junk(8192, '\0');
    for (size_t i = 0; i < junk.size(); ++i)
        junk[i] = char((i * 2654435761u) >> 13);
    write_file(dir.file("junk"), junk);
    expect_not_session(dir.file("junk"), "it is not an SQLite database");
    // A truncated SQLite header: right magic, garbage after it.
    write_file(dir.file("header"), std::string("SQLite format 3\0", 16) + junk);
    EXPECT_NE(load_error(dir.file("header")).find("is not a lockscope session"), std::string::npos)
        << load_error(dir.file("header"));

    expect_not_session(dir.path(), "it is a directory");
    ASSERT_EQ(mkfifo(dir.file("fifo").c_str(), 0600), 0);
    expect_not_session(dir.file("fifo"), "it is not a regular file");  // and does not block

    const std::string other = dir.file("other.db");
    exec_sql(other, "CREATE TABLE t(x); INSERT INTO t VALUES(1);");
    expect_not_session(other, "it is an SQLite database without a lockscope schema version");
    const std::string lookalike = dir.file("lookalike.db");
    exec_sql(lookalike, "PRAGMA user_version = 1; CREATE TABLE meta(key, value);");
    EXPECT_NE(load_error(lookalike).find("is not a lockscope session (no such table"), std::string::npos)
        << load_error(lookalike);

    EXPECT_EQ(load_error(dir.file("absent")),
              "cannot open session file '" + dir.file("absent") + "': No such file or directory");
}

// The real schema without its constraints, so that rows a hostile tool
// could write (NULLs, wrong types) can be planted.
TEST(SessionLoadTest, HostileRowsAreSkippedAndCounted)
{
    TempDir dir;
    const std::string path = dir.file("hostile.lockscope");
    std::string schema = detail::schema_sql();
    for (size_t at; (at = schema.find("NOT NULL")) != std::string::npos;)
        schema.erase(at, 8);
    exec_sql(path, "PRAGMA user_version = " + std::to_string(kSchemaVersion) + ";" + schema);
    const std::string counters = detail::kCounterColumns;
    std::string zeros = "0";  // one per counter field
    for (size_t i = 1; i < std::size(kCounterFields); ++i)
        zeros += ",0";
    exec_sql(path,
             "INSERT INTO meta VALUES('host', 'evil'), (x'00ff', 'x'), ('k', NULL);"
             "INSERT INTO runs(id, label, start_ns, end_ns, status) VALUES"
             " (1, 'r', 0, 10, 'complete'), (2, NULL, 0, 10, 'x');"
             "INSERT INTO locks VALUES(1, 'good', 'mutex', '', 'f', -1, 33, 'slab', 'x', '');"
             "INSERT INTO locks VALUES(2, NULL, 'mutex', '', 'f', 0, 33, '', '', '');"
             "INSERT INTO locks VALUES(3, 'bad flags', 'mutex', '', 'f', 0, 99999999999, '', '', '');"
             "INSERT INTO locks VALUES(4, 'blob source', 'mutex', '', 'f', 0, 33, x'00ff', '', '');"
             // intervals: good, huge, ends before start, negative, unknown run, real number
             "INSERT INTO intervals(run, idx, start_ns, end_ns, idle_ns, cpu_ns, events, lost, "
             " ops, " +
                 counters +
                 ") VALUES"
                 " (1, 0, 0, 1000, 10, 100, 1, 0, NULL, " +
                 zeros +
                 ", '', '0:1'),"
                 " (1, 1, 1000, 9223372036854775807, 9223372036854775807, 9223372036854775807, 1, 0,"
                 "  1e300, 9223372036854775807," +
                 zeros.substr(2) +
                 ", '4:9223372036854775807', ''),"
                 " (1, 2, 5000, 10, 0, 0, 0, 0, NULL, " +
                 zeros +
                 ", '', ''),"
                 " (1, 3, 0, 10, 0, 0, -5, 0, NULL, " +
                 zeros +
                 ", '', ''),"
                 " (7, 0, 0, 10, 0, 0, 0, 0, NULL, " +
                 zeros +
                 ", '', ''),"
                 " (1, 4, 0, 10.5, 0, 0, 0, 0, NULL, " +
                 zeros +
                 ", '', '');"
                 // lock_intervals: good, malformed hist variants, NULL owner, dangling lock
                 "INSERT INTO lock_intervals(run, idx, lock_id, " +
                 counters +
                 ") VALUES"
                 " (1, 0, 1, 5," +
                 zeros.substr(2) +
                 ", '', '3:2 35:1'),"
                 " (1, 1, 1, 5," +
                 zeros.substr(2) +
                 ", '', 'x:y'),"
                 " (1, 2, 1, 5," +
                 zeros.substr(2) +
                 ", '', '36:1'),"
                 " (1, 3, 1, 5," +
                 zeros.substr(2) +
                 ", '', '3:1 3:1'),"
                 " (1, 4, 1, 5," +
                 zeros.substr(2) +
                 ", '', '-1:4'),"
                 " (1, 5, 1, 5," +
                 zeros.substr(2) +
                 ", '', '3:99999999999999999999999'),"
                 " (1, 6, 1, 5," +
                 zeros.substr(2) +
                 ", '', '3:1 '),"
                 " (1, 7, 1, 5," +
                 zeros.substr(2) +
                 ", NULL, ''),"
                 " (1, 8, 999, 5," +
                 zeros.substr(2) +
                 ", '', ''),"
                 " (1, 9, 2, 5," +
                 zeros.substr(2) +
                 ", '', '');"
                 "INSERT INTO stacks VALUES(1, 1, 'waiter', 'a+0x1\nb+0x2', 3, 30),"
                 " (1, 999, 'waiter', 'a', 1, 1), (1, 1, 'waiter', NULL, 1, 1);"
                 "INSERT INTO tasks(run, pid, tgid, comm, " +
                 counters +
                 ") VALUES"
                 " (1, 10, 10, 'ok', " +
                 zeros +
                 ", '', ''),"
                 " (1, -1, 10, 'neg', " +
                 zeros +
                 ", '', ''),"
                 " (1, 4294967296, 10, 'big', " +
                 zeros + ", '', '');");

    Session s;
    ASSERT_NO_THROW(s = load_session(path));
    EXPECT_EQ(s.meta.size(), 1u);
    EXPECT_EQ(s.meta_value("host"), "evil");
    EXPECT_EQ(s.runs.size(), 1u);
    ASSERT_EQ(s.locks.size(), 1u);
    EXPECT_EQ(s.locks[0].address, ~uint64_t(0));
    ASSERT_EQ(s.intervals.size(), 2u);
    EXPECT_EQ(s.intervals[1].counters.contentions, uint64_t(INT64_MAX));
    EXPECT_EQ(s.intervals[1].counters.owner[4], uint64_t(INT64_MAX));
    ASSERT_EQ(s.lock_intervals.size(), 1u);
    EXPECT_EQ(s.lock_intervals[0].counters.hist[35], 1u);
    EXPECT_EQ(s.stacks.size(), 1u);
    EXPECT_EQ(s.stacks[0].frames, (std::vector<std::string>{"a+0x1", "b+0x2"}));
    EXPECT_EQ(s.tasks.size(), 1u);
    // One line per table with skipped rows, saying how many and why.
    ASSERT_EQ(s.warnings.size(), 7u);
    std::string all;
    for (const auto& w : s.warnings)
        all += w + "\n";
    EXPECT_NE(all.find("skipped 9 invalid rows of table lock_intervals"), std::string::npos) << all;
    EXPECT_NE(all.find("skipped 3 invalid rows of table locks"), std::string::npos) << all;
    EXPECT_NE(all.find("skipped 4 invalid rows of table intervals"), std::string::npos) << all;
    EXPECT_NE(all.find("(first: malformed histogram 'x:y')"), std::string::npos) << all;
    EXPECT_NE(all.find("(first: pid is negative)"), std::string::npos) << all;

    // And what survived still makes a report without overflow surprises.
    Report rep;
    ASSERT_NO_THROW(rep = build_report(s, ReportOptions{.top = 0}));
    EXPECT_EQ(rep.totals.counters.contentions, uint64_t(INT64_MAX));
    EXPECT_FALSE(format_text(rep).empty());
    EXPECT_FALSE(format_json(rep).empty());
    EXPECT_NO_THROW(peek_session(path));
}

// lock_cgroups and holder_tasks came to version 3 without a bump: a
// version-3 file without them loads quietly; in a later file their absence
// is damage, said in one warning each, and everything else still loads.
TEST(SessionLoadTest, ATableLaterVersionsAlwaysHaveIsAWarningWhenMissing)
{
    TempDir dir;
    const std::string current = dir.file("current.lockscope"), v3 = dir.file("v3.lockscope");
    write_sample(current, 1, 2, 3);
    exec_sql(current, "DROP TABLE lock_cgroups; DROP TABLE holder_tasks;");
    Session s = load_session(current);
    EXPECT_EQ(s.locks.size(), 3u);
    EXPECT_EQ(s.intervals.size(), 2u);
    ASSERT_EQ(s.warnings.size(), 2u);
    EXPECT_NE(s.warnings[0].find("table lock_cgroups is missing"), std::string::npos) << s.warnings[0];
    EXPECT_NE(s.warnings[1].find("table holder_tasks is missing"), std::string::npos) << s.warnings[1];

    write_sample(v3, 1, 2, 3);
    exec_sql(v3, "DROP TABLE lock_cgroups; DROP TABLE holder_tasks; PRAGMA user_version = 3;");
    s = load_session(v3);
    EXPECT_EQ(s.locks.size(), 3u);
    EXPECT_TRUE(s.warnings.empty()) << s.warnings.front();
}
