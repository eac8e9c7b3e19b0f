// A lock in a binary's data is named by its symbol, one on the heap by none:
// looked up in this test's own process, so no privileges are needed.
#include <pthread.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <memory>

#include "identity/user_data_symbols.h"

pthread_mutex_t g_zeroed_lock;                                                // .bss
pthread_mutex_t g_initialised_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;  // .data

namespace {

using lockscope::userlock::DataSymbols;

TEST(UserLockDataSymbols, ALockInBssOrDataIsNamedByItsSymbolAnywhereInside)
{
    DataSymbols symbols;
    const auto bss = symbols.lookup(getpid(), reinterpret_cast<uint64_t>(&g_zeroed_lock));
    ASSERT_TRUE(bss.has_value());
    EXPECT_EQ(bss->symbol, "g_zeroed_lock");
    EXPECT_EQ(bss->module, "userlock_data_symbols_test");
    // An rwlock's waiters sleep on words inside it, not at its start.
    const auto inside = symbols.lookup(getpid(), reinterpret_cast<uint64_t>(&g_initialised_lock) + 8);
    ASSERT_TRUE(inside.has_value());
    EXPECT_EQ(inside->symbol, "g_initialised_lock");
}

TEST(UserLockDataSymbols, AHeapLockHasNoSymbol)
{
    DataSymbols symbols;
    auto heap = std::make_unique<pthread_mutex_t>();
    EXPECT_FALSE(symbols.lookup(getpid(), reinterpret_cast<uint64_t>(heap.get())).has_value());
}

}  // namespace
