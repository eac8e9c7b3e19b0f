// The wait's four parts (spinning, queued on CPU, asleep, runnable) on real
// workloads: they add up to the wait in every output, the off-CPU parts
// agree with an independent observer (observer.bpf.c: the classic
// tracepoints and sched_switch, its own bookkeeping), and waits whose split
// is known by construction come out split that way.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/analysis/report.h"
#include "core/storage/session_store.h"
#include "held_fault.h"
#include "observer.h"
#include "recording.h"
#include "root_helpers.h"
#include "subprocess.h"

namespace lockscope {
namespace {

using test::ObservedWait;

// Every object with a wait_ns and the four parts adds them up exactly.
void expect_parts_add_up(const nlohmann::json& j, const std::string& where)
{
    if (j["wait_ns"].is_null())
        return;
    const uint64_t parts = j["spinning_ns"].get<uint64_t>() + j["queued_on_cpu_ns"].get<uint64_t>() +
                           j["asleep_ns"].get<uint64_t>() + j["runnable_ns"].get<uint64_t>();
    EXPECT_EQ(parts, j["wait_ns"].get<uint64_t>()) << where << ": " << j.dump();
}

void expect_json_parts_add_up(const Report& rep)
{
    const nlohmann::json j = nlohmann::json::parse(format_json(rep));
    ASSERT_TRUE(j["wait_parts_split"].get<bool>());
    expect_parts_add_up(j["totals"], "totals");
    for (const auto& lock : j["locks"])
        expect_parts_add_up(lock, "lock " + lock["name"].get<std::string>());
    ASSERT_FALSE(j["runs"].empty());
    for (const auto& run : j["runs"])
        expect_parts_add_up(run, "run");
    ASSERT_FALSE(j["intervals"].empty());
    for (const auto& interval : j["intervals"])
        expect_parts_add_up(interval, "interval");
}

// The text's four shares (the "  spinning ... %" lines) add up to 100 +- 1.
void expect_text_shares_add_up(const Report& rep)
{
    const std::string text = format_text(rep);
    std::istringstream in(text);
    std::string line;
    int sum = 0, parts = 0;
    for (const char* label : {"  spinning ", "  queued on CPU ", "  asleep ", "  runnable "}) {
        in.clear();
        in.seekg(0);
        while (std::getline(in, line)) {
            if (line.rfind(label, 0) != 0)
                continue;
            const size_t pct = line.find('%');
            ASSERT_NE(pct, std::string::npos) << line;
            size_t start = line.rfind(' ', pct) + 1;
            sum += std::stoi(line.substr(start, pct - start));
            ++parts;
            break;
        }
    }
    ASSERT_EQ(parts, 4) << text;
    EXPECT_NEAR(sum, 100, 1) << text;
}

// lockscope's rows of the observer's class, summed.
LockCounters rows_of(const Report& rep, const std::string& kind)
{
    LockCounters sum;
    for (const ReportRow& row : rep.rows)
        if (row.kind == kind)
            sum.add(row.counters);
    return sum;
}

// Within 5% of the observer, or 2 ms where the time is small. `slack_ns`:
// what the two clocks may differ by for a reason both know (below).
void expect_close(uint64_t lockscope_ns, uint64_t observed_ns, const char* what, double slack_ns = 0)
{
    const double tolerance = std::max(2e6, 0.05 * double(observed_ns)) + slack_ns;
    EXPECT_NEAR(double(lockscope_ns), double(observed_ns), tolerance)
        << what << ": lockscope " << lockscope_ns << " ns vs observer " << observed_ns << " ns";
}

// The off-CPU parts are timed at the same switches by both, and must agree.
// The times on CPU are read at the same tracepoints, but each program reads
// its clock while the other's program may run before it: an episode's wait
// can differ by up to the run time of lockscope's programs at its begin and
// end. At most 250 ns per episode is allowed for that (a begin and an end
// program each run for well under 200 ns here).
//
// Asleep and runnable are timed at the same switches by both, but a sleep
// woken as its sleeper went to sleep is split by the instant each program
// reads whether the sleeper was still on its run queue: those sleeps (the
// observer's raced_ns) may go either way. Their sum is not affected.
void expect_agrees_with_observer(const LockCounters& c, const ObservedWait& o)
{
    expect_close(c.asleep_ns(), o.asleep_ns, "asleep", double(o.raced_ns));
    expect_close(c.runnable_ns(), o.runnable_ns, "runnable", double(o.raced_ns));
    expect_close(c.asleep_ns() + c.runnable_ns(), o.asleep_ns + o.runnable_ns, "asleep + runnable");
    expect_close(c.spin_offcpu_ns, o.spin_off_ns, "off CPU inside spin phases");
    EXPECT_NEAR(double(c.spin_yields), double(o.spin_yields), std::max(2.0, 0.05 * double(o.spin_yields)))
        << "spin phases that gave up the CPU";
    const double programs = 250.0 * double(c.contentions);
    expect_close(c.wait_ns, o.wait_ns, "wait", programs);
    expect_close(c.spinning_ns(), o.spin_ns - std::min(o.spin_ns, o.spin_off_ns), "spinning", programs);
    const uint64_t observed_rest = o.asleep_ns + o.runnable_ns + (o.spin_ns - std::min(o.spin_ns, o.spin_off_ns));
    expect_close(c.queued_on_cpu_ns(), o.wait_ns - std::min(o.wait_ns, observed_rest), "queued on CPU", programs);
}

struct Case {
    const char* workload;
    const char* kind;  // lockscope's rows compared with the observer's class
    const char* threads;
};

class WaitPartsOnAWorkload : public ::testing::TestWithParam<Case> {};

TEST_P(WaitPartsOnAWorkload, AddUpAndAgreeWithAnIndependentObserver)
{
    LOCKSCOPE_REQUIRE_BPF();
    const Case& k = GetParam();
    test::Recorded r = test::record_workload({k.workload, "-t", k.threads, "-d", "3"});
    const LockCounters c = rows_of(r.report, k.kind);
    const ObservedWait& o = std::string(k.kind) == "mutex" ? r.observed.mutex : r.observed.rwsem;
    std::cout << k.workload << " " << k.kind << ": wait " << c.wait_ns << " spinning " << c.spinning_ns()
              << " queued on CPU " << c.queued_on_cpu_ns() << " asleep " << c.asleep_ns() << " runnable "
              << c.runnable_ns() << " (spin phases " << c.spin_ns << ", of which off CPU " << c.spin_offcpu_ns << ", "
              << c.spin_yields << " yields)\nobserver: wait " << o.wait_ns << " spin phases " << o.spin_ns
              << " off CPU in them " << o.spin_off_ns << " asleep " << o.asleep_ns << " runnable " << o.runnable_ns
              << " yields " << o.spin_yields << " (sleeps woken as they began " << o.raced_ns << ")" << std::endl;
    ASSERT_GT(c.contentions, 100u) << "too little contention on " << k.kind << " to compare";
    ASSERT_GT(o.wait_ns, 0u);
    EXPECT_EQ(c.spinning_ns() + c.queued_on_cpu_ns() + c.asleep_ns() + c.runnable_ns(), c.wait_ns);
    expect_agrees_with_observer(c, o);
    expect_json_parts_add_up(r.report);
    expect_text_shares_add_up(r.report);
}

INSTANTIATE_TEST_SUITE_P(Workloads, WaitPartsOnAWorkload,
                         ::testing::Values(Case{"pipe", "mutex", "4"}, Case{"unlink1", "rwsem", "4"},
                                           Case{"mmap1", "rwsem", "4"}),
                         [](const auto& param) { return std::string(param.param.workload); });

// Waiting on CPU is the waiter's own CPU time: the on-CPU parts of all of a
// process's waits (spinning, queued on CPU) fit in the CPU time the kernel
// charged it (its rusage), with four spinners on two CPUs giving up their
// CPUs to each other.
TEST(WaitParts, OnCpuPartsFitInTheWorkloadsCpuTime)
{
    LOCKSCOPE_REQUIRE_BPF();
    test::Recorded r = test::record_workload({"pipe", "-t", "4", "-d", "2"});
    LockCounters c;
    for (const ReportRow& row : r.report.rows)
        c.add(row.counters);
    ASSERT_GT(c.contentions, 100u);
    ASSERT_GT(r.workload_cpu_ns, 0u);
    std::cout << "on CPU in waits " << c.spinning_ns() + c.queued_on_cpu_ns() << " ns of " << r.workload_cpu_ns
              << " ns of CPU time; off CPU " << c.offcpu_ns() << " ns" << std::endl;
    EXPECT_LE(c.spinning_ns() + c.queued_on_cpu_ns(), r.workload_cpu_ns);
    EXPECT_EQ(c.spinning_ns() + c.queued_on_cpu_ns() + c.asleep_ns() + c.runnable_ns(), c.wait_ns);
}

// A writer queues on a file's i_rwsem while its holder sleeps in a page
// fault that userfaultfd holds for 600 ms: the waits are asleep, all but
// the moments of queueing and waking, and no part of them spins.
TEST(WaitParts, WaitersBehindASleepingHolderAreAsleep)
{
    LOCKSCOPE_REQUIRE_BPF();
    test::HeldPageFault fault;
    const std::string file = test::temp_path("asleep-target");
    const int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);

