// User locks by instance: each futex word of a lock row is stored with its
// part of the row's waits, read back, and is a row of its own under report
// --by instance (its process and address; a word in shared memory one row
// over the processes that map it); by lock, the rows stay one per name.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/analysis/report.h"
#include "core/render/export.h"
#include "core/storage/session_store.h"
#include "sample_session.h"

using namespace lockscope;
using lockscope::testing::TempDir;

namespace {

UserLockRow lock_row(int64_t run, uint32_t pid, const char* name, uint64_t waits)
{
    UserLockRow row{{.name = name,
                     .name_source = "user-caller",
                     .kind = "pthread_mutex",
                     .caller = "Table::update",
                     .waits = waits,
                     .wait_ns = waits * 1000,
                     .max_wait_ns = 50'000,
                     .samples = waits / 16}};
    row.run = run;
    row.pid = pid;
    return row;
}

UserLockInstance word(int64_t run, uint32_t pid, const char* name, uint64_t address, const char* shared, uint64_t waits)
{
    UserLockInstance w{{.name = name, .kind = "pthread_mutex", .waits = waits, .wait_ns = waits * 1000}};
    w.max_wait_ns = 50'000;
    w.run = run;
    w.pid = pid;
    w.address = address;
    w.shared = shared;
    return w;
}

// Process 10's Table::update has two heap words; processes 20 and 30 share
// one mutex in shared memory.
std::string write_with_instances(const TempDir& dir)
{
    const std::string path = dir.file("instances.lockscope");
    lockscope::testing::write_one_run(path, [](IntervalBatch& b, int64_t run) {
        b.user_locks = {lock_row(run, 10, "pthread_mutex@Table::update", 300),
                        lock_row(run, 20, "pthread_mutex@run", 70), lock_row(run, 30, "pthread_mutex@run", 30)};
        b.user_lock_instances = {word(run, 10, "pthread_mutex@Table::update", 0x1000, "", 100),
                                 word(run, 10, "pthread_mutex@Table::update", 0x2000, "", 200),
                                 word(run, 20, "pthread_mutex@run", 0x7000, "00:01:7+0x0", 70),
                                 word(run, 30, "pthread_mutex@run", 0x9000, "00:01:7+0x0", 30)};
        b.user_lock_runs.push_back({.run = run, .status = "recorded", .pids = "10 20 30"});
    });
    return path;
}

// name [instance] -> waits
std::map<std::string, uint64_t> rows_of(const UserLockReport& u)
{
    std::map<std::string, uint64_t> out;
    for (const UserLockReportRow& r : u.rows) {
        std::string pids;
        for (uint32_t pid : r.pids)
            pids += " " + std::to_string(pid);
        out[r.name + (r.shared.empty() ? "" : " " + r.shared) + (r.address ? " @" + std::to_string(r.address) : "") +
            pids] = r.waits;
    }
    return out;
}

TEST(UserLockInstances, ByInstanceEachWordIsARowAndASharedWordIsOneOverItsProcesses)
{
    TempDir dir;
    const Session s = load_session(write_with_instances(dir));
    EXPECT_TRUE(s.warnings.empty());
    ASSERT_EQ(s.user_lock_instances.size(), 4u);
    EXPECT_EQ(s.user_lock_instances[1].address, 0x2000u);
    EXPECT_EQ(s.user_lock_instances[1].waits, 200u);

    EXPECT_EQ(rows_of(user_lock_report(s, std::nullopt, 0, true)),
              (std::map<std::string, uint64_t>{{"pthread_mutex@Table::update @4096 10", 100},
                                               {"pthread_mutex@Table::update @8192 10", 200},
                                               {"pthread_mutex@run 00:01:7+0x0 20 30", 100}}));
    EXPECT_EQ(
        rows_of(user_lock_report(s, std::nullopt, 0, false)),
        (std::map<std::string, uint64_t>{{"pthread_mutex@Table::update 10", 300}, {"pthread_mutex@run 20 30", 100}}));
}

TEST(UserLockInstances, TextAndJsonNameAnInstanceByItsProcessAndAddressOrItsSharedPlace)
{
    TempDir dir;
    ReportOptions o;
    o.top = 0;
    o.scope = LockScope::User;
    o.by = GroupBy::Instance;
    const Report rep = build_report(load_session(write_with_instances(dir)), o);
    const std::string text = format_text(rep, {.full_names = true});
    EXPECT_NE(text.find("pthread_mutex@Table::update [pid 10 0x2000]"), std::string::npos) << text;
    EXPECT_NE(text.find("pthread_mutex@run [shared 00:01:7+0x0]"), std::string::npos) << text;
}

}  // namespace
