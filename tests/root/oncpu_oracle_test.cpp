// The exact owner oracle (bpf/oncpu.bpf.c + probe::OnCpuOracle) against
// threads whose state is known: spinning is on CPU, blocked is off CPU, and
// oversubscribed threads are seen preempted; switches the program never
// saw are repaired by the next timer tick.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "probe/oncpu_oracle.h"
#include "root_helpers.h"

namespace lockscope {
namespace {

using namespace std::chrono_literals;

std::uint32_t gettid_u32()
{
    return std::uint32_t(syscall(SYS_gettid));
}

// How many times the kernel has switched thread tid (of this process) in or
// out, by its own count: voluntary + involuntary context switches.
std::uint64_t context_switches(std::uint32_t tid)
{
    std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/status");
    std::uint64_t total = 0;
    for (std::string line; std::getline(in, line);)
        if (line.rfind("voluntary_ctxt_switches:", 0) == 0 || line.rfind("nonvoluntary_ctxt_switches:", 0) == 0)
            total += std::stoull(line.substr(line.find(':') + 1));
    return total;
}

probe::OnCpuOracle load_for_self()
{
    return probe::OnCpuOracle::load(getpid());
}

// Waits (bounded) until `cond` holds, sampling every 100 us.
template <class F>
bool eventually(F cond, std::chrono::milliseconds limit = 2000ms)
{
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
        if (cond())
            return true;
        std::this_thread::sleep_for(100us);
    }
    return false;
}

// Context switches of the calling thread so far, by the kernel's count.
long own_switches()
{
    rusage r{};
    getrusage(RUSAGE_THREAD, &r);
    return r.ru_nvcsw + r.ru_nivcsw;
}

// How long a running thread may read itself "off CPU" after a switch the
// program did not see: the next timer tick repairs it. Five ticks at
// HZ=250, two at HZ=100, plus room for a slow sanitizer build.
constexpr auto kRepairBound = 20ms;

// The oracle's map, writable, to play the part of a switch the program
// never saw.
class WritableTable {
public:
    explicit WritableTable(const probe::OnCpuOracle& oracle)
        : oracle_(oracle), bytes_(LS_ONCPU_WORDS(oracle.entries(), oracle.cpus()) * sizeof(std::uint32_t))
    {
        const std::size_t page = std::size_t(sysconf(_SC_PAGESIZE));
        bytes_ = (bytes_ + page - 1) / page * page;
        void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, oracle.table_fd(), 0);
        table_ = p == MAP_FAILED ? nullptr : static_cast<std::uint32_t*>(p);
    }
    ~WritableTable()
    {
        if (table_)
            munmap(table_, bytes_);
    }
    WritableTable(const WritableTable&) = delete;
    WritableTable& operator=(const WritableTable&) = delete;

    bool ok() const { return table_ != nullptr; }
    void set_slot(std::uint32_t tid, std::uint32_t value) { store(LS_ONCPU_TID_SLOT(tid, oracle_.entries()), value); }
    void set_belief(unsigned cpu, std::uint32_t tid) { store(LS_ONCPU_CPU_SLOT(cpu, oracle_.entries()), tid); }

private:
    void store(std::size_t i, std::uint32_t v) { std::atomic_ref<std::uint32_t>(table_[i]).store(v); }

    const probe::OnCpuOracle& oracle_;
    std::size_t bytes_;
    std::uint32_t* table_ = nullptr;
};

