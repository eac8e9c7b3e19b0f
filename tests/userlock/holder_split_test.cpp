// The user-lock holder split, as a user runs it: `lockscope record --
// holder_prog`, then `lockscope report --format json`. A pthread mutex's
// holder on CPU 0 is preempted, lock held, by a SCHED_FIFO thread half of
// the time: a large share of the waiter's wait is behind a runnable holder,
// and the preempting thread is named; without that thread, almost none is;
// a holder that sleeps with the lock held leaves nearly all of it behind an
// asleep holder. The program's own clocks are the other observer: the
// holder's time holding the lock without a CPU (wall minus its CPU time)
// bounds the wait behind it runnable, or asleep.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <map>
#include <string>

#include "subprocess.h"

namespace {

namespace test = lockscope::test;

struct Recorded {
    std::string failure;
    std::string text;
    nlohmann::json row;                    // the g_held_lock row of the JSON report's user locks
    std::map<std::string, uint64_t> seen;  // the program's own counts (holder_prog's STATS_FILE)
};

Recorded record(const std::string& name, const std::string& mode)
{
    Recorded r;
    const std::string file = test::temp_path(name + ".lockscope");
    const std::string stats = test::temp_path(name + ".stats");
    const test::Finished rec =
        test::run({test::lockscope_bin(), "record", "-o", file, "--", HOLDER_PROG, "3000", mode, stats});
    if (rec.exit_code != 0) {
        r.failure = "lockscope record failed: " + rec.err;
        return r;
    }
    std::ifstream in(stats);
    for (std::string key; in >> key;)
        in >> r.seen[key];
    const test::Finished text = test::run({test::lockscope_bin(), "report", file, "--scope", "user"});
    const test::Finished json = test::run({test::lockscope_bin(), "report", file, "--format", "json"});
    if (text.exit_code != 0 || json.exit_code != 0) {
        r.failure = "lockscope report failed: " + text.err + json.err;
        return r;
    }
    r.text = text.out;
    const nlohmann::json report = nlohmann::json::parse(json.out);
    for (const auto& row : report["user_locks"]["rows"])
        if (row["name"] == "g_held_lock")
            r.row = row;
    if (r.row.is_null())
        r.failure = "no g_held_lock row in the report:\n" + r.text;
    return r;
}

// The g_held_lock row's wait and holder parts, checked to add up.
struct Parts {
    uint64_t wait = 0, running = 0, runnable = 0, asleep = 0, unknown = 0;
};

Parts parts_of(const Recorded& r)
{
    const nlohmann::json& row = r.row;
    Parts p{row["wait_ns"], row["holder_running_ns"], row["holder_runnable_ns"], row["holder_asleep_ns"],
            row["holder_unknown_ns"]};
    EXPECT_GE(r.seen.at("contended"), 100u) << "the waiter found the lock taken too rarely to judge";
    EXPECT_EQ(p.running + p.runnable + p.asleep + p.unknown, p.wait) << row.dump(2);
    return p;
}

TEST(UserLockHolderSplit, AHolderPreemptedByAFifoThreadLeavesItsWaiterBehindARunnableHolder)
{
    const Recorded r = record("holder-preempted", "preempt");
    ASSERT_TRUE(r.failure.empty()) << r.failure;
    const nlohmann::json& row = r.row;
    const auto [wait, running, runnable, asleep, unknown] = parts_of(r);
    // Most of the wait is behind a followed holder, and a large share of it
    // behind the holder preempted.
    EXPECT_GT(running + runnable, wait / 2) << r.text;
    EXPECT_GT(runnable, (running + runnable) / 4) << r.text;
    EXPECT_LT(asleep, wait / 20) << r.text;
    // The program's own clocks: the waiter cannot wait longer behind the
    // holder running, or preempted, than the holder held the lock on a CPU
    // (its CPU time), or without one (its wall time minus that).
    const uint64_t held_cpu = r.seen.at("held_cpu_ns"), preempted_holding = r.seen.at("held_wall_ns") - held_cpu;
    EXPECT_LE(running, held_cpu + held_cpu / 20) << r.text;
    EXPECT_LE(runnable, preempted_holding + preempted_holding / 20) << r.text;
    // and the waiter, back 1 ms after its turn, waits through nearly all of
    // the holder's 4 ms holds.
    EXPECT_GE(runnable, preempted_holding / 2) << r.text;
    // Who held it, and who preempted it.
    const auto& split = row["holder_split"];
    ASSERT_FALSE(split["holders"].empty()) << row.dump(2);
    EXPECT_EQ(split["holders"][0]["comm"], "holder") << row.dump(2);
    ASSERT_FALSE(split["preempted_by"].empty()) << row.dump(2);
    EXPECT_EQ(split["preempted_by"][0]["comm"], "preemptor") << row.dump(2);
    EXPECT_NE(r.text.find("runnable holder preempted by preemptor["), std::string::npos) << r.text;
}

TEST(UserLockHolderSplit, AHolderAloneOnItsCpuLeavesAlmostNoWaitBehindARunnableHolder)
{
    const Recorded r = record("holder-alone", "alone");
    ASSERT_TRUE(r.failure.empty()) << r.failure;
    const auto [wait, running, runnable, asleep, unknown] = parts_of(r);
    EXPECT_GT(running, wait / 2) << r.text;
    EXPECT_LE(running, r.seen.at("held_cpu_ns") + r.seen.at("held_cpu_ns") / 20) << r.text;
    EXPECT_LT(runnable, (running + runnable) / 20)
        << "the holder held the lock preempted for " << (r.seen.at("held_wall_ns") - r.seen.at("held_cpu_ns")) / 1000000
        << " ms by its own clocks\n"
        << r.text;
}

TEST(UserLockHolderSplit, AHolderAsleepWithTheLockHeldLeavesItsWaiterBehindAnAsleepHolder)
{
    const Recorded r = record("holder-asleep", "asleep");
    ASSERT_TRUE(r.failure.empty()) << r.failure;
    const auto [wait, running, runnable, asleep, unknown] = parts_of(r);
    // Nearly all of what is known is behind the holder asleep, and most of
    // the wait is known: the waiter sleeps on the lock through the holder's
    // sleep and is woken by its unlock.
    EXPECT_GT(asleep, wait / 2) << r.text;
    EXPECT_GT(asleep, (running + runnable + asleep) * 9 / 10) << r.text;
    // The program's own clocks: no more behind the holder asleep than it
    // held the lock off a CPU, and, the waiter back 1 ms after its turn,
    // through most of the holder's 4 ms sleeps.
    const uint64_t off_cpu_holding = r.seen.at("held_wall_ns") - r.seen.at("held_cpu_ns");
    EXPECT_LE(asleep, off_cpu_holding + off_cpu_holding / 20) << r.text;
    EXPECT_GE(asleep, off_cpu_holding / 2) << r.text;
    // The two threads' own clocks: the waiter's lock calls overlapped the
    // holder's sleeps, lock held, for as long as lockscope says it waited
    // behind an asleep holder, within 5%.
    const uint64_t overlap = r.seen.at("wait_behind_asleep_ns");
    std::cout << "holder asleep: lockscope " << asleep << " ns, the program's clocks " << overlap << " ns" << std::endl;
    EXPECT_NEAR(double(asleep), double(overlap), 0.05 * double(overlap)) << r.text;
    const auto& holders = r.row["holder_split"]["holders"];
    ASSERT_FALSE(holders.empty()) << r.row.dump(2);
    EXPECT_EQ(holders[0]["comm"], "holder") << r.row.dump(2);
    EXPECT_GT(holders[0]["asleep_ns"].get<uint64_t>(), asleep / 2) << r.row.dump(2);
}

}  // namespace
