// --kind, --lock and --caller on report and export (no privileges needed),
// and bad filters on every command: one sentence, exit status 2.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "subprocess.h"
#include "recorded_session.h"

namespace lockscope {
namespace {

using test::kRecordedPipe;

nlohmann::json report(std::vector<std::string> extra)
{
    std::vector<std::string> args = {"report", kRecordedPipe, "--format", "json", "--top", "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    test::Finished f = test::run_lockscope(args);
    EXPECT_EQ(f.exit_code, 0) << f.err;
    return nlohmann::json::parse(f.out);
}

TEST(FilterCli, ReportKeepsTheMatchingLocksAndItsTotalsAreTheirs)
{
    const nlohmann::json all = report({});
    const nlohmann::json spin = report({"--kind", "spinlock"});
    ASSERT_FALSE(spin["locks"].empty());
    uint64_t sum = 0;
    for (const auto& l : spin["locks"]) {
        EXPECT_EQ(l["kind"], "spinlock");
        sum += l["contentions"].get<uint64_t>();
    }
    EXPECT_EQ(spin["totals"]["contentions"].get<uint64_t>(), sum);
    EXPECT_LT(sum, all["totals"]["contentions"].get<uint64_t>());
    EXPECT_EQ(spin["session"]["filters"], "kind spinlock");
    // perf's spelling of the same: rwsem:W and rt-mutex match nothing here,
    // spinlock everything it matched before.
    EXPECT_EQ(report({"--kind", "rwsem:W,spinlock"})["totals"]["contentions"], spin["totals"]["contentions"]);
    // By name and by caller, shell patterns.
    const nlohmann::json by_name = report({"--lock", "pipe*"});
    for (const auto& l : by_name["locks"])
        EXPECT_EQ(l["name"].get<std::string>().rfind("pipe", 0), 0u);
    const nlohmann::json by_caller = report({"--caller", "anon_pipe_r*"});
    for (const auto& l : by_caller["locks"])
        EXPECT_EQ(l["caller"].get<std::string>().rfind("anon_pipe_r", 0), 0u);
    EXPECT_TRUE(report({"--lock", "no-such-lock"})["locks"].empty());
}

TEST(FilterCli, ExportKeepsTheMatchingLocks)
{
    test::Finished f = test::run_lockscope({"export", kRecordedPipe, "--format", "folded", "--kind", "mutex"});
    ASSERT_EQ(f.exit_code, 0) << f.err;
    std::istringstream lines(f.out);
    std::string line;
    size_t n = 0;
    while (std::getline(lines, line)) {
        EXPECT_NE(line.find(" [mutex];"), std::string::npos) << line;
        n++;
    }
    EXPECT_GT(n, 0u);
    test::Finished csv =
        test::run_lockscope({"export", kRecordedPipe, "--format", "csv", "--caller", "nothing_calls_this"});
    ASSERT_EQ(csv.exit_code, 0) << csv.err;
    EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 1) << "the header only";
}

TEST(FilterCli, BadFiltersAreUsageErrorsOnEveryCommand)
{
    const std::vector<std::vector<std::string>> commands = {
        {"report", kRecordedPipe},
        {"export", kRecordedPipe, "--format", "csv"},
        {"record", "-d", "1", "-o", test::temp_path("never.lockscope")},
        {"top", "-d", "1"}};
    const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
        {{"--kind", "bogus"}, "unknown lock kind 'bogus'"},
        {{"--kind", "mutex:R"}, "has no reader and writer sides"},
        {{"--lock", "inode.[abc"}, "unbalanced '['"},
        {{"--caller", ""}, "needs a name or a pattern"}};
    for (const auto& command : commands) {
        for (const auto& [args, sentence] : bad) {
            std::vector<std::string> argv = command;
            argv.insert(argv.end(), args.begin(), args.end());
            test::Finished f = test::run_lockscope(argv);
            EXPECT_EQ(f.exit_code, 2) << command[0] << " " << args[0] << ": " << f.err;
            EXPECT_NE(f.err.find(sentence), std::string::npos) << command[0] << ": " << f.err;
        }
    }
}

}  // namespace
}  // namespace lockscope
