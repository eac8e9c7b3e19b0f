// perf lock contention's record-time spellings: --tid records one thread,
// -C only the waits that begin on those CPUs, -a system-wide while a command
// runs. Checked on the per-thread totals a session keeps, against a pipe
// workload whose threads are pinned one per CPU.
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>
#include <thread>

#include "core/storage/session_store.h"
#include "root_helpers.h"
#include "subprocess.h"

namespace lockscope {
namespace {

// The pipe workload in its own process, long enough for a few recordings.
struct Workload {
    test::Process process =
        test::Process::start({test::lockscope_bin(), "workload", "pipe", "-t", "2", "-d", "30", "-i", "10"});

    Workload() { std::this_thread::sleep_for(std::chrono::milliseconds(500)); }
    ~Workload()
    {
        process.signal(SIGTERM);
        process.wait(30);
    }
};

// The one CPU a thread may run on, or -1.
int pinned_cpu(uint32_t tid)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(pid_t(tid), sizeof set, &set) != 0 || CPU_COUNT(&set) != 1)
        return -1;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &set))
            return cpu;
    return -1;
}

// The contentions of each thread of `tgid` that contended in a recording
// with these options.
std::map<uint32_t, uint64_t> contentions_by_thread(std::vector<std::string> options, uint32_t tgid)
{
    const std::string file = test::temp_path("perf-options.lockscope");
    // Half a second: the workload's two workers contend thousands of times each.
    std::vector<std::string> argv = {test::lockscope_bin(), "record", "-d", "0.5", "-o", file};
    argv.insert(argv.end(), options.begin(), options.end());
    test::Finished f = test::run(argv, 60);
    EXPECT_EQ(f.exit_code, 0) << f.err;
    std::map<uint32_t, uint64_t> out;
    if (f.exit_code != 0)
        return out;
    for (const TaskStats& t : load_session(file).tasks)
        if (t.tgid == tgid && t.counters.contentions)
            out[t.pid] += t.counters.contentions;
    return out;
}

// The threads of `tgid` that contended in a recording with these options.
std::set<uint32_t> contending_threads(std::vector<std::string> options, uint32_t tgid)
{
    std::set<uint32_t> out;
    for (const auto& [tid, contentions] : contentions_by_thread(std::move(options), tgid))
        out.insert(tid);
    return out;
}

TEST(PerfOptionsRecord, TidRecordsThatThreadOnly)
{
    LOCKSCOPE_REQUIRE_BPF();
    Workload w;
    const uint32_t tgid = uint32_t(w.process.pid());
    const std::map<uint32_t, uint64_t> workers = contentions_by_thread({"-p", std::to_string(tgid)}, tgid);
    ASSERT_GE(workers.size(), 2u) << "the workers contend";
    // The busiest worker: the lowest thread id is the workload's main thread,
    // which contends only now and then and may not in the next second.
    const uint32_t one =
        std::max_element(workers.begin(), workers.end(), [](auto& x, auto& y) { return x.second < y.second; })->first;
    EXPECT_EQ(contending_threads({"--tid", std::to_string(one)}, tgid), std::set<uint32_t>{one});
}

TEST(PerfOptionsRecord, CpuKeepsTheWaitsThatBeginOnThoseCpus)
{
    LOCKSCOPE_REQUIRE_BPF();
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
        GTEST_SKIP() << "needs two CPUs, one per pinned worker";
    Workload w;
    const uint32_t tgid = uint32_t(w.process.pid());
    // A thread pinned to one CPU begins all its waits there: -C 0 sees the
    // threads pinned to CPU 0, never those pinned to CPU 1.
    const std::set<uint32_t> on0 = contending_threads({"-C", "0"}, tgid);
    const std::set<uint32_t> on1 = contending_threads({"--cpu", "1"}, tgid);
    size_t pinned = 0;
    for (const std::set<uint32_t>* seen : {&on0, &on1})
        for (uint32_t tid : *seen) {
            const int cpu = pinned_cpu(tid);
            if (cpu < 0)
                continue;  // free to run anywhere: may begin waits on both
            pinned++;
            EXPECT_EQ(cpu, seen == &on0 ? 0 : 1) << "thread " << tid << " is pinned to CPU " << cpu;
        }
    EXPECT_GE(pinned, 2u) << "the workload pins its workers";
    EXPECT_FALSE(on0.empty());
    EXPECT_FALSE(on1.empty());
}

TEST(PerfOptionsRecord, AllCpusWithACommandRecordsEveryProcess)
{
    LOCKSCOPE_REQUIRE_BPF();
    Workload w;
    // The command is `sleep`, which contends on nothing: with -a, the
    // workload's threads are recorded meanwhile; without, they are not.
    const uint32_t tgid = uint32_t(w.process.pid());
    const std::string file = test::temp_path("all-cpus.lockscope");
    auto threads = [&](std::vector<std::string> options) {
        std::vector<std::string> argv = {test::lockscope_bin(), "record", "-f", "-o", file};
        argv.insert(argv.end(), options.begin(), options.end());
        for (const char* a : {"--", "sleep", "0.5"})
            argv.push_back(a);
        test::Finished f = test::run(argv, 60);
        EXPECT_EQ(f.exit_code, 0) << f.err;
        std::set<uint32_t> out;
        if (f.exit_code == 0)
            for (const TaskStats& t : load_session(file).tasks)
                if (t.tgid == tgid && t.counters.contentions)
                    out.insert(t.pid);
        return out;
    };
    EXPECT_GE(threads({"-a"}).size(), 2u);
    EXPECT_TRUE(threads({}).empty());
}

}  // namespace
}  // namespace lockscope