    const std::string out = test::temp_path("asleep.lockscope");
    test::Process rec = test::Process::start(
        {test::lockscope_bin(), "record", "-p", std::to_string(getpid()), "-d", "30", "-i", "0.2", "-o", out});
    ASSERT_TRUE(rec.wait_for_stderr("lockscope: recording", 30));

    using namespace std::chrono_literals;
    std::thread holder([&] { (void)!write(fd, fault.buffer(), fault.size()); });  // takes i_rwsem, then faults
    std::this_thread::sleep_for(200ms);
    constexpr int kWaiters = 2;
    std::vector<std::thread> waiters = test::start_file_writers(file, kWaiters);
    std::this_thread::sleep_for(600ms);
    EXPECT_TRUE(fault.release()) << strerror(errno);  // wakes the holder
    holder.join();
    for (std::thread& t : waiters)
        t.join();
    std::this_thread::sleep_for(300ms);  // an interval boundary (-i 0.2) after the waits
    rec.signal(SIGINT);
    test::Finished f = rec.wait(60);
    ASSERT_EQ(f.exit_code, 0) << f.err;
    close(fd);

    const Report rep = build_report(load_session(out), ReportOptions{.top = 0});
    const ReportRow* row = nullptr;
    for (const ReportRow& r : rep.rows)
        if (r.name == "inode.i_rwsem" && r.mode == "write")
            row = &r;
    ASSERT_NE(row, nullptr) << format_text(rep);
    const LockCounters& c = row->counters;
    EXPECT_GE(c.contentions, uint64_t(kWaiters));
    // Each waiter waited at least the 600 ms the fault was held, less the
    // time it took to start: 500 ms each.
    EXPECT_GE(c.wait_ns, uint64_t(kWaiters) * 500'000'000) << format_text(rep);
    EXPECT_EQ(c.spinning_ns(), 0u) << "an rwsem's queued wait has no spin phase";
    EXPECT_GE(double(c.asleep_ns()), 0.95 * double(c.wait_ns)) << format_text(rep);
    EXPECT_LE(c.queued_on_cpu_ns() + c.runnable_ns(), c.wait_ns / 20) << format_text(rep);
    EXPECT_EQ(c.spinning_ns() + c.queued_on_cpu_ns() + c.asleep_ns() + c.runnable_ns(), c.wait_ns);
    expect_text_shares_add_up(rep);
}

}  // namespace
}  // namespace lockscope