// A thread that is executing is on a CPU by definition, so it must see its
// own slot marked. (Asked from another thread the answer depends on the
// scheduler: on a busy 2-CPU machine the asking thread often wakes on the
// spinner's CPU and preempts it, and "off CPU" is then the right answer.)
// Not always: a switch the program never sees (some VMs hide those of
// their agent's threads) leaves the thread it switched in unmarked until a
// tick repairs it. So every stretch read "off" while the thread kept
// running, by the kernel's own switch count, must be shorter than that.
TEST(OnCpuOracle, RunningThreadSeesItselfOnCpu)
{
    LOCKSCOPE_REQUIRE_BPF();
    const probe::OnCpuOracle oracle = load_for_self();
    std::uint64_t on = 0, total = 0;
    std::uint32_t tid = 0;
    std::vector<std::chrono::nanoseconds> unrepaired;  // off stretches with no switch, too long
    std::thread spinner([&] {
        tid = gettid_u32();
        const auto end = std::chrono::steady_clock::now() + 300ms;
        for (auto now = std::chrono::steady_clock::now(); now < end; now = std::chrono::steady_clock::now()) {
            for (int i = 0; i < 1000; i++, total++)
                on += oracle.on_cpu(tid);
            if (oracle.on_cpu(tid))
                continue;
            const long switches = own_switches();
            const auto off_since = std::chrono::steady_clock::now();
            while (!oracle.on_cpu(tid) && std::chrono::steady_clock::now() < off_since + 1s) {
            }
            const auto stretch = std::chrono::steady_clock::now() - off_since;
            if (own_switches() == switches && stretch > kRepairBound)
                unrepaired.push_back(stretch);
        }
    });
    spinner.join();
    ASSERT_GT(total, 0u);
    EXPECT_TRUE(unrepaired.empty()) << unrepaired.size() << " stretches read off CPU while running, the first "
                                    << (unrepaired.empty() ? 0 : unrepaired[0].count() / 1000) << " us";
    EXPECT_GE(double(on), 0.95 * double(total)) << on << " of " << total << " self-checks said on CPU";
    // join() returns when the thread's exit clears its tid, a few
    // microseconds (more under sanitizers) before its last switch-out: wait
    // for that switch, boundedly.
    const auto deadline = std::chrono::steady_clock::now() + 1s;
    while (oracle.on_cpu(tid) && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(1ms);
    EXPECT_FALSE(oracle.on_cpu(tid)) << "an exited thread is still reported on CPU a second later";
}

// A switch-in the program missed, played by clearing a running thread's
// own slot: the thread must see itself on CPU again within a few ticks,
// without being switched. Attempts in which the kernel switched it (which
// marks it the ordinary way) prove nothing and are repeated.
TEST(OnCpuOracle, MissedSwitchInIsRepairedByTheNextTick)
{
    LOCKSCOPE_REQUIRE_BPF();
    const probe::OnCpuOracle oracle = load_for_self();
    WritableTable table(oracle);
    ASSERT_TRUE(table.ok()) << "cannot map the oracle's table writable";
    int valid = 0, attempts = 0;
    std::vector<long> slow_us;
    std::thread spinner([&] {
        const std::uint32_t tid = gettid_u32();
        for (; attempts < 300 && valid < 5; attempts++) {
            const long switches = own_switches();
            table.set_slot(tid, 0);
            const auto start = std::chrono::steady_clock::now();
            while (!oracle.on_cpu(tid) && std::chrono::steady_clock::now() < start + 500ms) {
            }
            const auto took = std::chrono::steady_clock::now() - start;
            if (own_switches() != switches)
                continue;
            valid++;
            if (took > kRepairBound)
                slow_us.push_back(long(std::chrono::duration_cast<std::chrono::microseconds>(took).count()));
        }
    });
    spinner.join();
    EXPECT_GE(valid, 3) << "the spinner was switched in " << attempts - valid << " of " << attempts << " attempts";
    EXPECT_TRUE(slow_us.empty()) << slow_us.size() << " of " << valid
                                 << " unmarked running threads were not marked again within " << kRepairBound.count()
                                 << " ms; the first after " << (slow_us.empty() ? 0 : slow_us[0]) << " us";
}

// A switch-out the program missed, played by marking a sleeping thread as
// running on every CPU: each CPU's next tick sees someone else running, and
// once no CPU believes in the thread its mark must go, while the kernel's
// own count shows it never ran.
TEST(OnCpuOracle, MissedSwitchOutIsRepairedByTheNextTicks)
{
    LOCKSCOPE_REQUIRE_BPF();
    const probe::OnCpuOracle oracle = load_for_self();
    WritableTable table(oracle);
    ASSERT_TRUE(table.ok()) << "cannot map the oracle's table writable";
    std::mutex m;
    std::condition_variable cv;
    bool release = false;
    std::atomic<std::uint32_t> sleeper_tid{0};
    std::thread sleeper([&] {
        std::unique_lock lock(m);
        sleeper_tid = gettid_u32();
        cv.wait(lock, [&] { return release; });
    });
    ASSERT_TRUE(eventually([&] { return sleeper_tid.load() != 0 && !oracle.on_cpu(sleeper_tid); }));

    // One busy thread pinned to each CPU we may use, so that each ticks.
    cpu_set_t allowed;
    ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
    std::vector<unsigned> cpus;
    for (unsigned c = 0; c < std::min<unsigned>(CPU_SETSIZE, oracle.cpus()); c++)
        if (CPU_ISSET(c, &allowed))
            cpus.push_back(c);
    std::atomic<bool> stop{false};
    std::vector<std::thread> busy;
    for (unsigned c : cpus)
        busy.emplace_back([&, c] {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(c, &one);
            sched_setaffinity(0, sizeof one, &one);
            while (!stop.load()) {
            }
        });

    bool quiet = false, repaired = false;
    for (int attempt = 0; attempt < 3 && !quiet; attempt++) {
        const std::uint64_t before = context_switches(sleeper_tid);
        for (unsigned c : cpus)
            table.set_belief(c, sleeper_tid);
        table.set_slot(sleeper_tid, sleeper_tid);
        repaired = eventually([&] { return !oracle.on_cpu(sleeper_tid); }, 1000ms);
        quiet = context_switches(sleeper_tid) == before;
    }
    stop = true;
    for (auto& t : busy)
        t.join();
    {
        std::lock_guard lock(m);
        release = true;
    }
    cv.notify_one();
    sleeper.join();
    ASSERT_TRUE(quiet) << "the sleeping thread ran in each of three attempts";
    EXPECT_TRUE(repaired) << "a thread marked running on every CPU while it slept was still marked a second later";
}

TEST(OnCpuOracle, BlockedAndSleepingThreadsAreOffCpu)
{
    LOCKSCOPE_REQUIRE_BPF();
    const probe::OnCpuOracle oracle = load_for_self();
    std::mutex m;
    std::condition_variable cv;
    bool release = false;
    std::atomic<std::uint32_t> waiter_tid{0}, sleeper_tid{0};
    std::thread waiter([&] {
        std::unique_lock lock(m);
        waiter_tid = gettid_u32();
        cv.wait(lock, [&] { return release; });  // a futex wait
    });
    std::thread sleeper([&] {
        sleeper_tid = gettid_u32();
        std::this_thread::sleep_for(1s);
    });
    ASSERT_TRUE(eventually([&] { return waiter_tid.load() != 0 && sleeper_tid.load() != 0; }));
    // Once they have switched out they stay off CPU: every sample must say so,
    // over a window in which the kernel's own counters show neither ran. A
    // window in which one did (a spurious futex wakeup is allowed) is sampled
    // again.
    EXPECT_TRUE(eventually([&] { return !oracle.on_cpu(waiter_tid) && !oracle.on_cpu(sleeper_tid); }));
    bool quiet_window = false;
    for (int attempt = 0; attempt < 3 && !quiet_window; attempt++) {
        const std::uint64_t before = context_switches(waiter_tid) + context_switches(sleeper_tid);
        int on = 0;
        for (int i = 0; i < 100; i++) {
            on += oracle.on_cpu(waiter_tid) + oracle.on_cpu(sleeper_tid);
            std::this_thread::sleep_for(100us);
        }
        quiet_window = context_switches(waiter_tid) + context_switches(sleeper_tid) == before;
        if (quiet_window) {
            EXPECT_EQ(on, 0) << "reported on CPU while the kernel switched neither thread";
        }
    }
    EXPECT_TRUE(quiet_window) << "the blocked threads ran in each of three sampling windows";
    {
        std::lock_guard lock(m);
        release = true;
    }
    cv.notify_one();
    waiter.join();
    sleeper.join();
}

// The case the oracle exists for: more runnable threads than CPUs, so
// owners are preempted. Each busy thread, while it runs, samples its peers
// about once a millisecond: every thread must be seen off CPU by a running
// peer (it was preempted) and on CPU (the other CPU ran it), and no sample
// may show more threads running than there are CPUs.
TEST(OnCpuOracle, OversubscribedThreadsAreSeenOffCpu)
{
    LOCKSCOPE_REQUIRE_BPF();
    const probe::OnCpuOracle oracle = load_for_self();
    const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
    const unsigned n = 2 * cpus;
    std::vector<std::atomic<std::uint32_t>> tids(n);
    std::vector<std::vector<int>> on(n, std::vector<int>(n)), off(n, std::vector<int>(n));
    std::vector<int> samples(n), too_many(n);
    std::atomic<unsigned> started{0};
    std::vector<std::thread> busy;
    for (unsigned i = 0; i < n; i++)
        busy.emplace_back([&, i] {
            tids[i] = gettid_u32();
            started++;
            while (started.load() < n) {
            }
            const auto start = std::chrono::steady_clock::now();
            auto next = start;
            while (std::chrono::steady_clock::now() < start + 800ms) {
                if (std::chrono::steady_clock::now() < next)
                    continue;
                next += 1ms;
                unsigned running = 0;
                for (unsigned j = 0; j < n; j++) {
                    const bool r = oracle.on_cpu(tids[j]);
                    running += r;
                    if (j != i)
                        (r ? on : off)[i][j]++;
                }
                samples[i]++;
                // One more than the CPUs if a switch lands between two reads.
                too_many[i] += running > cpus + 1;
            }
        });
    for (auto& t : busy)
        t.join();
    for (unsigned j = 0; j < n; j++) {
        int seen_on = 0, seen_off = 0;
        for (unsigned i = 0; i < n; i++) {
            seen_on += on[i][j];
            seen_off += off[i][j];
        }
        EXPECT_GT(samples[j], 50) << "busy thread " << j << " hardly ran";
        EXPECT_GT(seen_off, 0) << "busy thread " << j << " never seen off CPU by a running peer";
        EXPECT_GT(seen_on, 0) << "busy thread " << j << " never seen on CPU by a running peer";
        EXPECT_EQ(too_many[j], 0) << "samples with more threads on CPU than CPUs";
    }
}

}  // namespace
}  // namespace lockscope
