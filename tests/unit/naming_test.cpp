// Lock identity: kinds from flags, names from class, global or caller —
// never from an address.
#include <gtest/gtest.h>

#include "core/lock_naming.h"
#include "lockscope_abi.h"

namespace lockscope {
namespace {

const char* kKallsyms =
    "ffffffff81000000 T _stext\n"
    "ffffffff81100000 T anon_pipe_write\n"
    "ffffffff81100400 T do_unlinkat\n"
    "ffffffff81100800 T vfs_write\n"
    "ffffffff81200000 T __sched_text_start\n"
    "ffffffff81200100 t __mutex_lock.constprop.0\n"
    "ffffffff81200400 T mutex_lock\n"
    "ffffffff81200800 T down_write\n"
    "ffffffff81201000 T __sched_text_end\n"
    "ffffffff81201000 T __lock_text_start\n"
    "ffffffff81201100 T _raw_spin_lock\n"
    "ffffffff81202000 T __lock_text_end\n"
    "ffffffff81300000 T bpf_trace_run2\n"
    "ffffffff81400000 T _etext\n"
    "ffffffff82000000 D _sdata\n"
    "ffffffff82000100 D rtnl_mutex\n"
    "ffffffff82000200 d other_data\n"
    "ffffffff82100000 D _edata\n";

TEST(LockKind, FromTracepointFlags)
{
    EXPECT_EQ(lock_kind(LCB_F_MUTEX).kind, "mutex");
    EXPECT_EQ(lock_kind(LCB_F_WRITE).kind, "rwsem");
    EXPECT_EQ(lock_kind(LCB_F_WRITE).mode, "write");
    EXPECT_EQ(lock_kind(LCB_F_READ).mode, "read");
    EXPECT_EQ(lock_kind(LCB_F_SPIN).kind, "spinlock");
    EXPECT_EQ(lock_kind(LCB_F_SPIN | LCB_F_READ).kind, "rwlock");
    EXPECT_EQ(lock_kind(LCB_F_PERCPU | LCB_F_READ).kind, "percpu-rwsem");
    EXPECT_EQ(lock_kind(LCB_F_RT).kind, "rtmutex");
    EXPECT_EQ(lock_kind(0).kind, "semaphore");
    EXPECT_EQ(lock_kind(LS_F_USER | LCB_F_MUTEX).kind, "user-mutex");
}

TEST(LockNaming, CallerSkipsTracingAndLockCode)
{
    auto syms = KernelSymbols::parse(kKallsyms);
    std::vector<uint64_t> frames = {0xffffffffc0001234ull /* a BPF program */, 0xffffffff81300010ull,
                                    0xffffffff81200150ull, 0xffffffff81200410ull, 0xffffffff81100020ull,
                                    0xffffffff81100810ull};
    EXPECT_EQ(caller_function(syms, frames), "anon_pipe_write");
    Naming n = name_lock(syms, 0xffff888000001000ull, LCB_F_MUTEX, LS_CLASS_NONE, frames);
    EXPECT_EQ(n.name, "pipe->mutex");
    EXPECT_EQ(n.caller, "anon_pipe_write");
}

TEST(LockNaming, GlobalLockByItsSymbolAndClassFromTheKernel)
{
    auto syms = KernelSymbols::parse(kKallsyms);
    EXPECT_EQ(name_lock(syms, 0xffffffff82000100ull, LCB_F_MUTEX, 0, {}).name, "rtnl_mutex");
    EXPECT_EQ(name_lock(syms, 0xffff888000002000ull, LCB_F_WRITE, LS_CLASS_MMAP_LOCK, {}).name, "mmap_lock");
}

TEST(LockNaming, HeapLockWithoutClassIsKindAtCallerNeverAnAddress)
{
    auto syms = KernelSymbols::parse(kKallsyms);
    std::vector<uint64_t> frames = {0xffffffff81200810ull, 0xffffffff81100410ull};
    EXPECT_EQ(name_lock(syms, 0xffff888000003000ull, LCB_F_WRITE, 0, frames).name, "i_rwsem");
    EXPECT_EQ(name_lock(syms, 0xffff888000003000ull, LCB_F_READ | LCB_F_PERCPU, 0, frames).name,
              "percpu-rwsem@do_unlinkat");
    EXPECT_EQ(name_lock(syms, 0xffff888000003000ull, LCB_F_MUTEX, 0, {}).name, "mutex@unknown");
}

TEST(LockNaming, MutexWaitLockIsNamedAfterItsMutex)
{
    auto syms = KernelSymbols::parse(kKallsyms);
    std::vector<uint64_t> frames = {0xffffffff81201110ull, 0xffffffff81200150ull, 0xffffffff81200410ull,
                                    0xffffffff81100020ull};
    EXPECT_EQ(name_lock(syms, 0xffff888000001008ull, LCB_F_SPIN, 0, frames).name, "pipe->mutex.wait_lock");
}

TEST(KernelSymbols, FramesPastTheTextAreUnknown)
{
    auto syms = KernelSymbols::parse(kKallsyms);
    EXPECT_EQ(syms.frame(0xffffffff81100010ull), "anon_pipe_write+0x10");
    EXPECT_EQ(syms.function_name(0xffffffffc0001234ull), "");
    EXPECT_TRUE(syms.in_lock_text(0xffffffff81201110ull));
    EXPECT_FALSE(syms.in_lock_text(0xffffffff81100010ull));
}

}  // namespace
}  // namespace lockscope
