// A wait chain across the user/kernel boundary, recorded by the kernel
// recorder (probe::Probe) and the user-lock Recorder together: thread A
// waits for g_chain_lock, held by B, who waits for a file's i_rwsem, held by
// C asleep in a page fault (chain_prog.cpp). The chain user lock -> B ->
// i_rwsem -> C is found, as often as A waited while /proc showed B waiting
// in the kernel (at least) and A's own count of blocked lock attempts (at
// most), and none of A's waits while B held the mutex asleep outside any
// lock (control rounds) is on it; the kernel lock is the row the kernel recorder keeps for that
// file's inode (fstat's inode number); a second Recorder without the kernel
// recorder has the same waits and no chain.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include "core/error.h"
#include "probe/probe.h"
#include "test_program.h"
#include "probe/user_probe.h"

namespace {

using lockscope::test::Program;
using lockscope::userlock::KernelChain;
using lockscope::userlock::Recorder;
using lockscope::userlock::Recording;
using lockscope::userlock::UserLock;

constexpr int kRounds = 20;

struct Result {
    std::string failure;
    Recording with_kernel;  // the Recorder given the kernel recorder's maps
    Recording alone;        // a second Recorder on the same program, without them
    lockscope::RawSnapshot kernel;
    pid_t tid_a = 0, tid_b = 0, tid_c = 0;
    uint64_t inode = 0;
    long rounds = 0, confirmed = 0, contended = 0;
    long control_confirmed = 0, control_contended = 0;  // B held the mutex asleep in no lock
};

// Reads "tids A B C" and "file INODE" up to "ready".
bool read_header(Program& program, Result& r)
{
    std::string line;
    while (program.line(line, 10000) && line != "ready") {
        std::istringstream words(line);
        std::string tag;
        words >> tag;
        if (tag == "tids") {
            words >> r.tid_a >> r.tid_b >> r.tid_c;
        } else if (tag == "file") {
            words >> r.inode;
        }
    }
    return line == "ready" && r.tid_c != 0 && r.inode != 0;
}

void record(Program& program, Result& r)
{
    namespace probe = lockscope::probe;
    probe::Probe kernel = probe::Probe::attach({.tgid = static_cast<uint32_t>(program.pid()), .children = false});
    const probe::ContentionStateFds fds = kernel.contention_state_fds();
    Recorder with_kernel = Recorder::prepare(
        {.tgids = {program.pid()}, .kernel = {.task_state = fds.task_state, .cpu_states = fds.cpu_states}});
    Recorder alone = Recorder::prepare({.tgids = {program.pid()}});
    with_kernel.start();
    alone.start();
    program.say("go\n");
    std::string line;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (std::chrono::steady_clock::now() < deadline) {
        with_kernel.poll(50);
        alone.poll(0);
        if (!program.line(line, 50)) {
            continue;
        }
        if (line == "done" || line.empty()) {
            break;
        }
        std::istringstream words(line);
        std::string tag;
        words >> tag >> r.rounds >> tag >> r.confirmed >> tag >> r.contended >> tag >> r.control_confirmed >> tag >>
            r.control_contended;
    }
    with_kernel.stop();
    alone.stop();
    kernel.detach();
    r.kernel = kernel.snapshot();
    r.with_kernel = with_kernel.read();
    r.alone = alone.read();
}

Result run()
{
    Result r;
    const auto dir = std::filesystem::temp_directory_path() / ("lockscope-chain-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    const std::string file = (dir / "held").string();
    {
        Program program(CHAIN_PROG, {file, std::to_string(kRounds)});
        if (!read_header(program, r)) {
            r.failure = "the test program did not start";
        } else {
            try {
                record(program, r);
            } catch (const lockscope::Error& e) {
                r.failure = e.what();
            }
        }
    }
    std::filesystem::remove_all(dir);
    return r;
}

const UserLock* find(const Recording& recording, const std::string& name)
{
    for (const UserLock& lock : recording.locks) {
        if (lock.name == name) {
            return &lock;
        }
    }
    return nullptr;
}

class UserToKernelChain : public ::testing::Test {
protected:
    static void SetUpTestSuite()
    {
        if (geteuid() != 0) {
            GTEST_SKIP() << "needs root to load BPF programs and read another process's maps";
        }
        result_ = run();
    }
    void SetUp() override
    {
        ASSERT_TRUE(result_.has_value());
        ASSERT_EQ(result_->failure, "");
        ASSERT_EQ(result_->rounds, kRounds) << "the test program did not finish its rounds";
        // Every round has A asleep on the mutex while B waits in pwrite(): the
        // program checks it in /proc before it lets C go on.
        ASSERT_EQ(result_->confirmed, kRounds);
        ASSERT_EQ(result_->control_confirmed, kRounds);
        lock_ = find(result_->with_kernel, "g_chain_lock");
        ASSERT_NE(lock_, nullptr) << "g_chain_lock was not recorded";
        ASSERT_FALSE(lock_->kernel_chains.empty())
            << "no chain into the kernel; chains: " << result_->with_kernel.chains;
        chain_ = &lock_->kernel_chains.front();
    }

    static std::optional<Result> result_;
    const UserLock* lock_ = nullptr;
    const KernelChain* chain_ = nullptr;
};

std::optional<Result> UserToKernelChain::result_;

TEST_F(UserToKernelChain, EveryWaitBehindTheOwnerInTheKernelIsOnTheChain)
{
    std::cout << "g_chain_lock: " << lock_->waits << " waits, " << lock_->wait_ns << " ns; chain: " << chain_->waits
              << " waits, " << chain_->wait_ns << " ns, behind " << chain_->kernel_kind << "/" << chain_->kernel_mode
              << " 0x" << std::hex << chain_->kernel_lock << std::dec << "; rounds " << result_->rounds
              << ", confirmed " << result_->confirmed << ", contended " << result_->contended << "; control rounds "
              << result_->control_confirmed << " confirmed, " << result_->control_contended << " contended\n";
    EXPECT_EQ(result_->with_kernel.chains, "on");
    EXPECT_EQ(lock_->kernel_chains.size(), 1U) << "one kernel lock: the file's i_rwsem";
    // At least the rounds /proc confirmed; at most A's blocked lock attempts
    // (one futex wait each: B cannot let go while C holds the kernel lock).
    EXPECT_GE(chain_->waits, static_cast<uint64_t>(result_->confirmed));
    EXPECT_LE(chain_->waits, static_cast<uint64_t>(result_->contended));
    // The control rounds' waits are the lock's, not the chain's.
    EXPECT_GE(lock_->waits, chain_->waits + static_cast<uint64_t>(result_->control_confirmed));
    EXPECT_GT(chain_->wait_ns, 0U);
    EXPECT_LE(chain_->wait_ns, lock_->wait_ns);
    EXPECT_LE(chain_->max_wait_ns, lock_->max_wait_ns);
    EXPECT_EQ(result_->with_kernel.lost_chains, 0U);
}

TEST_F(UserToKernelChain, TheKernelLockIsTheFilesInodeLockAsTheKernelRecorderKnowsIt)
{
    EXPECT_EQ(chain_->kernel_kind, "rwsem");
    EXPECT_EQ(chain_->kernel_mode, "write");
    const lockscope::RawLock* row = nullptr;
    for (const lockscope::RawLock& lock : result_->kernel.locks) {
        if (lock.address == chain_->kernel_lock && lock.flags == chain_->kernel_flags) {
            row = &lock;
        }
    }
    ASSERT_NE(row, nullptr) << "the kernel recorder has no row for the chain's kernel lock";
    EXPECT_EQ(row->identity.inode_ino, result_->inode) << "the row's inode is not the file's";
    // B queued on it in every round.
    EXPECT_GE(row->counters.contentions, static_cast<uint64_t>(result_->confirmed));
}

TEST_F(UserToKernelChain, TheOwnerIsBAndTheRootIsCAsleepInItsPageFault)
{
    EXPECT_EQ(chain_->owner_tids, std::set<uint32_t>{static_cast<uint32_t>(result_->tid_b)});
    EXPECT_EQ(chain_->root_tids, std::set<uint32_t>{static_cast<uint32_t>(result_->tid_c)});
    const auto sleeping = chain_->root_states.find("sleeping");
    ASSERT_NE(sleeping, chain_->root_states.end());
    EXPECT_EQ(sleeping->second, chain_->waits) << "C sleeps in handle_userfault in every round";
}

TEST_F(UserToKernelChain, WithoutTheKernelRecorderTheChainIsAbsentAndTheWaitsTheSame)
{
    EXPECT_EQ(result_->alone.chains, "off (no kernel recorder)");
    const UserLock* alone = find(result_->alone, "g_chain_lock");
    ASSERT_NE(alone, nullptr);
    EXPECT_TRUE(alone->kernel_chains.empty());
    EXPECT_EQ(alone->waits, lock_->waits);
}

TEST(UserLockChainOptions, OneKernelMapWithoutTheOtherIsRefused)
{
    if (geteuid() != 0) {
        GTEST_SKIP() << "needs root to load BPF programs and read another process's maps";
    }
    try {
        Recorder::prepare({.tgids = {getpid()}, .kernel = {.task_state = 0}});
        FAIL() << "prepare accepted a task_state map without cpu_states";
    } catch (const lockscope::Error& e) {
        EXPECT_NE(std::string(e.what()).find("give both task_state and cpu_states"), std::string::npos) << e.what();
    }
}

}  // namespace
