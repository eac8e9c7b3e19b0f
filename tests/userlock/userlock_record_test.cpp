// `lockscope record -o FILE -- userlock_prog`: the program's own locks land
// in the session beside the kernel's, and `lockscope report` shows them as
// a user would look for them: its two global mutexes by their symbols, its
// heap mutex by the method that takes it, its shared mutex as a rwlock, no
// condition-variable row but a "left out" line that counts its waits; the
// waits agree within 2% with the independent futex observer
// (futex_observer.bpf.c) attached to the same process. --scope kernel hides
// them, and --no-user-locks records none.
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "prometheus_server.h"
#include "subprocess.h"
#include "observed_run.h"

namespace {

using namespace lockscope::userlock_test;
using lockscope::test::Program;
namespace test = lockscope::test;

// The process `lockscope record` forked to run the command: the only
// child of any of its threads.
pid_t command_of(pid_t recorder)
{
    const std::string tasks = "/proc/" + std::to_string(recorder) + "/task";
    DIR* dir = opendir(tasks.c_str());
    pid_t child = -1;
    while (dir != nullptr) {
        const dirent* entry = readdir(dir);
        if (entry == nullptr) {
            break;
        }
        std::ifstream children(tasks + "/" + entry->d_name + "/children");
        if (pid_t pid = 0; children >> pid) {
            child = pid;
        }
    }
    if (dir != nullptr) {
        closedir(dir);
    }
    return child;
}

struct Recorded {
    std::string failure;
    std::string file;
    std::map<std::string, uint64_t> observed;  // futex waits per lock, as the observer counted them
    std::string text;                          // lockscope report FILE
    nlohmann::json json;                       // lockscope report FILE --format json
};

// Records the program under `lockscope record` with `options`, the
// observer counting its futex waits from "ready" until it has exited.
Recorded record(const std::string& name, const std::vector<std::string>& options)
{
    Recorded r;
    r.file = test::temp_path(name + ".lockscope");
    std::vector<std::string> args = {"record", "-o", r.file};
    args.insert(args.end(), options.begin(), options.end());
    args.insert(args.end(), {"--", USERLOCK_PROG, "1500"});
    const std::string bin = test::lockscope_bin();
    Program lockscope(bin.c_str(), args);
    std::map<std::string, LockRange> locks;
    if (!read_locks(lockscope, locks, 60000)) {
        r.failure = "the test program did not start under lockscope record";
        return r;
    }
    const pid_t program = command_of(lockscope.pid());
    FutexObserver observer(program, locks);
    if (program <= 0 || !observer.failure().empty()) {
        r.failure = program <= 0 ? "no command process under lockscope record" : observer.failure();
        return r;
    }
    std::map<std::string, long> contended;
    lockscope.say("go\n");
    if (!read_until_done(lockscope, contended, 60000)) {
        r.failure = "the test program did not finish";
        return r;
    }
    // Its stdin closed, the program exits; record writes the session and ends.
    if (!lockscope.finish_within(120)) {
        r.failure = "lockscope record did not end";
        return r;
    }
    r.observed = observer.stop();
    const test::Finished text = test::run({test::lockscope_bin(), "report", r.file, "-E", "0"});
    const test::Finished json = test::run({test::lockscope_bin(), "report", r.file, "--format", "json", "-E", "0"});
    if (text.exit_code != 0 || json.exit_code != 0) {
        r.failure = "lockscope report failed: " + text.err + json.err;
        return r;
    }
    r.text = text.out;
    r.json = nlohmann::json::parse(json.out);
    return r;
}

std::vector<nlohmann::json> rows_named(const nlohmann::json& report, const std::string& name)
{
    std::vector<nlohmann::json> rows;
    if (!report.contains("user_locks")) {
        return rows;
    }
    for (const auto& row : report["user_locks"]["rows"]) {
        if (row["name"] == name) {
            rows.push_back(row);
        }
    }
    return rows;
}

class RecordUserLocks : public ::testing::Test {
protected:
    static void SetUpTestSuite()
    {
        if (geteuid() == 0) {
            with_ = new Recorded(record("with", {}));
            without_ = new Recorded(record("without", {"--no-user-locks"}));
            if (with_->failure.empty()) {
                std::printf("%s", with_->text.c_str());
            }
        }
    }
    static void TearDownTestSuite()
    {
        delete with_;
        delete without_;
    }
    void SetUp() override
    {
        if (with_ == nullptr) {
            GTEST_SKIP() << "needs root to load BPF programs and read another process's maps";
        }
        ASSERT_EQ(with_->failure, "");
        ASSERT_EQ(without_->failure, "");
    }
    static Recorded* with_;
    static Recorded* without_;
};

Recorded* RecordUserLocks::with_ = nullptr;
Recorded* RecordUserLocks::without_ = nullptr;

TEST_F(RecordUserLocks, GlobalMutexesAreNamedByTheirSymbols)
{
    for (const char* name : {"g_cache_lock", "g_stats_lock"}) {
        const auto rows = rows_named(with_->json, name);
        ASSERT_EQ(rows.size(), 1u) << name << "\n" << with_->text;
        EXPECT_EQ(rows[0]["scope"], "user");
        EXPECT_EQ(rows[0]["kind"], "pthread_mutex");
        EXPECT_EQ(rows[0]["name_source"], "user-symbol");
        EXPECT_EQ(rows[0]["module"], "userlock_prog");
        EXPECT_NE(with_->text.find(name), std::string::npos);
    }
}

TEST_F(RecordUserLocks, TheHeapMutexIsNamedByTheMethodThatTakesIt)
{
    const auto rows = rows_named(with_->json, "pthread_mutex@Cache::get");
    ASSERT_EQ(rows.size(), 1u) << with_->text;
    EXPECT_EQ(rows[0]["kind"], "pthread_mutex");
    EXPECT_EQ(rows[0]["name_source"], "user-caller");
    EXPECT_NE(with_->text.find("pthread_mutex@Cache::get"), std::string::npos) << with_->text;
}

TEST_F(RecordUserLocks, TheSharedMutexIsARwlock)
{
    const auto rows = rows_named(with_->json, "g_table_lock");
    ASSERT_FALSE(rows.empty()) << with_->text;
    std::set<std::string> kinds;
    for (const auto& row : rows) {
        kinds.insert(row["kind"].get<std::string>());
    }
    EXPECT_TRUE(kinds.count("pthread_rwlock/w")) << with_->text;
    for (const auto& kind : kinds) {
        EXPECT_EQ(kind.rfind("pthread_rwlock/", 0), 0u) << kind;
    }
    EXPECT_NE(with_->text.find("pthread_rwlock/w"), std::string::npos) << with_->text;
}

TEST_F(RecordUserLocks, NoConditionVariableRowButALeftOutLineCountingItsWaits)
{
    EXPECT_TRUE(rows_named(with_->json, "g_queue_cv").empty()) << with_->text;
    EXPECT_EQ(with_->text.find("g_queue_cv"), std::string::npos) << with_->text;
    const auto& left_out = with_->json["user_locks"]["left_out"];
    ASSERT_TRUE(left_out.contains("condition")) << left_out.dump();
    const uint64_t condition = left_out["condition"]["waits"];
    EXPECT_GE(condition, with_->observed.at("g_queue_cv"));
    EXPECT_GT(condition, 0u);
    // as the report writes a count: 1,234
    std::string count = std::to_string(condition);
    for (int at = int(count.size()) - 3; at > 0; at -= 3)
        count.insert(std::size_t(at), ",");
    const std::string line = "left out: " + count + " condition-variable waits";
    EXPECT_NE(with_->text.find(line), std::string::npos) << line << "\n" << with_->text;
}

TEST_F(RecordUserLocks, WaitsAgreeWithTheIndependentObserverWithinTwoPercent)
{
    for (const auto& [lock, row_name] : kRowNames) {
        uint64_t recorded = 0;
        for (const auto& row : rows_named(with_->json, row_name)) {
            recorded += row["waits"].get<uint64_t>();
        }
        EXPECT_EQ(disagreement(lock, recorded, with_->observed.at(lock)), "");
    }
}

TEST_F(RecordUserLocks, ScopeKernelHidesThemAndScopeUserShowsOnlyThem)
{
    const test::Finished kernel = test::run({test::lockscope_bin(), "report", with_->file, "--scope", "kernel"});
    ASSERT_EQ(kernel.exit_code, 0) << kernel.err;
    EXPECT_EQ(kernel.out.find("g_cache_lock"), std::string::npos) << kernel.out;
    EXPECT_EQ(kernel.out.find("user-space locks"), std::string::npos) << kernel.out;
    const test::Finished json =
        test::run({test::lockscope_bin(), "report", with_->file, "--scope", "kernel", "--format", "json"});
    EXPECT_FALSE(nlohmann::json::parse(json.out).contains("user_locks"));

    const test::Finished user =
        test::run({test::lockscope_bin(), "report", with_->file, "--scope", "user", "--format", "csv"});
    ASSERT_EQ(user.exit_code, 0) << user.err;
    EXPECT_EQ(user.out.rfind("scope,name,kind,", 0), 0u) << user.out;
    EXPECT_NE(user.out.find("user,g_cache_lock,pthread_mutex,user-symbol,userlock_prog,"), std::string::npos)
        << user.out;
}

// export --format folded: the user locks' sampled stacks, root first, with
// the program's own functions (no frame pointers: unwound with its CFI)
// carrying the lock's wait, which adds up to the report's.
TEST_F(RecordUserLocks, FoldedExportHasTheUserLocksStacksWithTheProgramsFunctions)
{
    const test::Finished folded = test::run({test::lockscope_bin(), "export", with_->file, "--format", "folded"});
    ASSERT_EQ(folded.exit_code, 0) << folded.err;
    const std::map<std::string, std::string> callers = {
        {"g_cache_lock", "update_cache"}, {"g_stats_lock", "record_stats"}, {"pthread_mutex@Cache::get", "Cache::get"}};
    for (const auto& [name, caller] : callers) {
        const std::string root = name + " [user pthread_mutex];";
        uint64_t all = 0, named = 0;
        std::istringstream lines(folded.out);
        for (std::string line; std::getline(lines, line);) {
            if (line.rfind(root, 0) != 0) {
                continue;
            }
            const uint64_t weight = std::stoull(line.substr(line.rfind(' ') + 1));
            all += weight;
            named += line.find(";" + caller) != std::string::npos ? weight : 0;
        }
        const auto rows = rows_named(with_->json, name);
        ASSERT_EQ(rows.size(), 1u) << name;
        EXPECT_EQ(all, rows[0]["wait_ns"].get<uint64_t>()) << name << ": the stacks carry the lock's whole wait";
        EXPECT_GE(named * 10, all * 9) << name << ": " << named << " of " << all << " ns under " << caller;
    }
}

// record --trace: every lock wait is one slice of the Chrome trace, named
// by its lock (category "user", "woken" after its wakeup), on its thread's
// track: as many as the report's waits, none of the condition variable's,
// each slice's parts adding up to its wait, wakeups drawn as arrows.
TEST_F(RecordUserLocks, ChromeTraceHasEveryLockWaitAsASliceWithItsParts)
{
    const Recorded run = record("traced", {"--trace"});
    ASSERT_EQ(run.failure, "");
    const test::Finished f = test::run({test::lockscope_bin(), "export", run.file, "--format", "chrome-trace"});
    ASSERT_EQ(f.exit_code, 0) << f.err;
    const nlohmann::json trace = nlohmann::json::parse(f.out);
    std::map<std::string, uint64_t> slices;  // per lock name: waits (their first slice)
    uint64_t woken = 0, flows = 0, parts_off = 0;
    for (const auto& e : trace["traceEvents"]) {
        const std::string cat = e.value("cat", "");
        if (cat == "woken" && e["ph"] == "s") {
            ++flows;
        }
        if (e.value("ph", "") != "X" || !e.contains("args") || e["args"].value("scope", "") != "user") {
            continue;
        }
        if (cat == "woken") {
            ++woken;
            continue;
        }
        ASSERT_EQ(cat, "user") << e.dump();
        ++slices[e["name"].get<std::string>()];
        const auto& a = e["args"];
        if (a["oncpu_ns"].get<uint64_t>() + a["asleep_ns"].get<uint64_t>() + a["runnable_ns"].get<uint64_t>() !=
            a["wait_ns"].get<uint64_t>()) {
            ++parts_off;
        }
    }
    uint64_t report_waits = 0, traced = 0;
    for (const auto& row : run.json["user_locks"]["rows"]) {
        report_waits += row["waits"].get<uint64_t>();
    }
    for (const auto& [name, n] : slices) {
        traced += n;
    }
    EXPECT_EQ(traced, report_waits) << "the trace's user-lock waits against the report's";
    EXPECT_EQ(trace["otherData"]["user_lock_waits"].get<uint64_t>(), traced);
    EXPECT_EQ(parts_off, 0u) << "slices whose on-CPU, asleep and runnable parts do not add up to their wait";
    for (const char* name : {"g_cache_lock", "g_stats_lock"}) {
        EXPECT_GT(slices[name], 0u) << name;
    }
    EXPECT_EQ(slices.count("g_queue_cv"), 0u) << "the condition variable's waits are no lock waits";
    EXPECT_GT(woken, 0u) << "no wait was split at its wakeup";
    EXPECT_GE(flows, woken) << "every woken slice has its arrow";
    // --scope kernel leaves them out.
    const test::Finished kernel =
        test::run({test::lockscope_bin(), "export", run.file, "--format", "chrome-trace", "--scope", "kernel"});
    ASSERT_EQ(kernel.exit_code, 0) << kernel.err;
    EXPECT_EQ(nlohmann::json::parse(kernel.out)["otherData"]["user_lock_waits"], 0);
}

TEST_F(RecordUserLocks, NoUserLocksRecordsNone)
{
    EXPECT_FALSE(without_->json.contains("user_locks")) << without_->json.dump();
    EXPECT_EQ(without_->text.find("user-space locks"), std::string::npos) << without_->text;
    EXPECT_EQ(without_->text.find("g_cache_lock"), std::string::npos) << without_->text;
}

// A command's children are followed as its kernel locks are: the program
// started by a shell is recorded and its globals named by their symbols
// (read while it ran); --no-children records the shell alone, which takes
// no user lock.
TEST(RecordUserLockChildren, AProcessTheCommandStartsIsRecordedUnlessNoChildren)
{
    if (geteuid() != 0) {
        GTEST_SKIP() << "needs root to load BPF programs and read another process's maps";
    }
    const std::string shell_command = std::string("echo go | ") + USERLOCK_PROG + " 600 > /dev/null";
    std::map<std::string, nlohmann::json> reports;
    for (const char* mode : {"children", "no-children"}) {
        const std::string file = test::temp_path(std::string(mode) + ".lockscope");
        std::vector<std::string> args = {test::lockscope_bin(), "record", "-o", file};
        if (std::string(mode) == "no-children") {
            args.push_back("--no-children");
        }
        args.insert(args.end(), {"--", "sh", "-c", shell_command});
        const test::Finished recorded = test::run(args);
        ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
        const test::Finished json = test::run({test::lockscope_bin(), "report", file, "--format", "json", "-E", "0"});
        ASSERT_EQ(json.exit_code, 0) << json.err;
        reports[mode] = nlohmann::json::parse(json.out);
    }
    for (const char* name : {"g_cache_lock", "g_stats_lock"}) {
        const auto rows = rows_named(reports["children"], name);
        ASSERT_EQ(rows.size(), 1u) << name << "\n" << reports["children"].dump(1);
        EXPECT_EQ(rows[0]["kind"], "pthread_mutex");
        EXPECT_GT(rows[0]["waits"].get<uint64_t>(), 0u);
    }
    const nlohmann::json& alone = reports["no-children"];
    EXPECT_TRUE(!alone.contains("user_locks") || alone["user_locks"]["rows"].empty()) << alone.dump(1);
}

}  // namespace

