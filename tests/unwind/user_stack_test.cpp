// User stacks of a program built like a distribution binary (no frame
// pointers): a BPF program copies the registers and the top of the stack of
// each FUTEX_WAIT (bpf/user_stack.h), and UserUnwinder walks the copies with
// the binaries' CFI. The functions that waited must be named, in order,
// through glibc's mutex code, where the kernel's frame-pointer walk of the
// same stacks is lost.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <bpf/libbpf.h>
#include <gtest/gtest.h>

#include "futex_stacks_bpf.skel.h"
#include "futex_sample.h"
#include "unwind/user_unwinder.h"

namespace {

using lockscope::unwind::UnwoundStack;
using lockscope::unwind::UserFrame;
using lockscope::unwind::UserRegs;
using lockscope::unwind::UserUnwinder;

constexpr std::size_t kSamplesWanted = 200;
constexpr int kContenderThreads = 4;
// The chain the contender's threads wait through, innermost first.
const std::vector<std::string> kChain = {"contend_on_lock", "middle_step", "outer_worker"};

// A running lock_contender, its stdin and stdout.
struct Contender {
    pid_t pid = -1;
    int to_child = -1;
    int from_child = -1;

    bool start()
    {
        int in[2];
        int out[2];
        if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
            return false;
        }
        pid = fork();
        if (pid == 0) {
            dup2(in[0], STDIN_FILENO);
            dup2(out[1], STDOUT_FILENO);
            const std::string threads = std::to_string(kContenderThreads);
            execl(LOCK_CONTENDER, LOCK_CONTENDER, threads.c_str(), static_cast<char*>(nullptr));
            _exit(127);
        }
        close(in[0]);
        close(out[1]);
        to_child = in[1];
        from_child = out[0];
        return pid > 0;
    }

    // The child's first line, or "" after timeout_ms.
    std::string read_line(int timeout_ms) const
    {
        std::string line;
        pollfd fd{from_child, POLLIN, 0};
        char c = 0;
        while (poll(&fd, 1, timeout_ms) == 1 && read(from_child, &c, 1) == 1 && c != '\n') {
            line += c;
        }
        return line;
    }

    std::set<uint32_t> threads() const
    {
        std::set<uint32_t> tids;
        const std::string dir = "/proc/" + std::to_string(pid) + "/task";
        if (DIR* d = opendir(dir.c_str())) {
            while (dirent* entry = readdir(d)) {
                if (entry->d_name[0] != '.') {
                    tids.insert(static_cast<uint32_t>(std::stoul(entry->d_name)));
                }
            }
            closedir(d);
        }
        return tids;
    }

    // Closes its stdin (it stops) and reaps it; kills it if it does not stop.
    void stop()
    {
        if (to_child >= 0) {
            close(to_child);
            to_child = -1;
        }
        if (pid > 0) {
            int status = 0;
            for (int i = 0; i < 100 && waitpid(pid, &status, WNOHANG) == 0; ++i) {
                usleep(50 * 1000);
            }
            if (waitpid(pid, &status, WNOHANG) == 0) {
                kill(pid, SIGKILL);
                waitpid(pid, &status, 0);
            }
            pid = -1;
        }
        if (from_child >= 0) {
            close(from_child);
            from_child = -1;
        }
    }
};

int keep_sample(void* ctx, void* data, size_t size)
{
    auto* samples = static_cast<std::vector<futex_sample>*>(ctx);
    if (size >= sizeof(futex_sample) && samples->size() < kSamplesWanted) {
        samples->push_back(*static_cast<const futex_sample*>(data));
    }
    return 0;
}

// The function's name without a compiler clone suffix (".constprop.0").
std::string base_name(const std::string& function)
{
    return function.substr(0, function.find('.'));
}

// Index of the first frame at or after from named name, or frames.size().
std::size_t find_frame(const std::vector<UserFrame>& frames, std::size_t from, const std::string& name)
{
    for (std::size_t i = from; i < frames.size(); ++i) {
        if (base_name(frames[i].function) == name) {
            return i;
        }
    }
    return frames.size();
}

// Whether the chain appears, innermost first, in this order.
bool has_chain_in_order(const std::vector<UserFrame>& frames)
{
    std::size_t at = 0;
    for (const auto& name : kChain) {
        at = find_frame(frames, at, name);
        if (at == frames.size()) {
            return false;
        }
        ++at;
    }
    return true;
}

// Whether a frame of glibc's mutex lock lies between the sampled ip and the
// first named function: the stretch a frame-pointer walk cannot cross.
bool passes_through_libc(const std::vector<UserFrame>& frames)
{
    const std::size_t first = find_frame(frames, 0, kChain.front());
    for (std::size_t i = 0; i < first && i < frames.size(); ++i) {
        const auto& f = frames[i];
        const bool in_libc = f.module.find("libc.so") != std::string::npos;
        if (in_libc &&
            (f.function == "__lll_lock_wait" || f.function.find("pthread_mutex_lock") != std::string::npos)) {
            return true;
        }
    }
    return false;
}

