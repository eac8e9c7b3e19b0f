// CPU idle from sched_switch, checked against /proc/stat's idle time.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/analysis/report.h"
#include "core/storage/session_store.h"
#include "root_helpers.h"
#include "subprocess.h"

namespace lockscope {
namespace {

// Idle + iowait jiffies and total jiffies over all CPUs.
std::pair<double, double> proc_stat_idle()
{
    std::ifstream in("/proc/stat");
    std::string cpu;
    double v[10] = {};
    in >> cpu;
    for (double& x : v)
        in >> x;
    double total = 0;
    for (int i = 0; i < 8; i++)  // guest time is already in user
        total += v[i];
    return {v[3] + v[4], total};
}

double record_idle(double seconds, double* proc_stat_fraction)
{
    const std::string out = test::temp_path("idle.lockscope");
    test::Process rec =
        test::Process::start({test::lockscope_bin(), "record", "-d", std::to_string(seconds), "-i", "0.5", "-o", out});
    EXPECT_TRUE(rec.wait_for_stderr("lockscope: recording", 30));
    auto [idle0, total0] = proc_stat_idle();
    test::Finished f = rec.wait(60);
    auto [idle1, total1] = proc_stat_idle();
    EXPECT_EQ(f.exit_code, 0) << f.err;
    *proc_stat_fraction = (idle1 - idle0) / std::max(1.0, total1 - total0);
    return build_report(load_session(out), {}).totals.idle_fraction;
}

TEST(CpuIdle, AnIdleMachineIsNearlyAllIdle)
{
    LOCKSCOPE_REQUIRE_BPF();
    double proc_stat = 0;
    const double idle = record_idle(2, &proc_stat);
    EXPECT_NEAR(idle, proc_stat, 0.1);
    if (proc_stat < 0.8)
        GTEST_SKIP() << "something else keeps the CPUs busy (/proc/stat idle " << proc_stat
                     << "); lockscope agreed with it (" << idle << ")";
    EXPECT_GT(idle, 0.85);
}

TEST(CpuIdle, BothCpusBusyIsNearlyNeverIdle)
{
    LOCKSCOPE_REQUIRE_BPF();
    std::atomic<bool> stop{false};
    std::vector<std::thread> burners;
    for (unsigned i = 0; i < std::thread::hardware_concurrency(); i++)
        burners.emplace_back([&] {
            volatile uint64_t x = 0;
            while (!stop.load(std::memory_order_relaxed))
                x = x + 1;
        });
    double proc_stat = 0;
    const double idle = record_idle(2, &proc_stat);
    stop = true;
    for (auto& t : burners)
        t.join();
    EXPECT_LT(idle, 0.1) << "/proc/stat says " << proc_stat;
    EXPECT_NEAR(idle, proc_stat, 0.1);
}

}  // namespace
}  // namespace lockscope