// --user-locks=all records every process's user locks, not the target's
// alone: with --no-children the program is no target (the test above shows
// it is then not recorded), and here its locks are recorded all the same.
TEST(RecordUserLocksEverywhere, AProcessThatIsNoTargetIsRecordedWithUserLocksAll)
{
    if (geteuid() != 0) {
        GTEST_SKIP() << "needs root to load BPF programs and read another process's maps";
    }
    const std::string file = test::temp_path("all.lockscope");
    const std::string shell_command = std::string("echo go | ") + USERLOCK_PROG + " 600 > /dev/null";
    const test::Finished recorded = test::run({test::lockscope_bin(), "record", "-o", file, "--user-locks=all",
                                               "--no-children", "--", "sh", "-c", shell_command});
    ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
    const test::Finished json = test::run({test::lockscope_bin(), "report", file, "--format", "json", "-E", "0"});
    ASSERT_EQ(json.exit_code, 0) << json.err;
    const nlohmann::json report = nlohmann::json::parse(json.out);
    ASSERT_TRUE(report.contains("user_locks")) << report.dump(1);
    EXPECT_TRUE(report["user_locks"]["all_processes"].get<bool>());
    for (const char* name : {"g_cache_lock", "g_stats_lock"}) {
        const auto rows = rows_named(report, name);
        ASSERT_EQ(rows.size(), 1u) << name << "\n" << report["user_locks"].dump(1);
        EXPECT_EQ(rows[0]["module"], "userlock_prog");
        EXPECT_GT(rows[0]["waits"].get<uint64_t>(), 0u);
    }
    for (const auto& row : report["user_locks"]["rows"]) {
        EXPECT_NE(row["module"], "lockscope") << "lockscope's own waits are not recorded: " << row.dump();
    }
    const test::Finished text = test::run({test::lockscope_bin(), "report", file, "--scope", "user"});
    EXPECT_NE(text.out.find("user-space locks of every process ("), std::string::npos) << text.out;

    const test::Finished bad =
        test::run({test::lockscope_bin(), "record", "-o", file, "--user-locks=some", "--", "true"});
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("--user-locks takes no value (the target's) or =all"), std::string::npos) << bad.err;
}