std::string describe(const UnwoundStack& stack)
{
    std::string out;
    for (const auto& f : stack.frames) {
        char pc[32];
        std::snprintf(pc, sizeof(pc), "%#llx", static_cast<unsigned long long>(f.pc));
        out += "  " + std::string(pc) + " " + (f.function.empty() ? "?" : f.function) + " (" + f.module + ")\n";
    }
    if (!stack.stopped.empty()) {
        out += "  stopped: " + stack.stopped + "\n";
    }
    return out;
}

double percentile(std::vector<double> values, double p)
{
    if (values.empty()) {
        return 0;
    }
    std::sort(values.begin(), values.end());
    return values[static_cast<std::size_t>(p * static_cast<double>(values.size() - 1))];
}

// One recording shared by the tests below: the contender runs, the BPF
// program samples its futex waits, and every sample is unwound while the
// contender still runs (as a recorder unwinds at its drains).
struct Recording {
    std::string failure;  // why there is no recording
    std::vector<futex_sample> samples;
    std::vector<UnwoundStack> unwound;
    std::vector<UnwoundStack> frame_pointer;  // the kernel's walk, named
    std::set<uint32_t> contender_threads;
    uint32_t contender_pid = 0;
    uint64_t lost = 0;
    double cold_us = 0;           // the first unwind: reads the maps, opens the files
    std::vector<double> warm_us;  // every later one
};

