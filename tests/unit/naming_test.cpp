// Lock identity: kinds from flags, names from class, global or caller —
// never from an address (the ladder without kernel data; identity_test.cpp
// has it with kernel data).
#include <gtest/gtest.h>

#include "identity/ladder.h"
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

const RawIdentity kNoIdentity{};

TEST(LockNaming, CallerSkipsTracingAndLockCode)
{
    auto syms = KernelSymbols::parse(kKallsyms);
    std::vector<uint64_t> frames = {0xffffffffc0001234ull /* a BPF program */,
                                    0xffffffff81300010ull,
                                    0xffffffff81200150ull,
                                    0xffffffff81200410ull,
                                    0xffffffff81100020ull,
                                    0xffffffff81100810ull};
    EXPECT_EQ(caller_function(syms, frames), "anon_pipe_write");
    LockIdentity n = identify_lock(syms, 0xffff888000001000ull, LCB_F_MUTEX, kNoIdentity, frames);
    EXPECT_EQ(n.name, "pipe_inode_info.mutex");
    EXPECT_EQ(n.source, NameSource::Caller);
    EXPECT_EQ(n.caller, "anon_pipe_write");
    // PREEMPT_RT's pipe mutex is an rtmutex: same class.
    EXPECT_EQ(identify_lock(syms, 0xffff888000001000ull, LCB_F_RT, kNoIdentity, frames).name, "pipe_inode_info.mutex");
}

TEST(LockNaming, GlobalLockByItsSymbolAndTaskMembersByClass)
{
    auto syms = KernelSymbols::parse(kKallsyms);
    LockIdentity global = identify_lock(syms, 0xffffffff82000100ull, LCB_F_MUTEX, kNoIdentity, {});
    EXPECT_EQ(global.name, "rtnl_mutex");
    EXPECT_EQ(global.source, NameSource::Global);
    RawIdentity mm;
    mm.task_member = LS_TASK_MMAP_LOCK;
    mm.tgid = 42;
    LockIdentity n = identify_lock(syms, 0xffff888000002000ull, LCB_F_WRITE, mm, {});
    EXPECT_EQ(n.name, "mm_struct.mmap_lock");
    EXPECT_EQ(n.source, NameSource::Task);
    EXPECT_EQ(n.instance, "mm of process 42");
    for (uint32_t member : {LS_TASK_SIGLOCK, LS_TASK_CRED_GUARD, LS_TASK_EXEC_UPDATE, LS_TASK_FILE_LOCK,
                            LS_TASK_FS_LOCK, LS_TASK_RENAME}) {
        RawIdentity id;
        id.task_member = member;
        const std::string cls = task_member_class(member);
        EXPECT_NE(cls.find('.'), std::string::npos) << member;
        EXPECT_EQ(identify_lock(syms, 0xffff888000002000ull, LCB_F_SPIN, id, {}).name, cls);
    }
}

TEST(LockNaming, HeapLockWithoutClassIsKindAtCallerNeverAnAddress)
{
    auto syms = KernelSymbols::parse(kKallsyms);
    std::vector<uint64_t> frames = {0xffffffff81200810ull, 0xffffffff81100410ull};
    EXPECT_EQ(identify_lock(syms, 0xffff888000003000ull, LCB_F_WRITE, kNoIdentity, frames).name, "inode.i_rwsem");
    LockIdentity unknown = identify_lock(syms, 0xffff888000003000ull, LCB_F_READ | LCB_F_PERCPU, kNoIdentity, frames);
    EXPECT_EQ(unknown.name, "percpu-rwsem@do_unlinkat");
    EXPECT_EQ(unknown.source, NameSource::Unknown);
    EXPECT_EQ(identify_lock(syms, 0xffff888000003000ull, LCB_F_MUTEX, kNoIdentity, {}).name, "mutex@unknown");
}

TEST(LockNaming, MutexWaitLockIsNamedAfterItsMutex)
{
    auto syms = KernelSymbols::parse(kKallsyms);
    std::vector<uint64_t> frames = {0xffffffff81201110ull, 0xffffffff81200150ull, 0xffffffff81200410ull,
                                    0xffffffff81100020ull};
    EXPECT_EQ(identify_lock(syms, 0xffff888000001008ull, LCB_F_SPIN, kNoIdentity, frames).name,
              "pipe_inode_info.mutex.wait_lock");
}

TEST(LockNaming, OldNamesMapToTheirClassesAndSourcesAreNamed)
{
    EXPECT_EQ(current_class_name("pipe->mutex"), "pipe_inode_info.mutex");
    EXPECT_EQ(current_class_name("i_rwsem"), "inode.i_rwsem");
    EXPECT_EQ(current_class_name("mmap_lock"), "mm_struct.mmap_lock");
    EXPECT_EQ(current_class_name("rtnl_mutex"), "rtnl_mutex");
    EXPECT_STREQ(name_source_name(NameSource::KernelData), "kernel-data");
    // What a reader of the session counts as named from data is what the
    // ladder's data sources store.
    for (NameSource s : {NameSource::Slab, NameSource::Global, NameSource::Percpu, NameSource::Task})
        EXPECT_TRUE(named_from_data(name_source_name(s))) << name_source_name(s);
    for (NameSource s : {NameSource::KernelData, NameSource::Caller, NameSource::Unknown})
        EXPECT_FALSE(named_from_data(name_source_name(s))) << name_source_name(s);
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
