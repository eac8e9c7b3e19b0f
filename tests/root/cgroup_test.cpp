// record --cgroup PATH records the tasks of one cgroup v2 (a container, a
// service) and nothing else: a workload moved into a cgroup the test made is
// recorded, one running beside it outside is not, and the counts equal the
// observer's for the process inside.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "core/analysis/report.h"
#include "core/storage/session_store.h"
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

// `lockscope workload pipe`, held until released.
test::Process held_pipe()
{
    return test::Process::start({test::lockscope_bin(), "workload", "pipe", "-t", "2", "-d", "1.5"}, /*hold=*/true);
}

// `lockscope record ARGS -d 3 -o OUT`
test::Process start_record(std::vector<std::string> args, const std::string& out)
{
    args.insert(args.begin(), {test::lockscope_bin(), "record"});
    args.insert(args.end(), {"-d", "3", "-o", out});
    return test::Process::start(args);
}

TEST(Cgroups, RecordWithCgroupSeesOnlyThatCgroupsContention)
{
    LOCKSCOPE_REQUIRE_BPF();
    TestCgroup cgroup;
    if (cgroup.path().empty())
        GTEST_SKIP() << "cgroup v2 is not mounted";
    test::Process inside = held_pipe(), outside = held_pipe();
    const pid_t inside_pid = inside.pid(), outside_pid = outside.pid();
    cgroup.add(inside_pid);
    test::Observer observer(inside.pid());
    const std::string out = test::temp_path("cgroup.lockscope");
    test::Process rec = start_record({"--cgroup", cgroup.path()}, out);
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

// A system-wide recording split by cgroup: the rows add up to the totals,
// and the test's cgroup holds what the observer counted for the workload in
// it.
TEST(Cgroups, ByCgroupSplitsASystemWideRecording)
{
    LOCKSCOPE_REQUIRE_BPF();
    TestCgroup cgroup;
    if (cgroup.path().empty())
        GTEST_SKIP() << "cgroup v2 is not mounted";
    test::Process inside = held_pipe();
    cgroup.add(inside.pid());
    test::Observer observer(inside.pid());
    const std::string out = test::temp_path("by-cgroup.lockscope");
    test::Process rec = start_record({}, out);
    ASSERT_TRUE(rec.wait_for_stderr("lockscope: recording", 30));
    inside.release();
    EXPECT_EQ(inside.wait(60).exit_code, 0);
    test::Finished r = rec.wait(60);
    ASSERT_EQ(r.exit_code, 0) << r.err;

    const Session s = load_session(out);
    const Report rep = build_report(s, ReportOptions{.by = GroupBy::Cgroup, .top = 0});
    const test::Observed o = observer.read();
    ASSERT_GT(o.ends, 1000u);
    uint64_t contentions = 0, wait_ns = 0, unattributed = 0;
    const std::string name = "/" + std::filesystem::path(cgroup.path()).filename().string();
    const ReportRow* ours = nullptr;
    for (const ReportRow& row : rep.rows) {
        contentions += row.counters.contentions;
        wait_ns += row.counters.wait_ns;
        if (row.name == name)
            ours = &row;
        if (row.name == "(not attributed)")
            unattributed = row.counters.contentions;
    }
    EXPECT_EQ(contentions, rep.totals.counters.contentions);
    EXPECT_EQ(wait_ns, rep.totals.counters.wait_ns);
    // Only what ran on since its last switch-out when recording stopped.
    EXPECT_LE(double(unattributed), 0.05 * double(rep.totals.counters.contentions));
    ASSERT_NE(ours, nullptr) << "no row " << name;
    EXPECT_NEAR(double(ours->counters.contentions), double(o.ends), std::max(2.0, 0.01 * double(o.ends)));

    test::Finished text = test::run({test::lockscope_bin(), "report", out, "--by", "cgroup"});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("cgroup"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find(name), std::string::npos) << text.out;

    // By lock, each lock names the cgroups whose tasks were sampled waiting
    // on it (the dashboard's Cgroups column): the pipe's mutex has ours.
    const Report by_lock = build_report(s, ReportOptions{.top = 0});
    bool pipe_has_ours = false;
    for (const ReportRow& row : by_lock.rows)
        if (row.name.find("pipe") != std::string::npos && row.kind == "mutex")
            for (const auto& [path, samples] : row.cgroups)
                pipe_has_ours |= path == name && samples > 0;
    EXPECT_TRUE(pipe_has_ours) << "the pipe mutex's waiters in " << name << " were never sampled";
    // The cgroup is taken on the path that samples a waiter's stack: every
    // lock with a sampled waiter stack names a cgroup. (A lock can have none
    // when its only episode was still waiting at the stop, or its stack was
    // unreadable: a share of locks would be a flaky bound on a few rows.)
    std::set<std::pair<int64_t, int64_t>> sampled, named;
    for (const StackSample& st : s.stacks)
        if (st.role == "waiter" && st.samples > 0)
            sampled.insert({st.run, st.lock_id});
    for (const LockCgroup& c : s.lock_cgroups)
        if (c.samples > 0)
            named.insert({c.run, c.lock_id});
    ASSERT_FALSE(sampled.empty());
    for (const auto& [run, lock_id] : sampled)
        EXPECT_TRUE(named.count({run, lock_id}))
            << "lock " << lock_id << " of run " << run << " has a sampled waiter stack but no cgroup";
}

TEST(Cgroups, APathThatIsNoCgroupIsOneSentence)
{
    LOCKSCOPE_REQUIRE_BPF();
    for (const char* path : {"no-such-cgroup-here", "/tmp"}) {
        test::Finished f = test::run(
            {test::lockscope_bin(), "record", "--cgroup", path, "-d", "1", "-o", test::temp_path("never.lockscope")});
        EXPECT_EQ(f.exit_code, 1) << path;
        EXPECT_TRUE(f.err.find("no such cgroup") != std::string::npos ||
                    f.err.find("not a cgroup v2 directory") != std::string::npos)
            << f.err;
    }
}

}  // namespace
}  // namespace lockscope
