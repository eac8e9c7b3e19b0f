// UserUnwinder on stacks this test copies from itself, as the BPF side copies
// a sampled thread's (registers, then the bytes from sp up): no root needed,
// so it also runs under the sanitizers.
#include <pthread.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "unwind/symbol_names.h"
#include "unwind/user_unwinder.h"

namespace {

using lockscope::unwind::function_name;
using lockscope::unwind::UnwoundStack;
using lockscope::unwind::UserRegs;
using lockscope::unwind::UserUnwinder;

struct Capture {
    UserRegs regs;
    std::vector<uint8_t> stack;
};

// How far the current thread's stack reaches above sp.
std::size_t stack_above(uint64_t sp)
{
    pthread_attr_t attr;
    void* low = nullptr;
    std::size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) {
        return 0;
    }
    pthread_attr_getstack(&attr, &low, &size);
    pthread_attr_destroy(&attr);
    return reinterpret_cast<uint64_t>(low) + size - sp;
}

}  // namespace

// Registers where they are read, then up to 8 KiB of the stack from sp: the
// frames above this one do not change while it copies.
extern "C" __attribute__((noinline)) void capture_registers_and_stack(Capture& capture)
{
    uint64_t ip = 0;
    uint64_t sp = 0;
    uint64_t bp = 0;
#if defined(__x86_64__)
    asm volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2" : "=r"(ip), "=r"(sp), "=r"(bp));
#elif defined(__aarch64__)
    asm volatile("adr %0, .\n\tmov %1, sp\n\tmov %2, x29" : "=r"(ip), "=r"(sp), "=r"(bp));
#else
#error "unwinder_test: no register capture for this architecture"
#endif
    capture.regs = UserRegs{.ip = ip, .sp = sp, .bp = bp};
    const std::size_t size = std::min<std::size_t>(8192, stack_above(sp));
    // Copied by the kernel, as bpf_probe_read_user does: a plain copy of a
    // stack would read AddressSanitizer's poisoned red zones.
    capture.stack.resize(size);
    iovec local{capture.stack.data(), size};
    iovec remote{reinterpret_cast<void*>(sp), size};
    const ssize_t copied = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    capture.stack.resize(copied > 0 ? static_cast<std::size_t>(copied) : 0);
}

struct Sampler {
    int depth = 0;
    __attribute__((noinline)) void take(Capture& capture);
};

void Sampler::take(Capture& capture)
{
    capture_registers_and_stack(capture);
    depth += static_cast<int>(capture.stack.size() & 1) + 1;  // work after the call: not a tail call
}

extern "C" __attribute__((noinline)) int unwinder_test_outer(Capture& capture)
{
    Sampler sampler;
    sampler.take(capture);
    return sampler.depth;
}

