// The report's holder stacks: the sampled ones (queueings and on-CPU
// ticks) and where followed holders slept, each a family of its own.
#include "core/analysis/report.h"
#include "core/storage/session_store.h"
#include "sample_session.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

using namespace lockscope;

namespace {

// A holder stack of lock `id` in run `run`.
void add_holder(Session& s, int64_t run, int64_t id, const std::string& role, std::vector<std::string> frames,
                uint64_t samples, uint64_t wait)
{
    s.stacks.push_back({run, id, role, std::move(frames), samples, wait});
}

// The last lock (by id) of the report's first row.
int64_t last_lock_of_first_row(const Session& s)
{
    const std::string name = build_report(s, {.top = 0}).rows[0].name;
    int64_t id = 0;
    for (const LockInfo& l : s.locks)
        if (l.name == name)
            id = l.id;
    return id;
}

// On-CPU holder stacks (a timer's ticks on a running holder) carry no wait:
// they are ranked apart, by samples, merged by function whatever the offset
// of the tick, and leave the queueing samples' shares of the wait as they are.
TEST(ReportTest, OnCpuHolderStacksHaveSharesOfTheirOwnSamples)
{
    Session s = lockscope::testing::loaded_sample();
    const int64_t id = last_lock_of_first_row(s);
    auto holder = [&](const std::string& role, std::vector<std::string> frames, uint64_t samples, uint64_t wait) {
        add_holder(s, 1, id, role, std::move(frames), samples, wait);
    };
    holder("holder:running", {}, 2, 500);
    holder("holder:on-cpu", {"_copy_to_iter+0x17", "anon_pipe_read+0xd3"}, 3, 0);
    holder("holder:on-cpu", {"_copy_to_iter+0x2a", "anon_pipe_read+0xd3"}, 1, 0);
    holder("holder:on-cpu", {"anon_pipe_write+0x40"}, 2, 0);
    s.meta["running_holder_hz"] = "99";
    s.runs[0].holder_oncpu_samples = 6;
    const Report rep = build_report(s, {.top = 0});
    const ReportRow& row = rep.rows[0];
    ASSERT_EQ(row.holders.size(), 3u);
    EXPECT_EQ(row.holder_samples, 2u);
    EXPECT_EQ(row.holder_oncpu_samples, 6u);
    EXPECT_EQ(row.holders[0].state, "running");
    EXPECT_DOUBLE_EQ(row.holders[0].share, 1.0);
    EXPECT_TRUE(row.holders[1].on_cpu());
    EXPECT_EQ(row.holders[1].samples, 4u);  // the two offsets of one path, merged
    EXPECT_EQ(row.holders[1].frames[0], "_copy_to_iter+0x17");
    EXPECT_DOUBLE_EQ(row.holders[1].share, 4.0 / 6.0);
    EXPECT_DOUBLE_EQ(row.holders[2].share, 2.0 / 6.0);

    const std::string text = format_text(rep);
    EXPECT_NE(text.find("on-cpu: running, sampled on its CPU"), std::string::npos) << text;
    EXPECT_NE(text.find("by a 99 Hz timer tick"), std::string::npos) << text;
    EXPECT_NE(text.find("on-cpu    _copy_to_iter <- anon_pipe_read"), std::string::npos) << text;
    const nlohmann::json j = nlohmann::json::parse(format_json(rep));
    EXPECT_EQ(j["locks"][0]["holders"][0]["share_of"], "wait");
    EXPECT_EQ(j["locks"][0]["holders"][1]["share_of"], "on_cpu_samples");
    EXPECT_EQ(j["locks"][0]["holder_oncpu_samples"], 6);
    EXPECT_EQ(j["totals"]["holder_oncpu_samples"], 6);
}

// Where followed holders slept holding the lock (every sleep, the holder
// split's): a family of its own, ranked by the holders' time asleep, apart
// from the sampled holder stacks, whose shares of the wait it leaves alone.
TEST(ReportTest, AsleepHolderStacksAreTheHolderSplitsOwnAndRankedByTimeAsleep)
{
    Session s = lockscope::testing::loaded_sample();
    const int64_t id = last_lock_of_first_row(s);
    auto holder = [&](const std::string& role, std::vector<std::string> frames, uint64_t samples, uint64_t wait) {
        add_holder(s, 1, id, role, std::move(frames), samples, wait);
    };
    holder("holder:sleeping", {"__schedule+0x1", "handle_userfault+0x2"}, 2, 500);
    holder("holder:asleep", {"__schedule+0x1", "schedule+0x2", "handle_userfault+0x3", "do_user_addr_fault+0x4"}, 3,
           3'000'000'000);
    holder("holder:asleep", {"__schedule+0x1", "io_schedule+0x2", "folio_wait_bit+0x3"}, 1, 1'000'000'000);
    const Report rep = build_report(s, {.top = 0});
    const ReportRow& row = rep.rows[0];
    ASSERT_EQ(row.holders.size(), 1u);  // the sampled one alone
    EXPECT_EQ(row.holder_samples, 2u);
    EXPECT_DOUBLE_EQ(row.holders[0].share, 1.0);
    ASSERT_EQ(row.holder_sleeps.size(), 2u);
    EXPECT_EQ(row.holder_sleep_ns, 4'000'000'000u);
    EXPECT_TRUE(row.holder_sleeps[0].asleep());
    EXPECT_EQ(row.holder_sleeps[0].samples, 3u);
    EXPECT_DOUBLE_EQ(row.holder_sleeps[0].share, 0.75);
    EXPECT_DOUBLE_EQ(row.holder_sleeps[1].share, 0.25);

    const std::string text = format_text(rep);
    EXPECT_NE(text.find("asleep in   75%  handle_userfault <- do_user_addr_fault (3.00 s, 3 sleeps)"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("25%  folio_wait_bit (1.00 s, 1 sleep)"), std::string::npos) << text;
    const nlohmann::json j = nlohmann::json::parse(format_json(rep));
    const auto& asleep_in = j["locks"][0]["holder_split"]["asleep_in"];
    ASSERT_EQ(asleep_in.size(), 2u) << j["locks"][0].dump(2);
    EXPECT_EQ(asleep_in[0]["sleeps"], 3);
    EXPECT_EQ(asleep_in[0]["asleep_ns"], 3'000'000'000u);
    EXPECT_EQ(asleep_in[0]["stack"][2], "handle_userfault+0x3");
    EXPECT_EQ(j["locks"][0]["holders"].size(), 1u);
}

// Holder stacks roll up with their lock row: merged across the row's locks
// and runs, ranked by the wait queued behind them, at most three a row.
TEST(ReportTest, HoldersRollUpWithTheirLockAndShareItsSampledWait)
{
    Session s = lockscope::testing::loaded_sample();
    const Report before = build_report(s, {.top = 0});
    const std::string name = before.rows[0].name;
    std::vector<int64_t> ids;
    for (const LockInfo& l : s.locks)
        if (l.name == name)
            ids.push_back(l.id);
    ASSERT_FALSE(ids.empty());
    auto holder = [&](int64_t run, const std::string& role, std::vector<std::string> frames, uint64_t samples,
                      uint64_t wait) { add_holder(s, run, ids.back(), role, std::move(frames), samples, wait); };
    holder(1, "holder:preempted", {"__ext4_find_entry+0x16e", "ext4_unlink+0x1"}, 3, 300);
    holder(2, "holder:preempted", {"__ext4_find_entry+0x16e", "ext4_unlink+0x1"}, 1, 300);
    holder(1, "holder:running", {}, 4, 200);
    holder(1, "holder:sleeping", {"schedule+0x1"}, 1, 100);
    holder(1, "holder:io-wait", {"io_schedule+0x1"}, 1, 50);
    const Report rep = build_report(s, {.top = 0});
    const ReportRow& row = rep.rows[0];
    ASSERT_EQ(row.name, name);
    ASSERT_EQ(row.holders.size(), 3u);
    EXPECT_EQ(row.holder_samples, 10u);
    EXPECT_EQ(row.holders[0].state, "preempted");
    EXPECT_EQ(row.holders[0].samples, 4u);
    EXPECT_DOUBLE_EQ(row.holders[0].share, 600.0 / 950.0);
    EXPECT_EQ(row.holders[1].state, "running");
    EXPECT_TRUE(row.holders[1].frames.empty());
    EXPECT_EQ(row.holders[2].state, "sleeping");
    for (size_t i = 1; i < rep.rows.size(); i++)
        EXPECT_TRUE(rep.rows[i].holders.empty());

    const std::string text = format_text(rep);
    EXPECT_NE(text.find("preempted __ext4_find_entry <- ext4_unlink"), std::string::npos) << text;
    EXPECT_NE(text.find("(running on another CPU: its stack cannot be read)"), std::string::npos) << text;
    const nlohmann::json j = nlohmann::json::parse(format_json(rep));
    EXPECT_EQ(j["locks"][0]["holders"][0]["state"], "preempted");
    EXPECT_EQ(j["locks"][0]["holders"][0]["stack"][0], "__ext4_find_entry+0x16e");
    EXPECT_EQ(j["locks"][0]["holder_samples"], 10);
    EXPECT_TRUE(j["locks"][0]["holder_tasks"].empty());

    // The holders' tasks: merged over runs per thread, most samples first.
    s.holder_tasks = {
        {1, ids.back(), 77, 70, "uffd", 3}, {2, ids.back(), 77, 70, "uffd", 2}, {1, ids.front(), 78, 70, "splice", 1}};
    const Report with_tasks = build_report(s, {.top = 0});
    const ReportRow& r = with_tasks.rows[0];
    ASSERT_EQ(r.holder_tasks.size(), 2u);
    EXPECT_EQ(r.holder_tasks[0].tid, 77u);
    EXPECT_EQ(r.holder_tasks[0].samples, 5u);
    EXPECT_EQ(r.holder_tasks[1].comm, "splice");
    EXPECT_NE(format_text(with_tasks).find("held by uffd[77] 5 samples, splice[78] 1 sample"), std::string::npos)
        << format_text(with_tasks);
    const nlohmann::json jt = nlohmann::json::parse(format_json(with_tasks));
    EXPECT_EQ(jt["locks"][0]["holder_tasks"][0]["tid"], 77);
    EXPECT_EQ(jt["locks"][0]["holder_tasks"][0]["tgid"], 70);
    EXPECT_EQ(jt["locks"][0]["holder_tasks"][0]["samples"], 5);
    EXPECT_EQ(build_report(s, {.top = 0, .run = 2}).rows[0].holder_tasks.at(0).samples, 2u);
    // Holders describe a lock: not a task, caller or kind.
    EXPECT_TRUE(build_report(s, {.by = GroupBy::Kind, .top = 0}).rows[0].holders.empty());
}

}  // namespace
