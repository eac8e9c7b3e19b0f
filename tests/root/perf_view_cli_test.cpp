// perf lock contention's view options on recorded sessions (no privileges
// needed): -i, -q, -l, -x, --output, -v, -o/--lock-owner, the kinds -Y
// takes, and the options lockscope does not offer, each refused with why.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <iterator>

#include "core/storage/session_store.h"
#include "recorded_session.h"
#include "sample_session.h"
#include "subprocess.h"

namespace lockscope {
namespace {

using test::kRecordedPipe;

test::Finished lockscope(std::vector<std::string> args)
{
    return test::run_lockscope(std::move(args));
}

// The lines of a command's output, without their line ends.
std::vector<std::string> lines_of(const std::string& text)
{
    std::vector<std::string> out;
    for (size_t at = 0; at < text.size();) {
        const size_t end = std::min(text.find('\n', at), text.size());
        out.push_back(text.substr(at, end - at));
        at = end + 1;
    }
    return out;
}

std::string read_file(const std::string& path)
{
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The sample session with what the recorded one lacks: sampled holders
// (stacks and tasks) and user-space locks of two kinds.
std::string session_with_holders_and_user_locks()
{
    const std::string path = test::temp_path("holders.lockscope");
    auto w = SessionWriter::create(path, true);
    w.set_meta(testing::sample_meta());
    const int64_t run = w.begin_run("run 1", 1'000'000'000ull);
    IntervalBatch b = testing::sample_batch(run, 0, 3);
    b.stacks.push_back({run, 1, "holder:preempted", {"pipe_write+0x54", "vfs_write+0x2a1"}, 4, 9000});
    b.stacks.push_back({run, 3, "holder:sleeping", {"schedule+0x10", "io_schedule+0x4", "folio_wait+0x8"}, 2, 3000});
    b.stacks.push_back({run, 1, "holder:on-cpu", {"copy_page_from_iter+0x33"}, 5, 0});
    b.holder_tasks.push_back({run, 1, 4242, 4240, "writer", 6});
    b.holder_tasks.push_back({run, 3, 4243, 4240, "flusher", 2});
    UserLockRow mutex;
    mutex.run = run;
    mutex.pid = 4240;
    mutex.name = "g_cache_lock";
    mutex.kind = "pthread_mutex";
    mutex.caller = "Cache::get";
    mutex.waits = 120;
    mutex.wait_ns = 4'000'000;
    UserLockRow reader = mutex;
    reader.name = "g_table_lock";
    reader.kind = "pthread_rwlock/r";
    reader.waits = 30;
    b.user_locks = {mutex, reader};
    b.user_lock_runs.push_back({.run = run, .status = "recorded", .pids = "4240"});
    w.write_interval(b);
    testing::end_run_complete(w, b);
    w.close();
    return path;
}

TEST(PerfView, InputIsTheSessionFile)
{
    const test::Finished positional = lockscope({"report", kRecordedPipe, "--format", "json"});
    const test::Finished input = lockscope({"report", "-i", kRecordedPipe, "--format", "json"});
    ASSERT_EQ(input.exit_code, 0) << input.err;
    EXPECT_EQ(input.out, positional.out);
    EXPECT_EQ(lockscope({"report", "--input", kRecordedPipe, "--format", "json"}).out, positional.out);
    EXPECT_EQ(lockscope({"report", "-i", kRecordedPipe, test::temp_path("other.lockscope")}).exit_code, 2);
    // Standard input, as perf's -i -.
    const test::Finished piped =
        test::run({"/bin/sh", "-c", test::lockscope_bin() + " report -i - --format json < '" + kRecordedPipe + "'"});
    ASSERT_EQ(piped.exit_code, 0) << piped.err;
    EXPECT_EQ(nlohmann::json::parse(piped.out)["totals"], nlohmann::json::parse(positional.out)["totals"]);
}

TEST(PerfView, AMissingSessionFileIsAUsageError)
{
    // As --help and the man page say: 2 for a missing file, 1 for a file that is no session.
    for (const std::vector<std::string>& args : {std::vector<std::string>{"report", "missing.lockscope"},
                                                 {"report", "-i", "missing.lockscope"},
                                                 {"con", "-i", "missing.lockscope"},
                                                 {"export", "missing.lockscope", "--format", "csv"}}) {
        const test::Finished f = lockscope(args);
        EXPECT_EQ(f.exit_code, 2) << args[0] << " " << args[1] << ": " << f.err;
        EXPECT_NE(f.err.find("no such session file 'missing.lockscope'"), std::string::npos) << f.err;
    }
}

TEST(PerfView, QuietPrintsTheRowsAlone)
{
    const test::Finished all = lockscope({"report", kRecordedPipe, "-E", "3"});
    const test::Finished quiet = lockscope({"report", kRecordedPipe, "-E", "3", "-q"});
    ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
    const std::vector<std::string> rows = lines_of(quiet.out);
    ASSERT_EQ(rows.size(), 3u) << quiet.out;
    for (const std::string& row : rows)
        EXPECT_NE(all.out.find(row + "\n"), std::string::npos) << "not a row of the report: " << row;
    EXPECT_EQ(quiet.out.find("contentions"), std::string::npos) << quiet.out;
    EXPECT_TRUE(quiet.err.empty()) << quiet.err;
    // CSV: the rows without the header.
    const std::vector<std::string> csv =
        lines_of(lockscope({"report", kRecordedPipe, "-E", "2", "--format", "csv"}).out);
    const std::vector<std::string> csv_rows =
        lines_of(lockscope({"report", kRecordedPipe, "-E", "2", "-q", "--format", "csv"}).out);
    ASSERT_EQ(csv.size(), 3u);
    EXPECT_EQ(csv_rows, std::vector<std::string>(csv.begin() + 1, csv.end()));
    // Nothing matched: nothing printed.
    EXPECT_EQ(lockscope({"report", kRecordedPipe, "-q", "-L", "rtnl_mutex"}).out, "");
}

TEST(PerfView, AFilterThatMatchesNothingSaysSo)
{
    const test::Finished f = lockscope({"report", kRecordedPipe, "-L", "rtnl_mutex"});
    ASSERT_EQ(f.exit_code, 0) << f.err;
    EXPECT_NE(f.out.find("no lock matched the filters (lock rtnl_mutex)"), std::string::npos) << f.out;
    EXPECT_EQ(f.out.find("no contention recorded"), std::string::npos) << f.out;
}

TEST(PerfView, LockAddrIsOneRowPerLockObject)
{
    const nlohmann::json l = nlohmann::json::parse(lockscope({"report", kRecordedPipe, "-l", "--format", "json"}).out);
    EXPECT_EQ(l["group_by"], "instance");
    EXPECT_EQ(l["locks"],
              nlohmann::json::parse(
                  lockscope({"report", kRecordedPipe, "--by", "instance", "--format", "json"}).out)["locks"]);
    EXPECT_EQ(lockscope({"report", kRecordedPipe, "--lock-addr", "-t"}).exit_code, 2) << "one grouping";
}

TEST(PerfView, FieldSeparatorWritesTheCsvWithIt)
{
    const std::string session = session_with_holders_and_user_locks();
    // A task named 'worker, "2"': a field with a comma and quotes.
    const test::Finished comma = lockscope({"report", session, "-t", "--format", "csv"});
    const test::Finished semicolon = lockscope({"report", session, "-t", "-x", ";"});
    ASSERT_EQ(semicolon.exit_code, 0) << semicolon.err;
    const std::vector<std::string> a = lines_of(comma.out), b = lines_of(semicolon.out);
    ASSERT_EQ(a.size(), b.size());
    ASSERT_GE(b.size(), 3u);
    const auto separators = [](const std::string& line, char sep) {
        size_t n = 0;
        bool quoted = false;
        for (char c : line)
            quoted = c == '"' ? !quoted : quoted, n += !quoted && c == sep;
        return n;
    };
    for (size_t i = 0; i < a.size(); i++)
        EXPECT_EQ(separators(b[i], ';'), separators(a[i], ',')) << b[i];
    EXPECT_NE(semicolon.out.find("name;kind;mode;caller;contentions"), std::string::npos) << semicolon.out;
    EXPECT_NE(semicolon.out.find("\n\"worker, \"\"2\"\"[101]\";"), std::string::npos) << semicolon.out;
    EXPECT_NE(semicolon.out.find("\nworker[100];"), std::string::npos) << "no quotes where none are needed";
    EXPECT_EQ(lockscope({"report", session, "-x", ";", "--format", "json"}).exit_code, 2);
    EXPECT_EQ(lockscope({"report", session, "-x", ""}).exit_code, 2);
}

TEST(PerfView, OutputWritesTheReportToAFile)
{
    const std::string file = test::temp_path("report.txt");
    const test::Finished f = lockscope({"report", kRecordedPipe, "-E", "2", "--output", file});
    ASSERT_EQ(f.exit_code, 0) << f.err;
    EXPECT_EQ(f.out, "");
    EXPECT_EQ(read_file(file), lockscope({"report", kRecordedPipe, "-E", "2"}).out);
    EXPECT_FALSE(std::ifstream(file + ".partial").good()) << "the file is written whole, then renamed";
    const test::Finished bad = lockscope({"report", kRecordedPipe, "--output", "/nonexistent-dir/r.txt"});
    EXPECT_EQ(bad.exit_code, 1);
    EXPECT_NE(bad.err.find("/nonexistent-dir/r.txt"), std::string::npos) << bad.err;
}

TEST(PerfView, VerboseAddsEachLocksWaiterStacks)
{
    const test::Finished v = lockscope({"report", kRecordedPipe, "-v", "-L", "pipe->mutex"});
    ASSERT_EQ(v.exit_code, 0) << v.err;
    const size_t stacks = v.out.find("waiter stacks: ");
    ASSERT_NE(stacks, std::string::npos) << v.out;
    EXPECT_NE(v.out.find("  pipe->mutex mutex (", stacks), std::string::npos) << v.out;
    EXPECT_NE(v.out.find("pipe_read", stacks), std::string::npos) << v.out;
    // With -q: the row, then its stacks.
    const std::vector<std::string> quiet =
        lines_of(lockscope({"report", kRecordedPipe, "-v", "-q", "-L", "pipe->mutex"}).out);
    ASSERT_GE(quiet.size(), 3u);
    EXPECT_EQ(quiet[0].rfind("pipe->mutex ", 0), 0u) << quiet[0];
    EXPECT_EQ(quiet[1].rfind("  pipe->mutex mutex (", 0), 0u) << quiet[1];
}

TEST(PerfView, LockOwnerRowsAreTheSampledHolders)
{
    const std::string session = session_with_holders_and_user_locks();
    const test::Finished o = lockscope({"report", session, "-o"});
    ASSERT_EQ(o.exit_code, 0) << o.err;
    EXPECT_EQ(o.out, lockscope({"report", session, "--lock-owner"}).out);
    const std::vector<std::string> rows = lines_of(lockscope({"report", session, "-o", "-q"}).out);
    ASSERT_EQ(rows.size(), 3u);
    // Most wait first; the on-cpu holder (a timer's sample) has none.
    EXPECT_EQ(rows[0].rfind("pipe_write <- vfs_write ", 0), 0u) << rows[0];
    EXPECT_NE(rows[0].find(" preempted "), std::string::npos) << rows[0];
    EXPECT_NE(rows[0].find("9.00 µs"), std::string::npos) << rows[0];
    EXPECT_NE(rows[0].find("75%"), std::string::npos) << rows[0];
    EXPECT_EQ(rows[1].rfind("schedule <- io_schedule <- folio_wait  sleeping ", 0), 0u) << rows[1];
    EXPECT_EQ(rows[2].rfind("copy_page_from_iter", 0), 0u) << rows[2];
    // -t: by the holders' tasks.
    const std::vector<std::string> tasks = lines_of(lockscope({"report", session, "-o", "-t", "-q"}).out);
    ASSERT_EQ(tasks.size(), 2u);
    EXPECT_EQ(tasks[0].rfind("writer[4242]", 0), 0u) << tasks[0];
    EXPECT_NE(tasks[0].find("75%"), std::string::npos) << tasks[0];
    const test::Finished csv = lockscope({"report", session, "-o", "-x", ","});
    EXPECT_EQ(lines_of(csv.out)[0], "holder,state,samples,wait_ns,share,locks") << csv.out;
    EXPECT_NE(csv.out.find("pipe_write <- vfs_write,preempted,4,9000,0.75,pipe->mutex"), std::string::npos) << csv.out;
    EXPECT_EQ(lockscope({"report", session, "-o", "--format", "json"}).exit_code, 2);
    EXPECT_EQ(lockscope({"report", session, "-o", "--lock-cgroup"}).exit_code, 2);
}

TEST(PerfView, TypeFilterTakesTheKindsTheReportPrints)
{
    const std::string session = session_with_holders_and_user_locks();
    auto report = [&](std::vector<std::string> extra) {
        std::vector<std::string> args = {"report", session, "--format", "json", "-E", "0"};
        args.insert(args.end(), extra.begin(), extra.end());
        const test::Finished f = lockscope(args);
        EXPECT_EQ(f.exit_code, 0) << f.err;
        return f.exit_code ? nlohmann::json::object() : nlohmann::json::parse(f.out);
    };
    auto user_kinds = [](const nlohmann::json& j) {
        std::vector<std::string> kinds;
        for (const auto& r : j["user_locks"]["rows"])
            kinds.push_back(r["kind"]);
        return kinds;
    };
    ASSERT_EQ(user_kinds(report({})).size(), 2u);
    const nlohmann::json mutexes = report({"-Y", "pthread_mutex"});
    EXPECT_EQ(user_kinds(mutexes), std::vector<std::string>{"pthread_mutex"});
    EXPECT_TRUE(mutexes["locks"].empty()) << "no kernel lock is a pthread mutex";
    EXPECT_EQ(user_kinds(report({"-Y", "pthread_rwlock:R"})), std::vector<std::string>{"pthread_rwlock/r"});
    EXPECT_TRUE(user_kinds(report({"-Y", "pthread_rwlock:W"})).empty());
    // A kernel kind keeps no user lock; a name keeps the locks it names, on both sides.
    const nlohmann::json kernel = report({"-Y", "mutex"});
    EXPECT_TRUE(user_kinds(kernel).empty());
    EXPECT_FALSE(kernel["locks"].empty());
    const nlohmann::json named = report({"-L", "g_table*"});
    EXPECT_EQ(user_kinds(named), std::vector<std::string>{"pthread_rwlock/r"});
    EXPECT_TRUE(named["locks"].empty());
    EXPECT_EQ(user_kinds(report({"--caller", "Cache::*"})).size(), 2u);
    const test::Finished text = lockscope({"report", session, "-Y", "rwsem"});
    EXPECT_NE(text.out.find("no user-space lock matched the filters"), std::string::npos) << text.out;
}

TEST(PerfView, PerTaskRowsRefuseALockFilter)
{
    for (const char* grouping : {"-t", "--lock-cgroup"}) {
        const test::Finished f = lockscope({"report", kRecordedPipe, grouping, "-S", "pipe"});
        EXPECT_EQ(f.exit_code, 2) << grouping;
        EXPECT_NE(f.err.find("cover every lock"), std::string::npos) << f.err;
    }
}

TEST(PerfView, ContentionPrintsARecordedSessionOnStderr)
{
    const test::Finished con = lockscope({"con", "-i", kRecordedPipe, "-E", "2", "-q"});
    ASSERT_EQ(con.exit_code, 0) << con.err;
    EXPECT_EQ(con.out, "");
    EXPECT_EQ(con.err, lockscope({"report", kRecordedPipe, "-E", "2", "-q"}).out);
    EXPECT_EQ(lockscope({"contention", "-i", kRecordedPipe, "-E", "2", "-q"}).err, con.err);
    const test::Finished both = lockscope({"con", "-i", kRecordedPipe, "-a"});
    EXPECT_EQ(both.exit_code, 2);
    EXPECT_NE(both.err.find("-i prints a recorded session"), std::string::npos) << both.err;
}

TEST(PerfView, OptionsNotOfferedSayWhy)
{
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"report", kRecordedPipe, "--max-stack", "8"}, "16 frames"},
        {{"record", "--stack-skip", "3", "-d", "1"}, "by name"},
        {{"con", "-a", "-J", "1ms@rtnl_mutex"}, "never delays"},
        {{"con", "-a", "--inject-delay=1ms@rtnl_mutex"}, "never delays"},
        {{"top", "--vmlinux", "/boot/vmlinux"}, "kallsyms"},
        {{"report", kRecordedPipe, "-D"}, "record --trace"},
    };
    for (const auto& [args, why] : cases) {
        const test::Finished f = lockscope(args);
        EXPECT_EQ(f.exit_code, 2) << args[0] << " " << args[2];
        EXPECT_NE(f.err.find("is not offered"), std::string::npos) << f.err;
        EXPECT_NE(f.err.find(why), std::string::npos) << f.err;
    }
}

TEST(PerfView, MapNrEntriesIsCheckedBeforeRecording)
{
    const test::Finished small = lockscope({"record", "-M", "10", "-d", "1"});
    EXPECT_EQ(small.exit_code, 2);
    EXPECT_NE(small.err.find("-M/--map-nr-entries must be between 64 and 1048576"), std::string::npos) << small.err;
    const test::Finished twice = lockscope({"record", "-M", "1024", "--max-locks", "2048", "-d", "1"});
    EXPECT_EQ(twice.exit_code, 2);
    EXPECT_NE(twice.err.find("once"), std::string::npos) << twice.err;
    EXPECT_EQ(lockscope({"con", "--map-nr-entries", "1", "-a"}).exit_code, 2);
}

TEST(PerfView, CgroupFilterTakesPerfsNamesFromTheRoot)
{
    // '/' is the root cgroup, as perf and report --by cgroup name it: the
    // recording goes on to the next check (the thread), where it stops.
    for (const char* root : {"/", "/,/"}) {
        const test::Finished f =
            lockscope({"record", "-G", root, "--tid", "2147483646", "-d", "1", "-o", test::temp_path("g.lockscope")});
        EXPECT_EQ(f.exit_code, 1) << f.err;
        EXPECT_NE(f.err.find("no thread with TID 2147483646"), std::string::npos) << f.err;
    }
}

}  // namespace
}  // namespace lockscope
