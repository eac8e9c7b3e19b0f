// Lock waits told from other futex waits, and locks named, from unwound
// stacks built by hand as glibc 2.36 and libstdc++ lay them out.
#include <gtest/gtest.h>

#include "identity/user_classify.h"

namespace {

using lockscope::unwind::UserFrame;
using namespace lockscope::userlock;

const std::string kLibc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
const std::string kProgram = "/opt/app/bin/myapp";

UserFrame frame(std::string function, const std::string& module)
{
    UserFrame f;
    f.function = std::move(function);
    f.module = module;
    return f;
}

TEST(UserWaitClassify, AMutexWaitIsALockWaitOfKindPthreadMutex)
{
    const std::vector<UserFrame> stack = {frame("__lll_lock_wait", kLibc), frame("pthread_mutex_lock", kLibc),
                                          frame("update_cache()", kProgram), frame("main", kProgram)};
    const auto c = classify(stack);
    EXPECT_EQ(c.wait_class, WaitClass::lock);
    EXPECT_EQ(c.kind, "pthread_mutex");
    EXPECT_EQ(first_caller(stack), "update_cache");
}

TEST(UserWaitClassify, WithoutLibcDebuginfoTheExportedFunctionDecides)
{
    const std::vector<UserFrame> stack = {frame("", kLibc), frame("pthread_rwlock_wrlock", kLibc),
                                          frame("std::shared_mutex::lock()", kProgram),
                                          frame("Table::update(int)", kProgram)};
    const auto c = classify(stack);
    EXPECT_EQ(c.wait_class, WaitClass::lock);
    EXPECT_EQ(c.kind, "pthread_rwlock/w");
    EXPECT_EQ(first_caller(stack), "Table::update") << "std:: wrappers belong to the locking library";
}

TEST(UserWaitClassify, ReadersAreTheirOwnKind)
{
    const auto c = classify({frame("__pthread_rwlock_rdlock_full64", kLibc), frame("pthread_rwlock_rdlock", kLibc)});
    EXPECT_EQ(c.kind, "pthread_rwlock/r");
}

TEST(UserWaitClassify, AConditionWaitIsNoLockWait)
{
    const std::vector<UserFrame> stack = {frame("__futex_abstimed_wait_common", kLibc),
                                          frame("__pthread_cond_wait_common", kLibc), frame("pthread_cond_wait", kLibc),
                                          frame("consume_queue()", kProgram)};
    EXPECT_EQ(classify(stack).wait_class, WaitClass::condition);
    EXPECT_EQ(classify(stack).kind, "futex");
}

TEST(UserWaitClassify, TheMutexAConditionVariableRetakesIsALockWait)
{
    const std::vector<UserFrame> stack = {frame("__lll_lock_wait", kLibc), frame("__pthread_mutex_cond_lock", kLibc),
                                          frame("__pthread_cond_wait_common", kLibc),
                                          frame("pthread_cond_wait", kLibc)};
    EXPECT_EQ(classify(stack).wait_class, WaitClass::lock);
}

TEST(UserWaitClassify, SemaphoresAndTheRestAreNoLockWaits)
{
    EXPECT_EQ(classify({frame("", kLibc), frame("sem_wait", kLibc)}).wait_class, WaitClass::semaphore);
    const auto other = classify({frame("syscall", kLibc), frame("EventLoop::run()", kProgram)});
    EXPECT_EQ(other.wait_class, WaitClass::other);
    EXPECT_EQ(other.kind, "futex");
    EXPECT_EQ(classify({}).wait_class, WaitClass::other);
}

TEST(UserWaitClassify, AProgramsOwnFunctionNamedLikeTheLibrarysDoesNotDecide)
{
    const std::vector<UserFrame> stack = {frame("syscall", kLibc), frame("sem_refill(Pool&)", kProgram)};
    EXPECT_EQ(classify(stack).wait_class, WaitClass::other);
}

TEST(UserLockNames, AHeapLockIsNamedByItsKindAndFirstCaller)
{
    EXPECT_EQ(caller_lock_name("pthread_mutex", "Cache::get"), "pthread_mutex@Cache::get");
    EXPECT_EQ(caller_lock_name("pthread_rwlock/r", "Table::find"), "pthread_rwlock@Table::find");
}

TEST(UserLockNames, ParametersAndQualifiersAreDropped)
{
    EXPECT_EQ(without_parameters("Cache::get(int)"), "Cache::get");
    EXPECT_EQ(without_parameters("Cache::get(std::pair<int, int>) const"), "Cache::get");
    EXPECT_EQ(without_parameters("(anonymous namespace)::worker(void*)"), "(anonymous namespace)::worker");
    EXPECT_EQ(without_parameters("main"), "main");
    EXPECT_EQ(without_parameters("void f<(1)>(int)"), "void f<(1)>");
}

TEST(UserLockNames, FramesInNoFileAreSkippedAndAnUnnamedCallerIsNamedByItsPlace)
{
    EXPECT_EQ(first_caller({frame("pthread_mutex_lock", kLibc), frame("", "")}), "");
    // A stripped binary with no debug file: its module and offset, the same
    // on every run of the same build.
    UserFrame stripped = frame("", kProgram);
    stripped.module_offset = 0xf55ff;
    const Caller caller = first_caller_of({frame("pthread_mutex_lock", kLibc), stripped});
    EXPECT_EQ(caller.name, "myapp+0xf55ff");
    EXPECT_TRUE(caller.is_offset);
    EXPECT_EQ(caller_lock_name("pthread_mutex", caller.name), "pthread_mutex@myapp+0xf55ff");
    const Caller named = first_caller_of({frame("pthread_mutex_lock", kLibc), frame("Cache::get(int)", kProgram)});
    EXPECT_EQ(named.name, "Cache::get");
    EXPECT_FALSE(named.is_offset);
}

TEST(UserLockNames, ALockOfTheCLibrarysOwnIsNamedByTheCLibraryFunctionThatTookIt)
{
    // A new thread waits for its creator to set it up (perf bench futex
    // hash pins its threads): the whole thread is the C library's.
    EXPECT_EQ(
        first_caller({frame("__lll_lock_wait_private", kLibc), frame("start_thread", kLibc), frame("__clone3", kLibc)}),
        "start_thread");
    // A walk that stopped inside the library says nothing of who took it.
    EXPECT_EQ(first_caller({frame("__lll_lock_wait", kLibc), frame("pthread_mutex_lock", kLibc)}), "");
}

TEST(UserWaitClassify, APiFutexIsALockWhateverTheStackSays)
{
    // glibc's PTHREAD_PRIO_INHERIT mutex: through __pthread_mutex_lock_full.
    const auto glibc =
        classify_pi(classify({frame("__pthread_mutex_lock_full", kLibc), frame("update_cache()", kProgram)}));
    EXPECT_EQ(glibc.wait_class, WaitClass::lock);
    EXPECT_EQ(glibc.kind, "pthread_mutex_pi");
    // A program's own FUTEX_LOCK_PI (perf bench futex lock-pi), or a stack
    // that says nothing, or one a condition variable would claim.
    for (const auto& stack : {std::vector<UserFrame>{frame("syscall", kLibc), frame("workerfn", kProgram)},
                              std::vector<UserFrame>{}, std::vector<UserFrame>{frame("pthread_cond_wait", kLibc)}}) {
        const auto own = classify_pi(classify(stack));
        EXPECT_EQ(own.wait_class, WaitClass::lock);
        EXPECT_EQ(own.kind, "futex_pi");
    }
}

}  // namespace
