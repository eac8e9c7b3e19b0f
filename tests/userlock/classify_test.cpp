// Lock waits told from other futex waits, and locks named, from unwound
// stacks built by hand as glibc 2.36 and libstdc++ lay them out.
#include <gtest/gtest.h>

#include "userlock/classify.h"

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

TEST(UserLockNames, FramesInNoFileAreSkippedAndAnUnnamedCallerIsNoName)
{
    EXPECT_EQ(first_caller({frame("pthread_mutex_lock", kLibc), frame("", "")}), "");
    EXPECT_EQ(first_caller({frame("pthread_mutex_lock", kLibc), frame("", kProgram)}), "");
}

}  // namespace
