// Sessions written before the rwsem policy labels were corrected still open
// and diff by the current labels, and the CLI's lock names accept the old
// labels with a note (core/storage/policy_labels.h).
#include "core/analysis/diff.h"
#include "core/storage/policy_labels.h"
#include "core/storage/session_store.h"
#include "reflock/rwsem.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>
#include <unistd.h>

namespace lockscope {
namespace {

TEST(PolicyLabels, EveryNewNameIsAPolicyAndNoOldOneDisappears)
{
    for (const PolicyRename& r : policy_renames()) {
        EXPECT_NO_THROW(reflock::parse_policy(r.new_name)) << r.new_name;
        // An old label is either gone from reflock or names a current policy.
        bool current = false;
        for (reflock::Policy p : reflock::all_policies())
            current |= reflock::to_string(p) == r.old_name;
        if (!current) {
            EXPECT_THROW(reflock::parse_policy(r.old_name), std::invalid_argument) << r.old_name;
        }
    }
}

TEST(PolicyLabels, RenamesEachTokenOnce)
{
    EXPECT_EQ(rename_old_policies("rwsem@3.16-fix t=2 #1"), "rwsem@3.16 t=2 #1");
    EXPECT_EQ(rename_old_policies("rwsem@3.16 t=2 #1"), "rwsem@3.16-rc2 t=2 #1");
    EXPECT_EQ(rename_old_policies("mutex,rwsem@5.2,rwsem@5.3,rwsem@6.x"),
              "mutex,rwsem@5.3-rc-tip,rwsem@5.4,rwsem@5.19");
    EXPECT_EQ(rename_old_policies("rwsem@4.7-hacked,rwsem@4.7"), "rwsem@4.7-hacked,rwsem@4.2");
    // A session of label version 2 went through the 3.16 renames already.
    EXPECT_EQ(rename_old_policies("rwsem@3.16,rwsem@4.7", 2), "rwsem@3.16,rwsem@4.2");
    EXPECT_EQ(rename_old_policies("rwsem@3.16,rwsem@4.2", 3), "rwsem@3.16,rwsem@4.2");
}

TEST(PolicyLabels, CommandLineAcceptsOldNamesWithANote)
{
    std::string note;
    EXPECT_EQ(current_lock_name("rwsem@5.3", note), "rwsem@5.4");
    EXPECT_NE(note.find("old label"), std::string::npos);
    EXPECT_EQ(current_lock_name("rwsem@6.x", note), "rwsem@5.19");
    EXPECT_FALSE(note.empty());
    // A name that is both old and current keeps its current meaning, and says so.
    EXPECT_EQ(current_lock_name("rwsem@3.16", note), "rwsem@3.16");
    EXPECT_NE(note.find("3.16-rc2"), std::string::npos);
    EXPECT_EQ(current_lock_name("rwsem@4.7", note), "rwsem@4.2");
    EXPECT_NE(note.find("old label"), std::string::npos);
    EXPECT_EQ(current_lock_name("rwsem@4.2", note), "rwsem@4.2");
    EXPECT_TRUE(note.empty());
    EXPECT_EQ(current_lock_name("rwsem@4.7-hacked", note), "rwsem@4.7-hacked");
    EXPECT_TRUE(note.empty());
    EXPECT_EQ(current_lock_name("mutex@4.6", note), "mutex@4.6");
    EXPECT_TRUE(note.empty());
}

// A bench session as an older writer left it: bench.policy_labels =
// `version` ("": none, as before version 2), two locks of those names.
void write_old_session(const std::string& path, const std::string& version,
                       std::array<std::string, 2> names = {"rwsem@5.2", "rwsem@5.3"})
{
    SessionWriter w = SessionWriter::create(path, true);
    const std::string locks = names[0] + "," + names[1];
    std::map<std::string, std::string> meta{
        {"recorder", "bench"}, {"workload", "bench"}, {"bench.locks", locks}, {"scope", "bench " + locks}};
    if (!version.empty())
        meta[kPolicyLabelsKey] = version;
    w.set_meta(meta);
    uint64_t t = 1'000'000'000;
    for (int repeat = 0; repeat < 4; repeat++)
        for (int v = 0; v < 2; v++) {
            const int64_t run = w.begin_run(names[v] + " t=2 #" + std::to_string(repeat + 1), t);
            IntervalBatch b;
            b.totals.run = run;
            b.totals.start_ns = t;
            b.totals.end_ns = t += 1'000'000'000;
            b.totals.cpu_ns = 2'000'000'000;
            b.totals.counters.contentions = 1000 + 10 * repeat;
            b.totals.ops = (v ? 1'050'000.0 : 1'000'000.0) + 1000.0 * repeat;
            if (repeat == 0) {
                LockInfo l;
                l.id = v + 1;
                l.name = names[v];
                l.kind = "user-rwsem";
                l.mode = "write";
                b.new_locks.push_back(l);
            }
            LockInterval li;
            li.run = run;
            li.lock_id = v + 1;
            li.counters = b.totals.counters;
            b.locks.push_back(li);
            b.run.id = run;
            b.run.ops = b.totals.ops;
            w.write_interval(b);
            RunInfo info;
            info.id = run;
            info.end_ns = t;
            info.status = "complete";
            info.ops = b.totals.ops;
            w.end_run(info);
        }
    w.close();
}

TEST(PolicyLabels, OldSessionOpensAndDiffsByCurrentLabels)
{
    const std::string path = ::testing::TempDir() + "policy_labels_test." + std::to_string(getpid()) + ".lockscope";
    write_old_session(path, "");
    const Session s = load_session(path);
    std::remove(path.c_str());
    ASSERT_EQ(s.runs.size(), 8u);
    EXPECT_EQ(s.runs[0].label, "rwsem@5.3-rc-tip t=2 #1");
    EXPECT_EQ(s.runs[1].label, "rwsem@5.4 t=2 #1");
    ASSERT_EQ(s.locks.size(), 2u);
    EXPECT_EQ(s.locks[0].name, "rwsem@5.3-rc-tip");
    EXPECT_EQ(s.meta_value("bench.locks"), "rwsem@5.3-rc-tip,rwsem@5.4");
    EXPECT_EQ(s.meta_value(kPolicyLabelsRenamedKey), policy_renames_text());

    DiffOptions options;
    const DiffResult d = diff_sessions(select_runs(s, "rwsem@5.3-rc-tip *"), select_runs(s, "rwsem@5.4 *"), options);
    EXPECT_EQ(d.runs_a, 4u);
    EXPECT_EQ(d.runs_b, 4u);
    bool throughput = false;
    for (const MetricDiff& m : d.totals)
        if (m.metric == "throughput") {
            throughput = true;
            EXPECT_GT(m.test.relative, 0.04);  // B (5.4) was stored 5% faster
        }
    EXPECT_TRUE(throughput);
}

TEST(PolicyLabels, CurrentSessionIsNotRenamed)
{
    const std::string path = ::testing::TempDir() + "policy_labels_cur." + std::to_string(getpid()) + ".lockscope";
    write_old_session(path, kPolicyLabelsVersion);  // the same names declared current: kept as they are
    const Session s = load_session(path);
    std::remove(path.c_str());
    EXPECT_EQ(s.runs[1].label, "rwsem@5.3 t=2 #1");
    EXPECT_TRUE(s.meta_value(kPolicyLabelsRenamedKey).empty());
}

// Label version 2 had the 3.16 and 5.x names right, and called 4.2's policy 4.7.
TEST(PolicyLabels, VersionTwoSessionGoesThroughTheLaterRenamesOnly)
{
    const std::string path = ::testing::TempDir() + "policy_labels_v2." + std::to_string(getpid()) + ".lockscope";
    write_old_session(path, "2", {"rwsem@3.16", "rwsem@4.7"});
    const Session s = load_session(path);
    std::remove(path.c_str());
    EXPECT_EQ(s.runs[0].label, "rwsem@3.16 t=2 #1");
    EXPECT_EQ(s.runs[1].label, "rwsem@4.2 t=2 #1");
    EXPECT_EQ(s.meta_value("bench.locks"), "rwsem@3.16,rwsem@4.2");
    EXPECT_EQ(s.meta_value(kPolicyLabelsRenamedKey), "4.7 -> 4.2");
}

}  // namespace
}  // namespace lockscope