Recording record()
{
    Recording r;
    Contender contender;
    if (!contender.start() || contender.read_line(10000) != "ready") {
        contender.stop();
        r.failure = "lock_contender did not start";
        return r;
    }
    r.contender_pid = static_cast<uint32_t>(contender.pid);
    futex_stacks_bpf* skel = futex_stacks_bpf::open();
    if (skel == nullptr) {
        contender.stop();
        r.failure = std::string("cannot open the BPF program: ") + std::strerror(errno);
        return r;
    }
    skel->rodata->targ_tgid = r.contender_pid;
    skel->rodata->futex_nr = SYS_futex;
    int err = futex_stacks_bpf::load(skel);
    if (err == 0) {
        err = futex_stacks_bpf::attach(skel);
    }
    ring_buffer* ring =
        err == 0 ? ring_buffer__new(bpf_map__fd(skel->maps.samples), keep_sample, &r.samples, nullptr) : nullptr;
    if (ring == nullptr) {
        r.failure = std::string("cannot load and attach tp_btf/sys_enter: ") + std::strerror(err ? -err : errno);
        futex_stacks_bpf::destroy(skel);
        contender.stop();
        return r;
    }
    if (write(contender.to_child, "go\n", 3) != 3) {
        r.failure = "cannot start the contender's threads";
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (r.failure.empty() && r.samples.size() < kSamplesWanted && std::chrono::steady_clock::now() < deadline) {
        ring_buffer__poll(ring, 100);
    }
    r.lost = skel->bss->lost;
    ring_buffer__free(ring);
    futex_stacks_bpf::destroy(skel);
    r.contender_threads = contender.threads();

    UserUnwinder unwinder;
    for (const auto& sample : r.samples) {
        const UserRegs regs{.ip = sample.stack.regs.ip, .sp = sample.stack.regs.sp, .bp = sample.stack.regs.bp};
        const std::span<const uint8_t> copy(sample.stack.data,
                                            std::min<uint32_t>(sample.stack.size, LS_USER_STACK_BYTES));
        const auto begin = std::chrono::steady_clock::now();
        r.unwound.push_back(unwinder.unwind(static_cast<pid_t>(r.contender_pid), regs, copy, regs.sp));
        const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - begin;
        if (&sample == &r.samples.front()) {
            r.cold_us = took.count();
        } else {
            r.warm_us.push_back(took.count());
        }
        const std::vector<uint64_t> fp(sample.fp_stack,
                                       sample.fp_stack + std::min<uint32_t>(sample.fp_frames, FUTEX_SAMPLE_FP_FRAMES));
        r.frame_pointer.push_back(unwinder.name(static_cast<pid_t>(r.contender_pid), fp));
    }
    contender.stop();
    return r;
}

class UserStacks : public ::testing::Test {
protected:
    static void SetUpTestSuite()
    {
        if (geteuid() == 0) {
            recording_ = new Recording(record());
        }
    }
    static void TearDownTestSuite()
    {
        delete recording_;
        recording_ = nullptr;
    }
    void SetUp() override
    {
        if (recording_ == nullptr) {
            GTEST_SKIP() << "needs root to load BPF programs and read another process's maps";
        }
        ASSERT_EQ(recording_->failure, "");
        ASSERT_GE(recording_->samples.size(), 100u)
            << "the contender's futex waits were not sampled (" << recording_->lost << " lost)";
    }
    static Recording* recording_;
};

Recording* UserStacks::recording_ = nullptr;

TEST_F(UserStacks, NameTheWaitingFunctionsInOrderInAlmostEverySample)
{
    const auto& r = *recording_;
    std::size_t named = 0;
    std::size_t first_bad = r.unwound.size();
    for (std::size_t i = 0; i < r.unwound.size(); ++i) {
        if (has_chain_in_order(r.unwound[i].frames)) {
            ++named;
        } else if (first_bad == r.unwound.size()) {
            first_bad = i;
        }
    }
    std::printf("user stacks: %zu of %zu samples name outer_worker > middle_step > contend_on_lock\n", named,
                r.unwound.size());
    EXPECT_GE(named * 10, r.unwound.size() * 9) << "first sample without the chain:\n"
                                                << (first_bad < r.unwound.size() ? describe(r.unwound[first_bad]) : "");
    if (!r.unwound.empty()) {
        std::printf("a sample, unwound:\n%s", describe(r.unwound.front()).c_str());
    }
}

TEST_F(UserStacks, CrossGlibcsMutexCodeWhereAFramePointerWalkIsLost)
{
    const auto& r = *recording_;
    std::size_t through_libc = 0;
    std::size_t frame_pointer_named = 0;
    for (std::size_t i = 0; i < r.unwound.size(); ++i) {
        through_libc += passes_through_libc(r.unwound[i].frames) ? 1 : 0;
        frame_pointer_named += has_chain_in_order(r.frame_pointer[i].frames) ? 1 : 0;
    }
    std::printf(
        "user stacks: %zu of %zu pass through glibc's mutex lock; the kernel's frame-pointer walk names "
        "the chain in %zu\n",
        through_libc, r.unwound.size(), frame_pointer_named);
    EXPECT_GE(through_libc * 10, r.unwound.size() * 9);
    // The control: were the contender built with frame pointers, this test
    // would prove nothing about CFI.
    EXPECT_LT(frame_pointer_named * 10, r.unwound.size())
        << "the kernel's frame-pointer walk found the chain: is lock_contender built without frame pointers?";
}

TEST_F(UserStacks, FramesCarryTheirModuleAndBuildId)
{
    const auto& r = *recording_;
    const std::string contender = LOCK_CONTENDER;
    for (const auto& stack : r.unwound) {
        const std::size_t at = find_frame(stack.frames, 0, "middle_step");
        if (at == stack.frames.size()) {
            continue;
        }
        const auto& frame = stack.frames[at];
        EXPECT_EQ(frame.module, contender);
        EXPECT_EQ(frame.build_id.size(), 40u) << "gcc's default build-id is a 20-byte SHA-1";
        EXPECT_GT(frame.function_offset, 0u) << "a return address lies inside its function";
        return;
    }
    FAIL() << "no sample has middle_step";
}

TEST_F(UserStacks, TheMutexOwnerIsAnotherThreadOfTheContender)
{
    const auto& r = *recording_;
    std::size_t known_owner = 0;
    for (const auto& sample : r.samples) {
        if (sample.owner_tid == 0) {
            continue;  // the holder released it between the waiter's check and its syscall
        }
        EXPECT_NE(sample.owner_tid, sample.tid) << "a waiter does not hold the mutex it waits on";
        EXPECT_TRUE(r.contender_threads.count(sample.owner_tid)) << "owner " << sample.owner_tid;
        ++known_owner;
    }
    std::printf("mutex owner: a contender thread in %zu of %zu samples\n", known_owner, r.samples.size());
    EXPECT_GE(known_owner * 2, r.samples.size());
}

// Tracepoints other than the syscalls' pass no registers: there the copy
// starts from bpf_task_pt_regs(), which must be the same registers.
TEST_F(UserStacks, TheTasksRegistersAreTheSyscallsRegisters)
{
    for (const auto& sample : recording_->samples) {
        EXPECT_EQ(sample.task_regs.ip, sample.stack.regs.ip);
        EXPECT_EQ(sample.task_regs.sp, sample.stack.regs.sp);
        EXPECT_EQ(sample.task_regs.bp, sample.stack.regs.bp);
        EXPECT_GT(sample.stack.size, 0u) << "nothing of the stack was copied";
    }
}

TEST_F(UserStacks, PrintsTheUnwindCostPerSample)
{
    const auto& r = *recording_;
    std::printf(
        "unwind cost per sample: first %.0f us (reads maps, opens files); then over %zu samples median %.1f us, "
        "p10 %.1f us, p90 %.1f us, max %.1f us\n",
        r.cold_us, r.warm_us.size(), percentile(r.warm_us, 0.5), percentile(r.warm_us, 0.1), percentile(r.warm_us, 0.9),
        percentile(r.warm_us, 1.0));
    EXPECT_EQ(r.warm_us.size() + 1, r.samples.size());
    std::vector<double> copied;
    for (const auto& sample : r.samples) {
        copied.push_back(sample.stack.size);
    }
    std::printf("stack bytes copied per sample: median %.0f, min %.0f (of %d); %llu waits lost to a full ring\n",
                percentile(copied, 0.5), percentile(copied, 0.0), LS_USER_STACK_BYTES,
                static_cast<unsigned long long>(r.lost));
    std::map<std::string, int> stopped;
    for (const auto& stack : r.unwound) {
        if (!stack.stopped.empty()) {
            ++stopped[stack.stopped];
        }
    }
    for (const auto& [why, count] : stopped) {
        std::printf("walks that ended early: %d (%s)\n", count, why.c_str());
    }
}

}  // namespace
