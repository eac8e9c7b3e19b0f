// Running holders: a waiter that finds the owner running on another CPU
// cannot read its stack, so a CPU-clock tick takes it on the owner's own
// CPU while the owner word still names it. At default settings the pipe
// workload's mutex, whose spinners see a running owner at almost every
// spin, must show such stacks inside the pipe's read or write.
#include <gtest/gtest.h>

#include <string>

#include "core/analysis/report.h"
#include "core/storage/session_store.h"
#include "root_helpers.h"
#include "subprocess.h"

namespace lockscope {
namespace {

bool in_pipe_io(const std::vector<std::string>& frames)
{
    for (const std::string& frame : frames) {
        const std::string function = frame.substr(0, frame.find('+'));
        if (function == "pipe_write" || function == "pipe_read" || function == "anon_pipe_write" ||
            function == "anon_pipe_read")
            return true;
    }
    return false;
}

TEST(Holders, RunningPipeHoldersAreSampledOnTheirCpu)
{
    LOCKSCOPE_REQUIRE_BPF();
    const std::string out = test::temp_path("pipe-running-holders.lockscope");
    test::Finished r =
        test::run({test::lockscope_bin(), "record", "--workload", "pipe", "-t", "4", "-d", "4", "-o", out}, 180);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Session s = load_session(out);
    ASSERT_TRUE(s.meta_value("running_holders").starts_with("on")) << s.meta_value("running_holders");
    const Report rep = build_report(s, ReportOptions{.top = 0});

    const ReportRow* pipe = nullptr;
    for (const ReportRow& row : rep.rows)
        if (row.name == "pipe_inode_info.mutex")
            pipe = &row;
    ASSERT_NE(pipe, nullptr) << "the pipe workload did not contend on its pipe's mutex";
    bool pipe_io = false;
    double share = 0;
    for (const HolderShare& h : pipe->holders) {
        if (!h.on_cpu())
            continue;
        EXPECT_EQ(h.wait_ns, 0u) << "a tick has no waiter's wait";
        share += h.share;
        pipe_io |= in_pipe_io(h.frames);
    }
    EXPECT_GT(pipe->holder_oncpu_samples, 0u);
    EXPECT_LE(share, 1.0 + 1e-9);
    EXPECT_TRUE(pipe_io) << "no running holder of the pipe's mutex was sampled in the pipe's read or write\n"
                         << format_text(rep);

    // Every on-CPU stack sample stored is one the kernel counted, and each
    // one is a holder task's sample too.
    uint64_t stored = 0, counted = 0;
    for (const StackSample& st : s.stacks)
        if (st.role == "holder:on-cpu")
            stored += st.samples;
    for (const RunInfo& run : s.runs)
        counted += run.holder_oncpu_samples;
    EXPECT_EQ(stored, counted);
    EXPECT_FALSE(pipe->holder_tasks.empty());
    EXPECT_NE(format_text(rep).find("on-cpu: running, sampled on its CPU"), std::string::npos);
}

TEST(Holders, HolderPeriodZeroTurnsRunningHoldersOff)
{
    LOCKSCOPE_REQUIRE_BPF();
    const std::string out = test::temp_path("pipe-no-holders.lockscope");
    test::Finished r = test::run({test::lockscope_bin(), "record", "--workload", "pipe", "-t", "4", "-d", "1",
                                  "--holder-period", "0", "-o", out},
                                 120);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Session s = load_session(out);
    EXPECT_EQ(s.meta_value("running_holders"), "off");
    for (const StackSample& st : s.stacks)
        EXPECT_FALSE(st.holder()) << st.role;
}

}  // namespace
}  // namespace lockscope
