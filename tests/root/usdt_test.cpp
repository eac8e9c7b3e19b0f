// The reference locks' USDT probes recorded by `record -- COMMAND` and by
// `record -p PID` agree with the locks' own in-process counters.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/analysis/report.h"
#include "core/storage/session_store.h"
#include "root_helpers.h"
#include "subprocess.h"

#include <filesystem>
#include <string>
#include <vector>

namespace lockscope {
namespace {

// The user-mutex rows of a session, summed, against `bench --format json`'s
// process_counters (the locks' own per-thread counters).
void expect_counts_equal(const std::string& session, const std::string& bench_json)
{
    const auto process = nlohmann::json::parse(bench_json).at("process_counters");
    ReportOptions all;
    all.top = SIZE_MAX;
    const Report report = build_report(load_session(session), all);
    LockCounters user;
    for (const ReportRow& r : report.rows)
        if (r.kind == "user-mutex")
            user.add(r.counters);
    ASSERT_GT(user.spin_attempts, 1000u) << "no user-mutex events recorded through USDT";
    EXPECT_EQ(user.spin_successes + user.spin_failures, user.spin_attempts);
    EXPECT_EQ(user.contentions, process.at("contended").get<uint64_t>());
    EXPECT_EQ(user.spin_attempts, process.at("spin_attempts").get<uint64_t>());
    EXPECT_EQ(user.spin_failures, process.at("spin_failures").get<uint64_t>());
    EXPECT_EQ(user.spin_successes, process.at("spin_successes").get<uint64_t>());
}

const std::vector<std::string> kBench = {"bench", "--lock",   "mutex", "-t",       "4",   "-d",
                                         "1",     "--repeat", "1",     "--format", "json"};

// The command is a copy of lockscope in a file of its own: its probes are
// found in the file it runs, not in the recorder's (the child is still a copy
// of the recorder when they are attached).
TEST(UserLocks, UsdtCountsEqualTheInProcessCounters)
{
    LOCKSCOPE_REQUIRE_BPF();
    const std::string out = test::temp_path("usdt.lockscope");
    const std::string copy = test::temp_path("lockscope-copy");
    std::filesystem::copy_file(test::lockscope_bin(), copy, std::filesystem::copy_options::overwrite_existing);
    std::filesystem::permissions(copy, std::filesystem::perms::owner_exec, std::filesystem::perm_options::add);
    std::vector<std::string> argv = {test::lockscope_bin(), "record", "-o", out, "--", copy};
    argv.insert(argv.end(), kBench.begin(), kBench.end());
    test::Finished f = test::run(argv, 120);
    ASSERT_EQ(f.exit_code, 0) << f.err;
    expect_counts_equal(out, f.out);
}

// `record -p PID` on a process already running: the bench waits (on its USDT
// semaphores) until the recorder has attached, then runs; the recorder stops
// when the process exits.
TEST(UserLocks, UsdtCountsEqualTheInProcessCountersWithPid)
{
    LOCKSCOPE_REQUIRE_BPF();
    const std::string out = test::temp_path("usdt_pid.lockscope");
    std::vector<std::string> argv = {test::lockscope_bin()};
    argv.insert(argv.end(), kBench.begin(), kBench.end());
    argv.insert(argv.end(), {"--wait-for-tracer", "60"});
    test::Process bench = test::Process::start(argv);
    ASSERT_TRUE(bench.wait_for_stderr("waiting up to", 30));
    test::Finished rec =
        test::run({test::lockscope_bin(), "record", "-p", std::to_string(bench.pid()), "-o", out}, 120);
    test::Finished b = bench.wait(120);
    ASSERT_EQ(rec.exit_code, 0) << rec.err;
    ASSERT_EQ(b.exit_code, 0) << b.err;
    expect_counts_equal(out, b.out);
}

// Nobody attaches: the bench says so and fails instead of running unrecorded.
TEST(UserLocks, WaitForTracerTimesOutClearly)
{
    std::vector<std::string> argv = {test::lockscope_bin()};
    argv.insert(argv.end(), kBench.begin(), kBench.end());
    argv.insert(argv.end(), {"--wait-for-tracer", "0.2"});
    test::Finished f = test::run(argv, 60);
    EXPECT_EQ(f.exit_code, 1);
    EXPECT_NE(f.err.find("no tracer attached"), std::string::npos) << f.err;
}

}  // namespace
}  // namespace lockscope
