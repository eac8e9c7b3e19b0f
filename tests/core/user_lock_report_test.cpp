// User-space locks in a session file: stored with a run's last interval,
// read back, shown after the kernel's table (text, JSON, CSV) and filtered
// by --scope; a file written before the user-lock tables existed loads
// as it did, without a warning or a user-lock section.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>

#include "core/analysis/report.h"
#include "core/analysis/user_code.h"
#include "core/render/export.h"
#include "core/storage/session_store.h"
#include "sample_session.h"

using namespace lockscope;
using lockscope::testing::TempDir;

namespace {

UserLockRow row(int64_t run, const char* name, const char* kind, const char* caller, uint64_t waits, uint64_t wait_ns,
                uint64_t max_wait_ns, const char* owners)
{
    UserLockRow row{{.name = name,
                     .name_source = "user-symbol",
                     .module = "app",
                     .kind = kind,
                     .caller = caller,
                     .waits = waits,
                     .wait_ns = wait_ns,
                     .max_wait_ns = max_wait_ns,
                     .samples = waits / 16,
                     .oncpu_ns = wait_ns / 10,
                     .asleep_ns = wait_ns / 10 * 6,
                     .runnable_ns = wait_ns - wait_ns / 10 - wait_ns / 10 * 6,
                     .wakes = waits / 2}};
    row.hist[10] = waits - waits / 4;  // 1-2 µs
    row.hist[16] = waits / 4;          // 65-131 µs
    row.run = run;
    row.pid = 4242;
    row.owner_tids = owners;
    row.ops = "FUTEX_WAIT_BITSET";
    return row;
}

void add_user_locks(IntervalBatch& b, int64_t run)
{
    b.user_locks.push_back(
        row(run, "g_cache_lock", "pthread_mutex", "update_cache", 1000, 50'000'000, 900'000, "4243 4244"));
    b.user_locks.push_back(row(run, "g_table_lock", "pthread_rwlock/r", "lookup_table", 10, 1'000'000, 200'000, ""));
    b.user_lock_wakers.push_back({.run = run,
                                  .pid = 4242,
                                  .name = "g_cache_lock",
                                  .kind = "pthread_mutex",
                                  .waker_tid = 4243,
                                  .waker_pid = 4242,
                                  .waker_comm = "worker-1",
                                  .wakes = 300});
    b.user_lock_wakers.push_back({.run = run,
                                  .pid = 4242,
                                  .name = "g_cache_lock",
                                  .kind = "pthread_mutex",
                                  .waker_tid = 4244,
                                  .waker_pid = 4242,
                                  .waker_comm = "worker-2",
                                  .wakes = 200});
    // Two sampled stacks of g_cache_lock, innermost first, 3:1 in wait.
    b.user_lock_stacks.push_back({.run = run,
                                  .pid = 4242,
                                  .name = "g_cache_lock",
                                  .kind = "pthread_mutex",
                                  .frames = {"__lll_lock_wait", "update_cache", "worker"},
                                  .samples = 40,
                                  .wait_ns = 3'000'000});
    b.user_lock_stacks.push_back({.run = run,
                                  .pid = 4242,
                                  .name = "g_cache_lock",
                                  .kind = "pthread_mutex",
                                  .frames = {"__lll_lock_wait", "flush_cache", "worker"},
                                  .samples = 20,
                                  .wait_ns = 1'000'000});
    b.user_lock_left_out.push_back({.run = run, .reason = "condition", .addresses = 1, .waits = 77});
    b.user_lock_runs.push_back(
        {.run = run, .status = "recorded", .pids = "4242", .samples = 75, .samples_unwound = 75});
    // g_cache_lock's owner was seen waiting for lock_3 (a kernel rwsem,
    // whose own holder was asleep) in 40 of its waits.
    b.user_lock_chains.push_back({.run = run,
                                  .pid = 4242,
                                  .name = "g_cache_lock",
                                  .kind = "pthread_mutex",
                                  .kernel_lock_id = 3,
                                  .kernel_mode = "write",
                                  .waits = 40,
                                  .wait_ns = 30'000'000,
                                  .max_wait_ns = 900'000,
                                  .owner_tids = "4243",
                                  .root_tids = "4250",
                                  .root_states = "running:2 sleeping:38"});
}

// One run of two intervals, its user locks given with the last, as record does.
std::string write_with_user_locks(const TempDir& dir)
{
    const std::string path = dir.file("user.lockscope");
    auto w = SessionWriter::create(path, false);
    w.set_meta(lockscope::testing::sample_meta());
    const int64_t run = w.begin_run("run", 1'000'000'000ull);
    IntervalBatch first = lockscope::testing::sample_batch(run, 0, 3);
    w.write_interval(first);
    IntervalBatch last = lockscope::testing::sample_batch(run, 1, 3);
    last.new_locks.clear();
    add_user_locks(last, run);
    w.write_interval(last);
    lockscope::testing::end_run_complete(w, last);
    w.close();
    return path;
}

Report report_of(const Session& s, LockScope scope)
{
    ReportOptions o;
    o.top = 0;
    o.scope = scope;
    return build_report(s, o);
}

TEST(UserLockReport, RowsComeBackFromTheFileWithTheirNamesKindsAndWaits)
{
    TempDir dir;
    const Session s = load_session(write_with_user_locks(dir));
    EXPECT_TRUE(s.warnings.empty());
    ASSERT_EQ(s.user_locks.size(), 2u);
    EXPECT_EQ(s.user_locks[0].name, "g_cache_lock");
    EXPECT_EQ(s.user_locks[0].pid, 4242u);
    EXPECT_EQ(s.user_locks[0].waits, 1000u);
    EXPECT_EQ(s.user_locks[0].owner_tids, "4243 4244");
    ASSERT_EQ(s.user_lock_left_out.size(), 1u);
    EXPECT_EQ(s.user_lock_left_out[0].waits, 77u);
    ASSERT_EQ(s.user_lock_runs.size(), 1u);
    EXPECT_EQ(s.user_lock_runs[0].status, "recorded");
}

TEST(UserLockReport, AChainIntoAKernelLockComesBackAndLeadsTheReportsChainsInItsScope)
{
    TempDir dir;
    const Session s = load_session(write_with_user_locks(dir));
    ASSERT_EQ(s.user_lock_chains.size(), 1u);
    EXPECT_EQ(s.user_lock_chains[0].kernel_lock_id, 3);
    EXPECT_EQ(s.user_lock_chains[0].root_states, "running:2 sleeping:38");

    const Report all = report_of(s, LockScope::All);
    const auto user = std::find_if(all.chains.begin(), all.chains.end(), [](const Chain& c) { return c.from_user; });
    ASSERT_NE(user, all.chains.end());
    EXPECT_EQ(user->locks, (std::vector<std::string>{"g_cache_lock (user pthread_mutex)", "lock_3"}));
    EXPECT_EQ(user->samples, 40u);
    EXPECT_EQ(user->wait_ns, 30'000'000u);
    // The sample session has no holder samples of lock_3: the waiters' view of its holder decides.
    EXPECT_EQ(user->root.state, "sleeping");

    ReportOptions chains;
    chains.top = 0;
    chains.chains = true;
    const std::string text = format_text(build_report(s, chains), {.full_names = true});
    EXPECT_NE(text.find("40 waits    g_cache_lock (user pthread_mutex) -> lock_3"), std::string::npos) << text;
    const nlohmann::json j = nlohmann::json::parse(format_json(all));
    bool user_scope = false;
    for (const auto& c : j["chains"])
        user_scope = user_scope || c["scope"] == "user";
    EXPECT_TRUE(user_scope) << j["chains"].dump();

    auto user_chains = [](const Report& r) {
        return std::count_if(r.chains.begin(), r.chains.end(), [](const Chain& c) { return c.from_user; });
    };
    EXPECT_EQ(user_chains(report_of(s, LockScope::Kernel)), 0);
    const Report user_only = report_of(s, LockScope::User);
    EXPECT_EQ(user_chains(user_only), 1);
    EXPECT_EQ(user_only.chains.size(), 1u);
}

TEST(UserLockReport, TextShowsUserLocksAfterTheKernelTableAndTheLeftOutLine)
{
    TempDir dir;
    const Session s = load_session(write_with_user_locks(dir));
    const std::string all = format_text(report_of(s, LockScope::All), {.full_names = true});
    const auto kernel_table = all.find("lock_3");
    const auto user = all.find("user-space locks of process 4242");
    ASSERT_NE(user, std::string::npos) << all;
    EXPECT_LT(kernel_table, user) << all;
    EXPECT_NE(all.find("pthread_rwlock/r"), std::string::npos) << all;
    EXPECT_NE(all.find("left out: 77 condition-variable waits, 0 semaphore waits"), std::string::npos) << all;

    const std::string kernel = format_text(report_of(s, LockScope::Kernel), {.full_names = true});
    EXPECT_EQ(kernel.find("g_cache_lock"), std::string::npos) << kernel;
    EXPECT_EQ(kernel + "\n", all.substr(0, user)) << "the kernel's part is the same with and without user locks";

    const std::string only_user = format_text(report_of(s, LockScope::User), {.full_names = true});
    EXPECT_NE(only_user.find("g_cache_lock"), std::string::npos) << only_user;
    EXPECT_EQ(only_user.find("lock_3"), std::string::npos) << only_user;
}

TEST(UserLockReport, JsonRowsHaveScopeUserAndKernelKeysStayAsTheyWere)
{
    TempDir dir;
    const Session s = load_session(write_with_user_locks(dir));
    const auto j = nlohmann::json::parse(format_json(report_of(s, LockScope::All)));
    ASSERT_TRUE(j.contains("user_locks"));
    const auto& rows = j["user_locks"]["rows"];
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0]["scope"], "user");
    EXPECT_EQ(rows[0]["name"], "g_cache_lock");
    EXPECT_EQ(rows[0]["waits"], 1000);
    EXPECT_EQ(rows[0]["mean_wait_ns"], 50000.0);
    EXPECT_EQ(j["user_locks"]["left_out"]["condition"]["waits"], 77);
    EXPECT_FALSE(j["locks"].empty());
    EXPECT_FALSE(j["locks"][0].contains("scope"));

    const auto kernel = nlohmann::json::parse(format_json(report_of(s, LockScope::Kernel)));
    EXPECT_FALSE(kernel.contains("user_locks"));
    const auto user = nlohmann::json::parse(format_json(report_of(s, LockScope::User)));
    EXPECT_TRUE(user["locks"].empty());
    EXPECT_EQ(user["user_locks"]["rows"].size(), 2u);
}

TEST(UserLockReport, CsvOfUserLocksHasOneLinePerRow)
{
    TempDir dir;
    const Session s = load_session(write_with_user_locks(dir));
    const std::string csv = format_user_locks_csv(report_of(s, LockScope::User));
    EXPECT_EQ(csv.rfind("scope,name,kind,", 0), 0u) << csv;
    EXPECT_NE(csv.find("user,g_cache_lock,pthread_mutex,user-symbol,app,update_cache,4242,1000,50000000,900000,50000,"),
              std::string::npos)
        << csv;
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3);
}

void exec(const std::string& path, const char* sql)
{
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);
}

// What a version-5 file lacks: the wait's parts, wakes, the histogram and the wakers.
constexpr const char* kToVersion5 =
    "ALTER TABLE user_locks DROP COLUMN oncpu_ns; ALTER TABLE user_locks DROP COLUMN asleep_ns; "
    "ALTER TABLE user_locks DROP COLUMN runnable_ns; ALTER TABLE user_locks DROP COLUMN wakes; "
    "ALTER TABLE user_locks DROP COLUMN hist; ALTER TABLE user_lock_runs DROP COLUMN lost_wakers; "
    "DROP TABLE user_lock_wakers; DROP TABLE user_lock_stacks; PRAGMA user_version = 5; UPDATE meta SET value = '5' "
    "WHERE key = 'schema_version';";

TEST(UserLockReport, TheWaitsPartsWakesAndWakersComeBackAndAddUp)
{
    TempDir dir;
    const Session s = load_session(write_with_user_locks(dir));
    EXPECT_TRUE(s.warnings.empty());
    ASSERT_EQ(s.user_locks.size(), 2u);
    const UserLockRow& cache = s.user_locks[0];
    EXPECT_EQ(cache.oncpu_ns + cache.asleep_ns + cache.runnable_ns, cache.wait_ns);
    EXPECT_EQ(cache.hist[10] + cache.hist[16], cache.waits);
    ASSERT_EQ(s.user_lock_wakers.size(), 2u);
    EXPECT_EQ(s.user_lock_wakers[0].waker_comm, "worker-1");

    const Report rep = report_of(s, LockScope::User);
    const std::string text = format_text(rep, {.full_names = true});
    // The kernel table's columns: no spin phase, the wait on a CPU in que%.
    EXPECT_NE(text.find("spin% que% slp% run%"), std::string::npos) << text;
    EXPECT_NE(text.find("update_cache   1,000     - 50.0 ms 50.0 µs  900 µs     -  10%  60%  30%"), std::string::npos)
        << text;
    EXPECT_NE(text.find("g_cache_lock (pthread_mutex): 500 of 1,000 waits woken, by 2 threads: 4243 worker-1 60%,"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("worker-2 40%"), std::string::npos) << text;
    const auto j = nlohmann::json::parse(format_json(rep));
    for (const auto& row : j["user_locks"]["rows"]) {
        EXPECT_EQ(
            row["oncpu_ns"].get<uint64_t>() + row["asleep_ns"].get<uint64_t>() + row["runnable_ns"].get<uint64_t>(),
            row["wait_ns"].get<uint64_t>())
            << row.dump();
        EXPECT_EQ(row["hist"].size(), size_t(lockscope::kHistBuckets));
    }
    EXPECT_EQ(j["user_locks"]["rows"][0]["wakers"][0]["comm"], "worker-1");
    EXPECT_EQ(j["user_locks"]["rows"][0]["wakers"][0]["wakes"], 300);
    EXPECT_TRUE(j["user_locks"]["split"].get<bool>());
}

// A file of format 5 has user locks without their wait's parts: they load,
// and the report says the wait is not split rather than showing 0%.
TEST(UserLockReport, AVersion5FilesUserLocksLoadWithTheirWaitNotSplit)
{
    TempDir dir;
    const std::string path = write_with_user_locks(dir);
    exec(path, kToVersion5);
    const Session s = load_session(path);
    EXPECT_TRUE(s.warnings.empty()) << s.warnings.front();
    EXPECT_EQ(s.schema_version, 5);
    ASSERT_EQ(s.user_locks.size(), 2u);
    EXPECT_EQ(s.user_locks[0].waits, 1000u);
    EXPECT_EQ(s.user_locks[0].asleep_ns, 0u);
    const Report rep = report_of(s, LockScope::User);
    const std::string text = format_text(rep, {.full_names = true});
    EXPECT_NE(text.find("update_cache   1,000     - 50.0 ms 50.0 µs  900 µs     -    -    -    -"), std::string::npos)
        << text;
    EXPECT_NE(text.find("not split in this session's format"), std::string::npos) << text;
    const auto j = nlohmann::json::parse(format_json(rep));
    EXPECT_TRUE(j["user_locks"]["rows"][0]["asleep_ns"].is_null());
    EXPECT_FALSE(j["user_locks"]["split"].get<bool>());
}

// A file from before the user-lock tables: version 5, no such tables.
TEST(UserLockReport, AFileWithoutTheTablesLoadsQuietlyWithNoUserSection)
{
    TempDir dir;
    const std::string path = dir.file("old.lockscope");
    lockscope::testing::write_sample(path, 1, 2, 3);
    exec(path, kToVersion5);
    exec(path,
         "DROP TABLE user_locks; DROP TABLE user_lock_left_out; DROP TABLE user_lock_runs; "
         "DROP TABLE user_lock_chains;");
    const Session s = load_session(path);
    EXPECT_TRUE(s.warnings.empty()) << s.warnings.front();
    EXPECT_EQ(s.locks.size(), 3u);
    const Report rep = report_of(s, LockScope::All);
    EXPECT_EQ(format_text(rep).find("user-space"), std::string::npos);
    EXPECT_FALSE(nlohmann::json::parse(format_json(rep)).contains("user_locks"));
}

}  // namespace

namespace {

// Folded lines per stack: "root;frame;... weight".
std::map<std::string, uint64_t> folded(const Session& s, lockscope::FoldedWeight weight)
{
    std::ostringstream out;
    lockscope::export_folded(s, weight, out);
    std::map<std::string, uint64_t> lines;
    std::istringstream in(out.str());
    for (std::string line; std::getline(in, line);) {
        const auto space = line.rfind(' ');
        lines[line.substr(0, space)] = std::stoull(line.substr(space + 1));
    }
    return lines;
}

}  // namespace

// export --format folded: a user lock's sampled stacks under a root that
// says it is a user lock, root first, weighted so that they add up to its
// exact wait (or waits), as the kernel locks' do; one without stacks is one
// "[no stack sampled]" line.
TEST(UserLockReport, FoldedStacksOfAUserLockAddUpToItsWaitUnderAUserRoot)
{
    TempDir dir;
    const Session s = load_session(write_with_user_locks(dir));
    ASSERT_EQ(s.user_lock_stacks.size(), 2u);
    EXPECT_EQ(s.user_lock_stacks[0].frames, (std::vector<std::string>{"__lll_lock_wait", "update_cache", "worker"}));
    const auto by_wait = folded(s, lockscope::FoldedWeight::WaitNs);
    EXPECT_EQ(by_wait.at("g_cache_lock [user pthread_mutex];worker;update_cache;__lll_lock_wait"), 37'500'000u);
    EXPECT_EQ(by_wait.at("g_cache_lock [user pthread_mutex];worker;flush_cache;__lll_lock_wait"), 12'500'000u);
    EXPECT_EQ(by_wait.at("g_table_lock [user pthread_rwlock/r];[no stack sampled]"), 1'000'000u);
    const auto by_count = folded(s, lockscope::FoldedWeight::Contentions);
    EXPECT_EQ(by_count.at("g_cache_lock [user pthread_mutex];worker;update_cache;__lll_lock_wait") +
                  by_count.at("g_cache_lock [user pthread_mutex];worker;flush_cache;__lll_lock_wait"),
              1000u);
    // The kernel's locks are there as before, under their own roots.
    EXPECT_TRUE(std::any_of(by_wait.begin(), by_wait.end(),
                            [](const auto& line) { return line.first.rfind("lock_3 [", 0) == 0; }));
}

namespace {

// Lock 2's waiter stack in the sample session's last interval, and two user
// stacks sampled above it, 3:1 in wait.
const std::vector<std::string> kPipeWaiter = {"__mutex_lock.constprop.0+0x102", "pipe_write+0x54", "vfs_write+0x2a1"};

std::string write_with_kernel_user_stacks(const TempDir& dir)
{
    const std::string path = dir.file("mixed.lockscope");
    auto w = SessionWriter::create(path, false);
    w.set_meta(lockscope::testing::sample_meta());
    const int64_t run = w.begin_run("run", 1'000'000'000ull);
    w.write_interval(lockscope::testing::sample_batch(run, 0, 3));
    IntervalBatch last = lockscope::testing::sample_batch(run, 1, 3);
    last.new_locks.clear();
    last.kernel_user_stacks.push_back({.run = run,
                                       .lock_id = 2,
                                       .pid = 4242,
                                       .kernel_frames = kPipeWaiter,
                                       .frames = {"__libc_write", "writer_loop", "main"},
                                       .samples = 3,
                                       .wait_ns = 2700});
    last.kernel_user_stacks.push_back({.run = run,
                                       .lock_id = 2,
                                       .pid = 4242,
                                       .kernel_frames = kPipeWaiter,
                                       .frames = {"__libc_write", "flush_log", "main"},
                                       .samples = 1,
                                       .wait_ns = 900});
    w.write_interval(last);
    lockscope::testing::end_run_complete(w, last);
    w.close();
    return path;
}

}  // namespace

// A kernel lock's waiter stack continues into the waiters' own code where
// their user stacks were sampled: in the folded export the kernel stack's
// share is split among its user stacks (3:1 here), root first, then the user
// frames, then the kernel's, and the lock's lines still add up to its wait.
TEST(KernelUserStacks, FoldedKernelStacksContinueIntoTheWaitersUserCodeAndStillAddUp)
{
    TempDir dir;
    const Session s = load_session(write_with_kernel_user_stacks(dir));
    ASSERT_EQ(s.kernel_user_stacks.size(), 2u);
    EXPECT_EQ(s.kernel_user_stacks[0].kernel_frames, kPipeWaiter);
    uint64_t lock2_wait = 0;
    for (const LockInterval& li : s.lock_intervals)
        if (li.lock_id == 2)
            lock2_wait += li.counters.wait_ns;
    const auto by_wait = folded(s, lockscope::FoldedWeight::WaitNs);
    const std::string kernel = ";vfs_write;pipe_write;__mutex_lock.constprop.0";
    const uint64_t writer = by_wait.at("pipe->mutex [mutex];main;writer_loop;__libc_write" + kernel);
    const uint64_t flush = by_wait.at("pipe->mutex [mutex];main;flush_log;__libc_write" + kernel);
    EXPECT_EQ(writer + flush, lock2_wait);
    EXPECT_NEAR(double(writer) / double(lock2_wait), 0.75, 0.001);
    // Lock 1's stack had no user stack sampled: kernel frames alone.
    EXPECT_TRUE(by_wait.count("pipe->mutex [mutex]" + kernel)) << "lock 1's kernel-only line is missing";
}

// The report shows the user code above a lock's waits (text and JSON),
// with shares of the sampled wait.
TEST(KernelUserStacks, ReportShowsTheWaitersUserCodePerLock)
{
    TempDir dir;
    const Session s = load_session(write_with_kernel_user_stacks(dir));
    const Report rep = report_of(s, LockScope::All);
    const std::string text = format_text(rep, {.full_names = true});
    EXPECT_NE(text.find("user code:"), std::string::npos) << text;
    EXPECT_NE(text.find("75%  __libc_write <- writer_loop <- main"), std::string::npos) << text;
    const auto j = nlohmann::json::parse(format_json(rep));
    bool found = false;
    for (const auto& row : j["locks"]) {
        if (row["user_code"].empty())
            continue;
        found = true;
        EXPECT_EQ(row["user_code_samples"], 4);
        EXPECT_EQ(row["user_code"][0]["stack"][1], "writer_loop");
        EXPECT_DOUBLE_EQ(row["user_code"][0]["share"].get<double>(), 0.75);
    }
    EXPECT_TRUE(found) << j["locks"].dump(1);
}

// Summaries shorten a demangled C++ frame to its function's qualified name.
TEST(KernelUserStacks, ShortUserFramesDropParametersAndAnonymousNamespaces)
{
    EXPECT_EQ(lockscope::short_user_frame("(anonymous namespace)::write_under_mutex(int)"), "write_under_mutex");
    EXPECT_EQ(lockscope::short_user_frame("Cache::get(std::pair<int, int> const&) const"), "Cache::get");
    EXPECT_EQ(lockscope::short_user_frame("__libc_pwrite"), "__libc_pwrite");
    EXPECT_EQ(lockscope::short_user_frame("[libstdc++.so.6.0.30+0xd44a3]"), "[libstdc++.so.6.0.30+0xd44a3]");
}
