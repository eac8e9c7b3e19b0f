// record under signals and kills: the session keeps every completed
// interval, and nothing stays attached to the kernel.
#include <bpf/bpf.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <cstring>
#include <string>

#include "core/analysis/report.h"
#include "core/storage/session_store.h"
#include "root_helpers.h"
#include "subprocess.h"

namespace lockscope {
namespace {

// Names of loaded BPF programs that belong to lockscope's recorder.
int lockscope_programs_loaded()
{
    int n = 0;
    uint32_t id = 0;
    while (bpf_prog_get_next_id(id, &id) == 0) {
        int fd = bpf_prog_get_fd_by_id(id);
        if (fd < 0)
            continue;
        bpf_prog_info info{};
        uint32_t len = sizeof info;
        if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && std::strncmp(info.name, "on_contention_", 14) == 0)
            n++;
        close(fd);
    }
    return n;
}

test::Process start_recording(const std::string& out)
{
    test::Process rec = test::Process::start(
        {test::lockscope_bin(), "record", "--workload", "pipe", "-t", "2", "-d", "30", "-i", "0.25", "-o", out});
    EXPECT_TRUE(rec.wait_for_stderr("lockscope: recording", 30));
    usleep(1'300'000);  // a few completed intervals
    return rec;
}

class RecordSignal : public ::testing::TestWithParam<int> {};

TEST_P(RecordSignal, ClosesTheSessionCleanlyWithEveryCompletedInterval)
{
    LOCKSCOPE_REQUIRE_BPF();
    const std::string out = test::temp_path("signal.lockscope");
    test::Process rec = start_recording(out);
    rec.signal(GetParam());
    test::Finished f = rec.wait(30);
    EXPECT_EQ(f.exit_code, 0) << f.err;
    EXPECT_NE(f.err.find("stopped; kept"), std::string::npos) << f.err;
    Session s = load_session(out);
    ASSERT_EQ(s.runs.size(), 1u);
    EXPECT_EQ(s.runs[0].status, "interrupted");
    EXPECT_GE(s.intervals.size(), 4u);
    EXPECT_GT(build_report(s, {}).totals.counters.contentions, 0u);
    // The kernel frees a program shortly after its last reference is gone.
    for (int i = 0; i < 50 && lockscope_programs_loaded() > 0; i++)
        usleep(100'000);
    EXPECT_EQ(lockscope_programs_loaded(), 0);
}

INSTANTIATE_TEST_SUITE_P(
    Signals, RecordSignal, ::testing::Values(SIGINT, SIGTERM, SIGHUP), [](const ::testing::TestParamInfo<int>& p) {
        return std::string(p.param == SIGINT ? "SIGINT" : p.param == SIGTERM ? "SIGTERM" : "SIGHUP");
    });

TEST(RecordKill, AfterKill9TheFileOpensWithItsCompletedIntervalsAndNothingStaysAttached)
{
    LOCKSCOPE_REQUIRE_BPF();
    const std::string out = test::temp_path("kill9.lockscope");
    test::Process rec = start_recording(out);
    rec.signal(SIGKILL);
    test::Finished f = rec.wait(30);
    EXPECT_EQ(f.signal, SIGKILL);
    Session s = load_session(out);
    EXPECT_GE(s.intervals.size(), 3u);
    EXPECT_GT(build_report(s, {}).totals.counters.contentions, 0u);
    // The kernel drops the programs with the process's file descriptors.
    for (int i = 0; i < 50 && lockscope_programs_loaded() > 0; i++)
        usleep(100'000);
    EXPECT_EQ(lockscope_programs_loaded(), 0);
    // The orphaned workload child stops too (parent-death signal).
}

TEST(RecordTargets, CommandThatExitsEarlyEndsTheRecording)
{
    LOCKSCOPE_REQUIRE_BPF();
    const std::string out = test::temp_path("cmd.lockscope");
    test::Finished f = test::run({test::lockscope_bin(), "record", "-o", out, "--", "sh", "-c", "exit 3"}, 60);
    EXPECT_EQ(f.exit_code, 0) << f.err;
    Session s = load_session(out);
    ASSERT_EQ(s.runs.size(), 1u);
    EXPECT_EQ(s.meta_value("scope"), "command sh -c exit 3");
}

TEST(RecordTargets, PidTargetExitingMidRunEndsTheRecording)
{
    LOCKSCOPE_REQUIRE_BPF();
    test::Process target = test::Process::start({"sleep", "1.5"});
    const std::string out = test::temp_path("pid.lockscope");
    test::Finished f =
        test::run({test::lockscope_bin(), "record", "-p", std::to_string(target.pid()), "-o", out, "-d", "30"}, 60);
    EXPECT_EQ(f.exit_code, 0) << f.err;
    EXPECT_GE(load_session(out).intervals.size(), 1u);
}

TEST(RecordTargets, RepeatRecordsOneRunPerRepeatWithThroughput)
{
    LOCKSCOPE_REQUIRE_BPF();
    const std::string out = test::temp_path("repeat.lockscope");
    test::Finished f = test::run(
        {test::lockscope_bin(), "record", "--workload", "pipe", "-t", "2", "-d", "1", "--repeat", "2", "-o", out}, 90);
    EXPECT_EQ(f.exit_code, 0) << f.err;
    Session s = load_session(out);
    ASSERT_EQ(s.runs.size(), 2u);
    for (const RunInfo& run : s.runs) {
        EXPECT_EQ(run.status, "complete");
        ASSERT_TRUE(run.ops.has_value());
        EXPECT_GT(*run.ops, 1000.0);
    }
}

}  // namespace
}  // namespace lockscope

namespace lockscope {
namespace {

TEST(RecordOwnership, UnderSudoTheSessionBelongsToTheInvokingUser)
{
    LOCKSCOPE_REQUIRE_BPF();
    const std::string out = test::temp_path("sudo.lockscope");
    setenv("SUDO_UID", "65534", 1);
    setenv("SUDO_GID", "65534", 1);
    test::Finished f = test::run({test::lockscope_bin(), "record", "-d", "1", "-o", out}, 60);
    unsetenv("SUDO_UID");
    unsetenv("SUDO_GID");
    ASSERT_EQ(f.exit_code, 0) << f.err;
    struct stat st {};
    ASSERT_EQ(stat(out.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 65534u);
    EXPECT_EQ(st.st_gid, 65534u);
    EXPECT_GE(load_session(out).intervals.size(), 1u);
}

}  // namespace
}  // namespace lockscope