namespace {

std::vector<std::string> names(const UnwoundStack& stack)
{
    std::vector<std::string> out;
    for (const auto& frame : stack.frames) {
        out.push_back(frame.function);
    }
    return out;
}

std::size_t index_of(const std::vector<std::string>& functions, const std::string& prefix)
{
    for (std::size_t i = 0; i < functions.size(); ++i) {
        if (functions[i].starts_with(prefix)) {
            return i;
        }
    }
    return functions.size();
}

Capture capture_in_a_thread()
{
    Capture capture;
    std::thread([&] { unwinder_test_outer(capture); }).join();
    return capture;
}

TEST(UserUnwinder, NamesEveryFrameOfACopiedStackInOrder)
{
    const Capture capture = capture_in_a_thread();
    ASSERT_GT(capture.stack.size(), 0u);
    UserUnwinder unwinder;
    const UnwoundStack stack = unwinder.unwind(getpid(), capture.regs, capture.stack, capture.regs.sp);
    const auto functions = names(stack);
    const std::size_t capture_at = index_of(functions, "capture_registers_and_stack");
    const std::size_t take_at = index_of(functions, "Sampler::take(");
    const std::size_t outer_at = index_of(functions, "unwinder_test_outer");
    ASSERT_EQ(capture_at, 0u) << testing::PrintToString(functions) << " " << stack.stopped;
    EXPECT_EQ(take_at, 1u) << testing::PrintToString(functions);
    EXPECT_EQ(outer_at, 2u) << testing::PrintToString(functions);
    // libstdc++'s thread trampoline and glibc's start_thread lie beyond, all
    // within the copy: the walk ends at the thread's first frame.
    EXPECT_GT(functions.size(), 4u) << testing::PrintToString(functions);
    EXPECT_EQ(stack.stopped, "") << testing::PrintToString(functions);
    EXPECT_NE(stack.frames[0].module.find("unwinder_test"), std::string::npos) << stack.frames[0].module;
}

TEST(UserUnwinder, SaysSoWhenTheStackCopyEndsFirst)
{
    const Capture capture = capture_in_a_thread();
    // Enough for the first frame's CFA, not for the frames above.
    const std::span<const uint8_t> short_copy(capture.stack.data(), std::min<std::size_t>(capture.stack.size(), 16));
    UserUnwinder unwinder;
    const UnwoundStack stack = unwinder.unwind(getpid(), capture.regs, short_copy, capture.regs.sp);
    ASSERT_FALSE(stack.frames.empty());
    EXPECT_EQ(stack.frames[0].function, "capture_registers_and_stack");
    EXPECT_EQ(index_of(names(stack), "unwinder_test_outer"), stack.frames.size());
    EXPECT_NE(stack.stopped.find("stack copy (16 bytes) ends"), std::string::npos)
        << stack.stopped << testing::PrintToString(names(stack));
}

TEST(UserUnwinder, StopsAtItsFrameLimitAndSaysSo)
{
    const Capture capture = capture_in_a_thread();
    UserUnwinder unwinder(2);
    const UnwoundStack stack = unwinder.unwind(getpid(), capture.regs, capture.stack, capture.regs.sp);
    EXPECT_EQ(names(stack).size(), 2u) << testing::PrintToString(names(stack));
    EXPECT_EQ(stack.stopped, "stopped at the limit of 2 frames");
}

TEST(UserUnwinder, RepeatedSamplesGiveTheSameFrames)
{
    const Capture capture = capture_in_a_thread();
    UserUnwinder unwinder;
    const auto first = names(unwinder.unwind(getpid(), capture.regs, capture.stack, capture.regs.sp));
    const auto second = names(unwinder.unwind(getpid(), capture.regs, capture.stack, capture.regs.sp));
    EXPECT_EQ(first, second);
    EXPECT_EQ(unwinder.cached_processes(), 1u);
    unwinder.forget(getpid());
    EXPECT_EQ(unwinder.cached_processes(), 0u);
}

TEST(UserUnwinder, NamesGivenAddressesAsItNamesTheFramesItWalks)
{
    const Capture capture = capture_in_a_thread();
    UserUnwinder unwinder;
    const UnwoundStack unwound = unwinder.unwind(getpid(), capture.regs, capture.stack, capture.regs.sp);
    std::vector<uint64_t> pcs;
    for (const auto& frame : unwound.frames) {
        pcs.push_back(frame.pc);
    }
    EXPECT_EQ(names(unwinder.name(getpid(), pcs)), names(unwound));
}

TEST(UserUnwinder, AProcessThatIsGoneKeepsItsAddressAndSaysWhy)
{
    UserUnwinder unwinder;
    const UserRegs regs{.ip = 0x401000, .sp = 0x7ffc0000, .bp = 0};
    const std::vector<uint8_t> stack(64);
    // pid_max is at most 2^22: no process has this pid.
    const UnwoundStack unwound = unwinder.unwind(1 << 23, regs, stack, regs.sp);
    ASSERT_EQ(unwound.frames.size(), 1u);
    EXPECT_EQ(unwound.frames[0].pc, 0x401000u);
    EXPECT_EQ(unwound.frames[0].function, "");
    EXPECT_NE(unwound.stopped.find("memory maps of process 8388608"), std::string::npos) << unwound.stopped;
}

// A process loaded while it ran is unwound after it has exited (a command
// that ends right after its last wait): a forked child maps what this
// process maps, where it maps it, so this process's stack is one of its.
TEST(UserUnwinder, AProcessLoadedWhileItRanIsUnwoundAfterItExited)
{
    const Capture capture = capture_in_a_thread();
    ASSERT_GT(capture.stack.size(), 0u);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        pause();
        _exit(0);
    }
    UserUnwinder loaded;
    std::string why;
    const bool ok = loaded.load(child, why);
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    ASSERT_TRUE(ok) << why;
    const UnwoundStack stack = loaded.unwind(child, capture.regs, capture.stack, capture.regs.sp);
    EXPECT_EQ(index_of(names(stack), "capture_registers_and_stack"), 0u) << stack.stopped;
    EXPECT_EQ(index_of(names(stack), "unwinder_test_outer"), 2u) << testing::PrintToString(names(stack));

    UserUnwinder not_loaded;
    const UnwoundStack gone = not_loaded.unwind(child, capture.regs, capture.stack, capture.regs.sp);
    EXPECT_EQ(gone.frames.size(), 1u);
    EXPECT_NE(gone.stopped.find("has it exited"), std::string::npos) << gone.stopped;
    EXPECT_FALSE(not_loaded.load(child, why));
}

TEST(FunctionName, IsTheSameWithAndWithoutDebuginfo)
{
    EXPECT_EQ(function_name("pthread_mutex_lock@@GLIBC_2.2.5"), "pthread_mutex_lock");
    EXPECT_EQ(function_name("__pthread_mutex_lock@GLIBC_2.2.5"), "__pthread_mutex_lock");
    EXPECT_EQ(function_name("__GI___lll_lock_wait"), "__lll_lock_wait");
    EXPECT_EQ(function_name("__lll_lock_wait"), "__lll_lock_wait");
    EXPECT_EQ(function_name("_ZN5Cache3getEv"), "Cache::get()");
    EXPECT_EQ(function_name("_Zbroken"), "_Zbroken");
    EXPECT_EQ(function_name("__GI_"), "__GI_");
}

}  // namespace
