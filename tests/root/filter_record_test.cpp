// record --kind filters in the kernel, --lock and --caller when a lock is
// first named; either way the session holds only the matching locks, and its
// totals are theirs: checked against the observer's raw count of the same
// kind.
#include <gtest/gtest.h>

#include "core/analysis/report.h"
#include "core/storage/session_store.h"
#include "recording.h"
#include "root_helpers.h"
#include "subprocess.h"

namespace lockscope {
namespace {

TEST(FilterRecord, KindIsFilteredInTheKernelAndTheMutexCountStillAgrees)
{
    LOCKSCOPE_REQUIRE_BPF();
    const test::Recorded recorded = test::record_workload({"pipe", "-t", "4", "-d", "1"}, {"--kind", "mutex"});
    const Session& s = recorded.session;
    const test::Observed& observed = recorded.observed;
    ASSERT_FALSE(s.locks.empty());
    for (const LockInfo& l : s.locks)
        EXPECT_EQ(l.kind, "mutex") << l.name;
    const Report r = build_report(s, ReportOptions{.top = 0});
    // Every mutex begin with SPIN is one spin attempt (the observer's count).
    const double tolerance = std::max(2.0, 0.01 * double(observed.mutex_spin));
    EXPECT_NEAR(double(r.totals.counters.spin_attempts), double(observed.mutex_spin), tolerance);
    EXPECT_EQ(s.meta_value("filters"), "kind mutex");
    for (const RunInfo& run : s.runs)
        EXPECT_LT(run.unmatched_ends, 10u) << "filtered episodes must still pair their begins and ends";
}

TEST(FilterRecord, LockAndCallerPatternsKeepOnlyTheirLocks)
{
    LOCKSCOPE_REQUIRE_BPF();
    const Session s =
        test::record_workload({"unlink1", "-t", "4", "-d", "1"}, {"--lock", "inode.*", "--caller", "*"}).session;
    ASSERT_FALSE(s.locks.empty());
    for (const LockInfo& l : s.locks)
        EXPECT_EQ(l.name.rfind("inode.", 0), 0u) << l.name;
    const Report r = build_report(s, ReportOptions{.top = 0});
    LockCounters sum;
    for (const ReportRow& row : r.rows)
        sum.add(row.counters);
    EXPECT_EQ(r.totals.counters.contentions, sum.contentions) << "totals are the kept locks' own";
}

TEST(FilterRecord, TopShowsOnlyTheKindAsked)
{
    LOCKSCOPE_REQUIRE_BPF();
    test::Finished f = test::run(
        {test::lockscope_bin(), "top", "--workload", "pipe", "-t", "2", "-d", "2", "--kind", "spinlock", "-n", "5"},
        60);
    ASSERT_EQ(f.exit_code, 0) << f.err;
    EXPECT_EQ(f.out.find(" mutex "), std::string::npos) << f.out;
    EXPECT_NE(f.out.find("LOCK"), std::string::npos) << f.out;
}

}  // namespace
}  // namespace lockscope