// The exporter alone (no session file) serves the command's user locks as
// series while it runs: each lock's waits, and a wait whose parts add up to
// it, as read from the recorder's tables once a second.
TEST(RecordUserLocksPrometheus, TheExporterServesTheCommandsUserLocksWithTheirWaitsParts)
{
    if (geteuid() != 0) {
        GTEST_SKIP() << "needs root to load BPF programs and read another process's maps";
    }
    const unsigned port = test::free_port();
    // 4 s: the series are served after the first interval and the first read
    // of the user-lock tables (1 s each); the command runs on past both.
    const std::string shell_command = std::string("echo go | ") + USERLOCK_PROG + " 4000 > /dev/null";
    test::Finished recorded;
    std::thread recorder([&] {
        recorded = test::run({test::lockscope_bin(), "record", "--prometheus", "127.0.0.1:" + std::to_string(port),
                              "--", "sh", "-c", shell_command},
                             120);
    });
    const std::string labels = R"({kind="pthread_mutex",lock="g_cache_lock")";
    std::string body;
    test::wait_until(
        [&] {
            body = test::http_get(port, "/metrics");
            return body.find("lockscope_user_lock_waits_total" + labels) != std::string::npos;
        },
        60);
    recorder.join();
    ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
    const auto value = [&](const std::string& series) {
        const auto at = body.find(series + " ");
        return at == std::string::npos ? -1.0 : std::stod(body.substr(at + series.size() + 1));
    };
    const double waits = value("lockscope_user_lock_waits_total" + labels + "}");
    const double wait = value("lockscope_user_lock_wait_seconds_total" + labels + "}");
    ASSERT_GT(waits, 0) << body;
    ASSERT_GT(wait, 0) << body;
    double parts = 0;
    for (const char* part : {"oncpu", "asleep", "runnable"}) {
        const double v = value("lockscope_user_lock_wait_part_seconds_total" + labels + R"(,part=")" + part + R"("})");
        ASSERT_GE(v, 0) << part << "\n" << body;
        parts += v;
    }
    EXPECT_NEAR(parts, wait, wait * 1e-6) << body;
    EXPECT_EQ(value("lockscope_user_lock_wait_duration_seconds_count" + labels + "}"), waits) << body;
}
