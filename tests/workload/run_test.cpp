#include "core/error.h"
#include "temp_dir.h"
#include "workload/workload.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

using lockscope::testing::TempDir;
using lockscope::workload::Options;
using lockscope::workload::SharedOps;

namespace {

Options short_run(const std::string& name, const TempDir& dir)
{
    Options o;
    o.name = name;
    o.threads = 2;
    o.duration_s = 0.3;
    o.dir = dir.path().string();
    return o;
}

class EveryWorkload : public ::testing::TestWithParam<std::string> {};

}  // namespace

TEST_P(EveryWorkload, EveryThreadMakesProgressAndNothingIsLeftBehind)
{
    TempDir dir;
    ASSERT_FALSE(dir.path().empty());
    SharedOps ops(2);
    lockscope::workload::run(short_run(GetParam(), dir), ops);

    EXPECT_GT(ops.thread(0), 0u);
    EXPECT_GT(ops.thread(1), 0u);
    EXPECT_EQ(ops.total(), ops.thread(0) + ops.thread(1));
    EXPECT_TRUE(ops.started());
    EXPECT_TRUE(ops.finished());
    EXPECT_GE(ops.end_ns() - ops.start_ns(), 300'000'000u);
    EXPECT_TRUE(dir.empty()) << "scratch files left in " << dir.path();
}

INSTANTIATE_TEST_SUITE_P(Workloads, EveryWorkload,
                         ::testing::Values("pipe", "unlink1", "unlink2", "mmap1", "pagefault", "signals"));

TEST(WorkloadRun, StopFlagEndsALongRunPromptly)
{
    TempDir dir;
    Options o = short_run("unlink1", dir);
    o.duration_s = 600;
    SharedOps ops(2);
    std::atomic<bool> stop{false};
    std::thread runner([&] { lockscope::workload::run(o, ops, &stop); });

    // Stop once the workload is demonstrably running, not after a guessed delay.
    while (ops.total() == 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    auto asked = std::chrono::steady_clock::now();
    stop = true;
    runner.join();

    EXPECT_LT(std::chrono::steady_clock::now() - asked, std::chrono::seconds(10));
    EXPECT_TRUE(ops.finished());
    EXPECT_TRUE(dir.empty());
}

namespace {

// The names reports give holders and waiting tasks: the thread's.
std::set<std::string> thread_names()
{
    std::set<std::string> names;
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
        std::ifstream in(task.path() / "comm");
        std::string comm;
        if (std::getline(in, comm))
            names.insert(comm);
    }
    return names;
}

}  // namespace

TEST(WorkloadRun, WorkerThreadsAreNamedAfterTheirWorkloadAndRole)
{
    TempDir dir;
    for (const auto& [workload, expected] : std::vector<std::pair<std::string, std::set<std::string>>>{
             {"pipe", {"pipe-0", "pipe-1"}}, {"pagefault", {"pagefault-r0", "pagefault-w1"}}}) {
        SharedOps ops(2);
        std::atomic<bool> stop{false};
        Options o = short_run(workload, dir);
        o.duration_s = 600;
        std::thread runner([&] { lockscope::workload::run(o, ops, &stop); });
        while (ops.total() == 0)  // the workers are past their naming
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        const std::set<std::string> names = thread_names();
        stop = true;
        runner.join();
        for (const std::string& name : expected)
            EXPECT_TRUE(names.count(name)) << workload << ": no thread " << name;
    }
}

TEST(WorkloadRun, UnusableDirectoryIsAnErrorWithContext)
{
    TempDir dir;
    Options o = short_run("unlink1", dir);
    o.dir = (dir.path() / "does-not-exist").string();
    SharedOps ops(2);
    try {
        lockscope::workload::run(o, ops);
        FAIL() << "expected lockscope::Error";
    } catch (const lockscope::Error& e) {
        EXPECT_EQ(e.err(), ENOENT);
        EXPECT_EQ(e.object(), o.dir);
        EXPECT_FALSE(e.remedy().empty());
    }
}

TEST(WorkloadRun, RefusesBadOptionsAndTooFewCounters)
{
    TempDir dir;
    SharedOps ops(1);
    Options o = short_run("pipe", dir);
    EXPECT_THROW(lockscope::workload::run(o, ops), std::invalid_argument);
    o.name = "nope";
    EXPECT_THROW(lockscope::workload::run(o, ops), lockscope::UsageError);
}
