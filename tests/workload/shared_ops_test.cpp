#include "temp_dir.h"
#include "core/clock.h"
#include "workload/workload.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

using lockscope::workload::SharedOps;

TEST(SharedOps, CountsPerThreadAndInTotal)
{
    SharedOps ops(3);
    EXPECT_EQ(ops.threads(), 3u);
    EXPECT_EQ(ops.total(), 0u);
    ops.add(0, 2);
    ops.add(2, 5);
    ops.add(2, 1);
    EXPECT_EQ(ops.thread(0), 2u);
    EXPECT_EQ(ops.thread(1), 0u);
    EXPECT_EQ(ops.thread(2), 6u);
    EXPECT_EQ(ops.total(), 8u);
    ops.reset();
    EXPECT_EQ(ops.total(), 0u);
}

TEST(SharedOps, MoveTransfersTheMapping)
{
    SharedOps a(2);
    a.add(1, 7);
    SharedOps b(std::move(a));
    EXPECT_EQ(b.thread(1), 7u);
    EXPECT_EQ(a.threads(), 0u);
    SharedOps c(1);
    c = std::move(b);
    EXPECT_EQ(c.threads(), 2u);
    EXPECT_EQ(c.total(), 7u);
}

TEST(SharedOps, WritesOfAForkedChildAreVisibleToTheParent)
{
    SharedOps ops(2);
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ops.mark_started(lockscope::monotonic_ns());
        ops.add(1, 42);
        ops.mark_finished(lockscope::monotonic_ns());
        _exit(0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_TRUE(ops.started());
    EXPECT_TRUE(ops.finished());
    EXPECT_EQ(ops.thread(1), 42u);
    EXPECT_LE(ops.start_ns(), ops.end_ns());
}

// The recorder's use: a forked child runs the workload, the parent follows
// the counters live and stops the child with a signal.
TEST(SharedOps, ParentFollowsAWorkloadInAChildAndStopsItBySignal)
{
    lockscope::testing::TempDir dir;
    SharedOps ops(2);
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        struct sigaction sa {};
        sa.sa_handler = [](int) { lockscope::workload::stop_request.store(true); };
        sigaction(SIGTERM, &sa, nullptr);
        lockscope::workload::Options o;
        o.name = "unlink1";
        o.threads = 2;
        o.duration_s = 600;
        o.dir = dir.path().string();
        try {
            lockscope::workload::run(o, ops, &lockscope::workload::stop_request);
        } catch (...) {
            _exit(1);
        }
        _exit(0);
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while ((ops.thread(0) == 0 || ops.thread(1) == 0) && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_TRUE(ops.started());
    EXPECT_FALSE(ops.finished());
    kill(child, SIGTERM);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_TRUE(ops.finished());
    EXPECT_GT(ops.thread(0), 0u);
    EXPECT_GT(ops.thread(1), 0u);
    EXPECT_TRUE(dir.empty());
}
