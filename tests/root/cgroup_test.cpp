// record --cgroup PATH records the tasks of one cgroup v2 (a container, a
// service) and nothing else: a workload moved into a cgroup the test made is
// recorded, one running beside it outside is not, and the counts equal the
// observer's for the process inside.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "core/report.h"
#include "core/session_store.h"
#include "observer.h"
#include "probe/cgroups.h"
#include "root_helpers.h"
#include "subprocess.h"

namespace lockscope {
namespace {

// A cgroup of the test's own, removed when it ends (once its tasks exited).
class TestCgroup {
public:
    TestCgroup()
    {
        const std::string mount = probe::cgroup2_mount();
        if (mount.empty())
            return;
        path_ = mount + "/lockscope-test-" + std::to_string(getpid());
        std::filesystem::create_directory(path_);
    }
    ~TestCgroup()
    {
        if (!path_.empty())
            rmdir(path_.c_str());
    }
    const std::string& path() const { return path_; }
    void add(pid_t pid) const { std::ofstream(path_ + "/cgroup.procs") << pid << "\n"; }

private:
    std::string path_;
};

TEST(Cgroups, RecordWithCgroupSeesOnlyThatCgroupsContention)
{
    LOCKSCOPE_REQUIRE_BPF();
    TestCgroup cgroup;
    if (cgroup.path().empty())
        GTEST_SKIP() << "cgroup v2 is not mounted";
    const std::string bin = test::lockscope_bin();
    test::Process inside = test::Process::start({bin, "workload", "pipe", "-t", "2", "-d", "1.5"}, /*hold=*/true);
    test::Process outside = test::Process::start({bin, "workload", "pipe", "-t", "2", "-d", "1.5"}, /*hold=*/true);
    const pid_t inside_pid = inside.pid(), outside_pid = outside.pid();
    cgroup.add(inside_pid);
    test::Observer observer(inside.pid());
    const std::string out = test::temp_path("cgroup.lockscope");
    test::Process rec = test::Process::start({bin, "record", "--cgroup", cgroup.path(), "-d", "3", "-o", out});
    ASSERT_TRUE(rec.wait_for_stderr("lockscope: recording", 30));
    inside.release();
    outside.release();
    EXPECT_EQ(inside.wait(60).exit_code, 0);
    EXPECT_EQ(outside.wait(60).exit_code, 0);
    test::Finished r = rec.wait(60);
    ASSERT_EQ(r.exit_code, 0) << r.err;

    const Session s = load_session(out);
    const Report rep = build_report(s, ReportOptions{.top = 0});
    const test::Observed o = observer.read();
    ASSERT_GT(o.ends, 1000u);
    uint64_t unmatched = 0;
    for (const RunInfo& run : s.runs)
        unmatched += run.unmatched_ends;
    const uint64_t ends = rep.totals.counters.contentions + unmatched + rep.totals.lost_by_cause.nested;
    // The cgroup holds only the inside workload: what lockscope counted is its.
    EXPECT_NEAR(double(ends), double(o.ends), std::max(2.0, 0.01 * double(o.ends)));
    std::set<uint32_t> tgids;
    for (const TaskStats& t : s.tasks)
        tgids.insert(t.tgid);
    EXPECT_FALSE(tgids.count(uint32_t(outside_pid))) << "a task outside the cgroup was recorded";
    std::string seen;
    for (uint32_t t : tgids)
        seen += std::to_string(t) + " ";
    EXPECT_TRUE(tgids.count(uint32_t(inside_pid))) << "inside " << inside_pid << ", seen " << seen;
    EXPECT_NE(s.meta_value("cgroups").find("lockscope-test-"), std::string::npos);
}

TEST(Cgroups, APathThatIsNoCgroupIsOneSentence)
{
    LOCKSCOPE_REQUIRE_BPF();
    for (const char* path : {"no-such-cgroup-here", "/tmp"}) {
        test::Finished f = test::run({test::lockscope_bin(), "record", "--cgroup", path, "-d", "1", "-o",
                                      test::temp_path("never.lockscope")});
        EXPECT_EQ(f.exit_code, 1) << path;
        EXPECT_TRUE(f.err.find("no such cgroup") != std::string::npos ||
                    f.err.find("not a cgroup v2 directory") != std::string::npos)
            << f.err;
    }
}

}  // namespace
}  // namespace lockscope
