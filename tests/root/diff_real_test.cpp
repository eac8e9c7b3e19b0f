// diff on real recordings: the same workload twice is "no significant
// difference"; a real change is significant and in the right direction.
#include <gtest/gtest.h>

#include "core/analysis/diff.h"
#include "core/storage/session_store.h"
#include "root_helpers.h"
#include "subprocess.h"

namespace lockscope {
namespace {

Session record(const std::string& workload, const std::string& threads, const std::string& seconds = "2",
               const std::string& repeat = "4")
{
    const std::string out = test::temp_path(workload + "-t" + threads + "-r" + repeat + ".lockscope");
    test::Finished f = test::run({test::lockscope_bin(), "record", "--workload", workload, "-t", threads, "-d", seconds,
                                  "--repeat", repeat, "-i", "0.5", "-o", out},
                                 180);
    EXPECT_EQ(f.exit_code, 0) << f.err;
    return load_session(out);
}

const MetricDiff* total(const DiffResult& d, const std::string& metric)
{
    for (const MetricDiff& m : d.totals)
        if (m.metric == metric)
            return &m;
    return nullptr;
}

TEST(DiffReal, SameWorkloadTwiceIsNoSignificantDifference)
{
    LOCKSCOPE_REQUIRE_BPF();
    // One session of eight runs, split into odd and even runs: A and B
    // alternate, so the machine's drift (another VM taking the host's CPUs,
    // say) falls on both sides alike. Two sessions recorded one after the
    // other are not an A/A test on a shared machine: in CI, B once ran at
    // half A's throughput because the machine changed between them.
    const Session s = record("pipe", "2", "1", "8");
    const Session a = select_runs(s, "run [1357]");
    const Session b = select_runs(s, "run [2468]");
    ASSERT_EQ(a.runs.size(), 4u);
    ASSERT_EQ(b.runs.size(), 4u);
    // Alpha bounds the chance that a diff calls anything at all (its
    // totals, lock rows and call paths are one family): at 0.001 a sound
    // diff fails this test about once in 1000 runs, a broken one (each
    // total tested on its own called something in one A/A diff in ten, and
    // call paths in half of them) far more often. bench/diff_calibration.py
    // measures the rate at the default alpha.
    DiffOptions strict;
    strict.alpha = 0.001;
    const DiffResult d = diff_sessions(a, b, strict);
    ASSERT_TRUE(d.by_runs);
    ASSERT_NE(total(d, "throughput"), nullptr) << format_diff_text(d);
    EXPECT_FALSE(d.any_change()) << format_diff_text(d);
}

TEST(DiffReal, PipeAtOneAgainstFourThreadsIsSignificantInTheRightDirection)
{
    LOCKSCOPE_REQUIRE_BPF();
    // Half-second runs: four a side separate one thread from four by orders
    // of magnitude in contentions a second.
    const DiffResult d = diff_sessions(record("pipe", "1", "0.5"), record("pipe", "4", "0.5"), {});
    const MetricDiff* contentions = total(d, "contentions_per_s");
    ASSERT_NE(contentions, nullptr) << format_diff_text(d);
    EXPECT_EQ(contentions->verdict, Verdict::Worse) << format_diff_text(d);
    // At one thread the pipe's mutex contends rarely or never: it is either
    // new in B or significantly worse there.
    bool pipe_worse = false;
    for (const OneSidedLock& l : d.only_b)
        pipe_worse |= l.name == "pipe_inode_info.mutex";
    for (const LockDiff& l : d.locks)
        if (l.name == "pipe_inode_info.mutex")
            for (const MetricDiff& m : l.metrics)
                pipe_worse |= m.metric == "contentions_per_s" && m.verdict == Verdict::Worse;
    EXPECT_TRUE(pipe_worse) << format_diff_text(d);
    ASSERT_FALSE(d.metadata.empty());
}

TEST(DiffReal, Unlink1AgainstUnlink2IsASignificantChangeInTheDirectoryLock)
{
    LOCKSCOPE_REQUIRE_BPF();
    // Half-second runs: unlink1's four threads contend on their shared
    // directory's rwsem thousands of times in each.
    const Session shared = record("unlink1", "4", "0.5");
    const Session own = record("unlink2", "4", "0.5");
    const DiffResult d = diff_sessions(shared, own, {});
    EXPECT_FALSE(d.warnings.empty()) << "different workloads should be called out";
    bool i_rwsem_only_in_a = false;
    for (const OneSidedLock& l : d.only_a)
        i_rwsem_only_in_a |= l.name == "inode.i_rwsem";
    bool i_rwsem_better = false;
    for (const LockDiff& l : d.locks)
        if (l.name == "inode.i_rwsem")
            for (const MetricDiff& m : l.metrics)
                i_rwsem_better |= m.verdict == Verdict::Better;
    EXPECT_TRUE(i_rwsem_only_in_a || i_rwsem_better) << format_diff_text(d);
}

// The seed experiment as a diff: rwsem@4.2 against 4.7 with the owner-NULL
// check removed, recorded by `lockscope bench` in one session with the two
// policies interleaved (sessions recorded one after the other drift with the
// machine), each side's runs selected by label. On 2 CPUs the effect needs a
// release window and the exact on-CPU oracle (see docs/reflock.md and
// bench/replay_published.sh), and one thread per CPU: with 4 threads the lock is
// saturated and the two policies come out within noise (measured: 4.7 at
// 0.81-1.04x the hacked policy per repeat), with 2 at 0.50-0.70x, and still at 0.87x
// with a busy loop taking one of the two CPUs throughout.
TEST(DiffReal, Rwsem47AgainstHackedIsWorseInThroughputAndSpinFailures)
{
    LOCKSCOPE_REQUIRE_BPF();
    const std::string out = test::temp_path("seed.lockscope");
    test::Finished f = test::run({test::lockscope_bin(),
                                  "bench",
                                  "--lock",
                                  "rwsem@4.7-hacked,rwsem@4.2",
                                  "-t",
                                  "2",
                                  "--cs",
                                  "1000",
                                  "--outside",
                                  "500",
                                  "--release-window",
                                  "500",
                                  "--oracle",
                                  "bpf",
                                  "-d",
                                  "1",
                                  "--repeat",
                                  "6",
                                  "-o",
                                  out},
                                 180);
    ASSERT_EQ(f.exit_code, 0) << f.err;
    ASSERT_EQ(f.err.find("unavailable"), std::string::npos) << "the bpf oracle did not load: " << f.err;
    const Session s = load_session(out);
    const Session hacked = select_runs(s, "rwsem@4.7-hacked *");
    const Session v47 = select_runs(s, "rwsem@4.2 *");
    ASSERT_EQ(hacked.runs.size(), 6u);
    ASSERT_EQ(v47.runs.size(), 6u);
    // The spin-failure rate rises from about 0.1% to a few percent: by 3.6
    // to 4.9 points over five runs of this recording on one machine, by more
    // than 5 on another. Significant every time, but below the default
    // --min-effect of 5 points, so not called; 2 points still asks for
    // twenty times the hacked policy's rate.
    DiffOptions options;
    options.min_effect = 0.02;
    const DiffResult d = diff_sessions(hacked, v47, options);
    ASSERT_TRUE(d.by_runs);
    const MetricDiff* throughput = total(d, "throughput");
    ASSERT_NE(throughput, nullptr) << format_diff_text(d);
    EXPECT_EQ(throughput->verdict, Verdict::Worse) << format_diff_text(d);
    const MetricDiff* fail = total(d, "spin_failure_rate");
    ASSERT_NE(fail, nullptr) << format_diff_text(d);
    EXPECT_EQ(fail->verdict, Verdict::Worse) << format_diff_text(d);
    // The one lock of each side is compared with the other (bench sessions).
    ASSERT_EQ(d.locks.size(), 1u) << format_diff_text(d);
    EXPECT_EQ(d.locks[0].name, "rwsem@4.7-hacked");
    EXPECT_EQ(d.locks[0].name_b, "rwsem@4.2");
}

}  // namespace
}  // namespace lockscope
