// User locks in programs nobody here wrote, as Debian ships them, recorded
// with `lockscope record -- CMD` and counted against an independent
// observer of their futex calls (futex_calls.bpf.c):
//  - perf bench futex lock-pi: its PI futex's waits, every FUTEX_LOCK_PI
//    call (each one a contended acquisition), named by its place in perf,
//    most of their wait behind a holder the holder split followed;
//  - perf bench futex hash: futex waits that are no lock waits, counted
//    and reported as such;
//  - sysbench mutex (stripped): its heap mutex named by its place;
//  - stress-ng's mutex stressor (stripped): four processes, each with its
//    own mutex in the binary's .bss, four locks by instance, none unknown,
//    also when the stressors' real-time threads keep the recorder from
//    reading their samples until they have exited;
//  - processes forked without exec whose samples are read after they
//    exited: unwound and named with their parent's maps;
//  - a program of ours stripped the same way: its locks named by place, and
//    by their symbols once its debug file is beside it; its two heap mutexes
//    of one name two instances; a mutex in shared memory one lock over the
//    processes that take it.
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "futex_calls_bpf.skel.h"
#include "subprocess.h"
#include "test_program.h"
#include "probe/user_probe.h"

namespace {

namespace fs = std::filesystem;
namespace test = lockscope::test;

struct Calls {
    uint64_t pi_calls = 0, pi_slept = 0, wait_calls = 0;

    Calls& operator+=(const Calls& other)
    {
        pi_calls += other.pi_calls;
        pi_slept += other.pi_slept;
        wait_calls += other.wait_calls;
        return *this;
    }
};

using Word = std::pair<uint32_t, uint64_t>;  // (process, futex address)

// Counts every process's futex calls, per futex word, from construction to stop().
class FutexCalls {
public:
    FutexCalls()
    {
        skel_ = futex_calls_bpf::open();
        if (skel_ == nullptr) {
            return;
        }
        skel_->rodata->observed_syscall = SYS_futex;
        if (futex_calls_bpf::load(skel_) != 0 || futex_calls_bpf::attach(skel_) != 0) {
            futex_calls_bpf::destroy(skel_);
            skel_ = nullptr;
        }
    }
    ~FutexCalls() { futex_calls_bpf::destroy(skel_); }
    bool ok() const { return skel_ != nullptr; }
    std::map<Word, Calls> stop()
    {
        std::map<Word, Calls> out;
        futex_calls_bpf::detach(skel_);
        const int fd = bpf_map__fd(skel_->maps.per_word);
        struct {
            uint32_t tgid, pad;
            uint64_t uaddr;
        } key{}, *previous = nullptr;
        while (bpf_map_get_next_key(fd, previous, &key) == 0) {
            uint64_t value[3] = {};
            if (bpf_map_lookup_elem(fd, &key, value) == 0) {
                out[{key.tgid, key.uaddr}] = {value[0], value[1], value[2]};
            }
            previous = &key;
        }
        return out;
    }

private:
    futex_calls_bpf* skel_ = nullptr;
};

struct Recorded {
    std::string failure;
    std::string file;
    std::map<Word, Calls> words;         // as the observer counted them
    std::map<uint32_t, Calls> observed;  // the same per process
};

Recorded record(const std::string& name, const std::vector<std::string>& command, bool realtime = false)
{
    Recorded r;
    r.file = test::temp_path(name + ".lockscope");
    FutexCalls calls;
    if (!calls.ok()) {
        r.failure = "cannot load the futex-call observer";
        return r;
    }
    std::vector<std::string> args = {"record", "-o", r.file};
    if (realtime) {
        args.insert(args.end(), {"--realtime", "99"});
    }
    args.push_back("--");
    args.insert(args.end(), command.begin(), command.end());
    const test::Finished f = test::run_lockscope(args, 120);
    r.words = calls.stop();
    for (const auto& [word, counted] : r.words) {
        r.observed[word.first] += counted;
    }
    if (f.exit_code != 0) {
        r.failure = "lockscope record failed: " + f.err;
    }
    return r;
}

nlohmann::json user_locks(const std::string& file, const std::vector<std::string>& options = {})
{
    std::vector<std::string> args = {"report", file, "--scope", "user", "--format", "json", "-E", "0"};
    args.insert(args.end(), options.begin(), options.end());
    const test::Finished f = test::run_lockscope(args);
    EXPECT_EQ(f.exit_code, 0) << f.err;
    return f.exit_code == 0 ? nlohmann::json::parse(f.out)["user_locks"] : nlohmann::json::object();
}

// The observer's counts on the futex word of a row by instance (one
// process, its address); nullptr when it saw no call there.
const Calls* observed_on(const Recorded& r, const nlohmann::json& row)
{
    if (row["pids"].size() != 1 || row["address"] == "") {
        return nullptr;
    }
    const Word word{row["pids"][0].get<uint32_t>(), std::stoull(row["address"].get<std::string>(), nullptr, 16)};
    const auto found = r.words.find(word);
    return found != r.words.end() ? &found->second : nullptr;
}

void expect_within_2_percent(uint64_t recorded, uint64_t observed, const std::string& what)
{
    std::printf("%s: recorded %llu, observed %llu\n", what.c_str(), static_cast<unsigned long long>(recorded),
                static_cast<unsigned long long>(observed));
    ASSERT_GE(observed, 100u) << what << ": too few for the comparison to mean anything";
    const double off = std::abs(double(recorded) - double(observed)) / double(observed);
    EXPECT_LE(off, 0.02) << what << ": recorded " << recorded << ", observed " << observed;
}

class ProgramsUserLocks : public testing::Test {
protected:
    void SetUp() override
    {
        if (geteuid() != 0) {
            GTEST_SKIP() << "needs root to load BPF programs and read another process's maps";
        }
    }
};

TEST_F(ProgramsUserLocks, PerfBenchLockPiWaitsAreEveryLockPiCallOfItsPiFutex)
{
    const Recorded r = record("lock-pi", {"perf", "bench", "futex", "lock-pi", "-t", "4", "-r", "2"});
    ASSERT_EQ(r.failure, "");
    const nlohmann::json u = user_locks(r.file);
    uint64_t waits = 0;
    std::set<uint32_t> pids;
    for (const auto& row : u["rows"]) {
        if (row["kind"] != "futex_pi") {
            continue;
        }
        waits += row["waits"].get<uint64_t>();
        EXPECT_EQ(row["name"].get<std::string>().find("unknown"), std::string::npos) << row.dump();
        // perf's futex is a global of its .bss, and perf is stripped.
        EXPECT_EQ(row["name"].get<std::string>().rfind("perf:.bss+0x", 0), 0u) << row.dump();
        EXPECT_EQ(row["name_source"], "user-section") << row.dump();
        EXPECT_FALSE(row["owner_tids"].empty()) << "the owner comes from the futex word: " << row.dump();
        // The holder split follows the lock from holder to holder (a PI
        // unlock hands it to the waiter it wakes): the parts add up to the
        // wait, and most of it is behind a known holder, one of perf's
        // threads (the rest is before each sleep and after each wakeup).
        const uint64_t wait = row["wait_ns"], known = row["holder_running_ns"].get<uint64_t>() +
                                                      row["holder_runnable_ns"].get<uint64_t>() +
                                                      row["holder_asleep_ns"].get<uint64_t>();
        EXPECT_EQ(known + row["holder_unknown_ns"].get<uint64_t>(), wait) << row.dump();
        EXPECT_GT(known, wait / 2) << row.dump();
        ASSERT_FALSE(row["holder_split"]["holders"].empty()) << row.dump();
        EXPECT_EQ(row["holder_split"]["holders"][0]["comm"], "futex-lock-pi") << row.dump();
        for (uint32_t pid : row["pids"]) {
            pids.insert(pid);
        }
    }
    ASSERT_EQ(pids.size(), 1u) << u.dump();
    const auto observed = r.observed.find(*pids.begin());
    ASSERT_NE(observed, r.observed.end()) << "the observer saw no FUTEX_LOCK_PI call of process " << *pids.begin();
    std::printf("FUTEX_LOCK_PI calls that slept: %llu\n", static_cast<unsigned long long>(observed->second.pi_slept));
    expect_within_2_percent(waits, observed->second.pi_calls, "PI lock waits against FUTEX_LOCK_PI calls");
}

// perf bench futex hash: FUTEX_WAITs on private futex words that hold no
// lock (each returns at once: the word never has the value waited for).
// Counted, every one, and reported as futex waits that are no lock waits
// ("other"), not as locks and not dropped.
TEST_F(ProgramsUserLocks, PerfBenchFutexHashWaitsAreCountedAsOtherFutexWaitsNotLocks)
{
    const Recorded r = record("hash", {"perf", "bench", "futex", "hash", "-t", "4", "-f", "64", "-r", "1"});
    ASSERT_EQ(r.failure, "");
    const nlohmann::json u = user_locks(r.file);
    EXPECT_EQ(u["lost_keys"], 0) << u.dump();
    uint64_t lock_waits = 0, left_out = 0;
    std::set<uint32_t> pids;
    for (const auto& row : u["rows"]) {
        // perf's threads wait for their creator in the C library as they start.
        EXPECT_EQ(row["name"].get<std::string>().find("unknown"), std::string::npos) << row.dump();
        lock_waits += row["waits"].get<uint64_t>();
    }
    for (const auto& [reason, l] : u["left_out"].items()) {
        left_out += l["waits"].get<uint64_t>();
    }
    ASSERT_TRUE(u["left_out"].contains("other")) << u.dump();
    const auto& other = u["left_out"]["other"];
    EXPECT_GE(other["addresses"].get<uint64_t>(), 4u * 64) << "every hashed futex word, each thread's own";
    // perf's process: the one that waited on the most futex words (4 x 64).
    std::map<uint32_t, int> words_of;
    for (const auto& [word, counted] : r.words) {
        words_of[word.first] += counted.wait_calls > 0 ? 1 : 0;
    }
    const auto perf = std::max_element(words_of.begin(), words_of.end(),
                                       [](const auto& a, const auto& b) { return a.second < b.second; });
    ASSERT_NE(perf, words_of.end());
    const uint64_t observed = r.observed.at(perf->first).wait_calls;
    expect_within_2_percent(lock_waits + left_out, observed,
                            "perf's futex waits, locks and left out, against its FUTEX_WAIT calls");
    expect_within_2_percent(other["waits"], observed, "perf's futex waits left out as no lock waits");
}

// sysbench mutex (stripped; its mutexes on the heap): eight threads on one
// mutex, named by the module and offset of the code that takes it (or by
// its function where sysbench's debug file is installed), each word's
// waits those the observer counted on it.
TEST_F(ProgramsUserLocks, SysbenchMutexIsNamedByItsPlaceAndCountedPerWord)
{
    // 3,000,000 locks a thread: about 1 s unrecorded, millions of waits.
    const Recorded r = record("sysbench", {"sysbench", "--threads=8", "mutex", "--mutex-num=1", "--mutex-locks=3000000",
                                           "--mutex-loops=0", "run"});
    ASSERT_EQ(r.failure, "");
    const nlohmann::json u = user_locks(r.file, {"--by", "instance"});
    ASSERT_FALSE(u["rows"].empty()) << u.dump();
    uint64_t waits = 0, observed = 0;
    for (const auto& row : u["rows"]) {
        EXPECT_EQ(row["name"].get<std::string>().find("unknown"), std::string::npos) << row.dump();
        const Calls* calls = observed_on(r, row);
        ASSERT_NE(calls, nullptr) << "the observer saw no futex call on " << row.dump();
        waits += row["waits"].get<uint64_t>();
        observed += calls->wait_calls;
    }
    // The rows by wait, the most first: the contended mutex.
    const auto& mutex = u["rows"][0];
    EXPECT_EQ(mutex["kind"], "pthread_mutex") << mutex.dump();
    const std::string source = mutex["name_source"];
    if (source == "user-caller-offset") {
        EXPECT_EQ(mutex["name"].get<std::string>().rfind("pthread_mutex@sysbench+0x", 0), 0u) << mutex.dump();
    } else {
        EXPECT_EQ(source, "user-caller") << mutex.dump();
    }
    expect_within_2_percent(waits, observed, "sysbench's lock waits against the FUTEX_WAIT calls on their words");
}

// stress-ng --mutex 4: four stressor processes forked from stress-ng's
// own, without exec, each contending on its own mutex in the binary's .bss.
void expect_four_stressor_locks(bool realtime)
{
    const Recorded r = record("stress-ng", {"stress-ng", "--mutex", "4", "-t", "3"}, realtime);
    ASSERT_EQ(r.failure, "");
    const nlohmann::json u = user_locks(r.file, {"--by", "instance"});
    std::set<uint32_t> pids;
    uint64_t waits = 0, observed = 0;
    for (const auto& row : u["rows"]) {
        EXPECT_EQ(row["kind"], "pthread_mutex") << row.dump();
        EXPECT_EQ(row["name"].get<std::string>().find("unknown"), std::string::npos) << row.dump();
        EXPECT_EQ(row["name"].get<std::string>().rfind("stress-ng:.bss+0x", 0), 0u) << row.dump();
        EXPECT_EQ(row["name_source"], "user-section") << row.dump();
        ASSERT_EQ(row["pids"].size(), 1u) << "--by instance keeps each process's lock apart: " << row.dump();
        pids.insert(row["pids"][0].get<uint32_t>());
        const Calls* calls = observed_on(r, row);
        ASSERT_NE(calls, nullptr) << "the observer saw no futex call on " << row.dump();
        expect_within_2_percent(row["waits"], calls->wait_calls, "process " + row["pids"][0].dump() + "'s mutex");
        waits += row["waits"].get<uint64_t>();
    }
    for (uint32_t pid : pids) {
        observed += r.observed.count(pid) ? r.observed.at(pid).wait_calls : 0;
    }
    EXPECT_EQ(pids.size(), 4u) << u.dump();
    // The stressors' other futex waits are left out (and counted).
    uint64_t left_out = 0;
    for (const auto& [reason, l] : u["left_out"].items()) {
        left_out += l["waits"].get<uint64_t>();
    }
    EXPECT_LE(left_out, waits / 100) << u["left_out"].dump();
    expect_within_2_percent(waits, observed, "the stressors' mutex waits against their FUTEX_WAIT calls");
    // One lock by name, over its four processes, in the default rows.
    const nlohmann::json by_lock = user_locks(r.file);
    ASSERT_EQ(by_lock["rows"].size(), 1u) << by_lock.dump();
    EXPECT_EQ(by_lock["rows"][0]["pids"].size(), 4u);
}

TEST_F(ProgramsUserLocks, StressNgMutexStressorsAreFourLocksNamedByTheirPlace)
{
    // Its stressors' threads run SCHED_FIFO at random priorities and hold
    // the recorder off the CPUs: their samples are often read only after
    // they exited, and unwound with the maps of the process they were
    // forked from.
    expect_four_stressor_locks(false);
}

TEST_F(ProgramsUserLocks, StressNgMutexStressorsUnderARealtimeRecorder)
{
    // record --realtime: the recorder reads the stressors' samples while they run.
    expect_four_stressor_locks(true);
}

// A process forked without exec that exited before its samples were read
// (a recorder held off the CPUs by a program's real-time threads reads them
// late): its stacks are unwound, and its locks named, with the maps of the
// process it was forked from.
TEST_F(ProgramsUserLocks, ForkedProcessesThatExitedBeforeTheirSamplesWereReadAreNamed)
{
    namespace ul = lockscope::userlock;
    test::Program program(LOCKPROG, {"2", "fork"});
    std::string line;
    ASSERT_TRUE(program.line(line, 10000) && line == "ready") << line;
    FutexCalls calls;
    ASSERT_TRUE(calls.ok()) << "cannot load the futex-call observer";
    ul::Recorder recorder = ul::Recorder::prepare({.tgids = {program.pid()}, .follow_children = true});
    recorder.start();
    ASSERT_TRUE(program.say("go\n"));
    ASSERT_TRUE(program.line(line, 60000) && line == "exited") << line;
    // Only now are the samples read: both children have exited.
    while (recorder.poll(0) > 0) {
    }
    recorder.stop();
    const std::map<Word, Calls> observed = calls.stop();
    const ul::Recording r = recorder.read();
    EXPECT_TRUE(program.finish());

    EXPECT_EQ(r.left_out.count("not unwound"), 0u) << r.left_out.at("not unwound").waits << " waits not unwound";
    std::map<pid_t, std::map<std::string, std::string>> names;  // per child: row name -> name source
    std::map<pid_t, uint64_t> waits, observed_waits;            // per child, on its locks' words
    for (const ul::UserLock& lock : r.locks) {
        names[lock.tgid][lock.name] = lock.name_source;
        for (const lockscope::UserLockInstance& word : lock.words) {
            const auto counted = observed.find({uint32_t(lock.tgid), word.address});
            waits[lock.tgid] += word.waits;
            observed_waits[lock.tgid] += counted != observed.end() ? counted->second.wait_calls : 0;
        }
    }
    ASSERT_EQ(names.size(), 2u) << "a row of each child's locks";
    for (const auto& [child, rows] : names) {
        EXPECT_NE(child, program.pid());
        EXPECT_EQ(rows, (std::map<std::string, std::string>{{"g_stripped_lock", "user-symbol"},
                                                            {"pthread_mutex@Table::update", "user-caller"}}))
            << "process " << child;
        expect_within_2_percent(
            waits[child], observed_waits[child],
            "process " + std::to_string(child) + "'s lock waits against the FUTEX_WAIT calls on their words");
    }
}

// report --by instance: a row per futex word, each with its process and
// address, its waits those the observer counted on that word; by lock, one
// row per name.
TEST_F(ProgramsUserLocks, TwoHeapMutexesOfOneNameAreTwoInstancesWithTheirOwnWaits)
{
    const Recorded r = record("two-tables", {LOCKPROG, "1"});
    ASSERT_EQ(r.failure, "");
    const nlohmann::json u = user_locks(r.file, {"--by", "instance"});
    std::map<std::string, int> rows_named;
    std::set<uint64_t> addresses;
    uint64_t table_waits = 0;
    for (const auto& row : u["rows"]) {
        const std::string name = row["name"];
        ++rows_named[name];
        ASSERT_EQ(row["pids"].size(), 1u) << row.dump();
        addresses.insert(std::stoull(row["address"].get<std::string>(), nullptr, 16));
        table_waits += name == "pthread_mutex@Table::update" ? row["waits"].get<uint64_t>() : 0;
        const Calls* calls = observed_on(r, row);
        ASSERT_NE(calls, nullptr) << "the observer saw no futex call on " << row.dump();
        expect_within_2_percent(row["waits"], calls->wait_calls, name + " " + row["address"].dump());
    }
    EXPECT_EQ(rows_named, (std::map<std::string, int>{{"g_stripped_lock", 1}, {"pthread_mutex@Table::update", 2}}));
    EXPECT_EQ(addresses.size(), 3u);
    const nlohmann::json by_lock = user_locks(r.file);
    ASSERT_EQ(by_lock["rows"].size(), 2u) << by_lock.dump();
    for (const auto& row : by_lock["rows"]) {
        if (row["name"] == "pthread_mutex@Table::update") {
            EXPECT_EQ(row["waits"], table_waits) << "by lock, the two words' waits in one row";
        }
    }
}

// A process-shared mutex in shared memory, taken by two processes: one lock
// by instance too, over both, its waits all their futex waits.
TEST_F(ProgramsUserLocks, AMutexInSharedMemoryIsOneLockOverItsProcesses)
{
    const Recorded r = record("shared", {LOCKPROG, "2", "shared"});
    ASSERT_EQ(r.failure, "");
    const nlohmann::json u = user_locks(r.file, {"--by", "instance"});
    ASSERT_EQ(u["rows"].size(), 1u) << u.dump();
    const auto& row = u["rows"][0];
    EXPECT_EQ(row["name"], "pthread_mutex@shared_update") << row.dump();
    EXPECT_NE(row["shared"], "") << row.dump();
    ASSERT_EQ(row["pids"].size(), 2u) << row.dump();
    uint64_t observed = 0;
    for (uint32_t pid : row["pids"]) {
        observed += r.observed.count(pid) ? r.observed.at(pid).wait_calls : 0;
    }
    expect_within_2_percent(row["waits"], observed,
                            "the shared mutex's waits against both processes' FUTEX_WAIT calls");
}

// Copies the stripped program, and its debug file if asked, into a directory of their own.
std::string install_stripped(const std::string& name, bool with_debug_file)
{
    const fs::path dir = test::temp_path(name);
    fs::create_directories(dir);
    fs::copy_file(fs::path(STRIPPED_DIR) / "lockprog", dir / "lockprog", fs::copy_options::overwrite_existing);
    if (with_debug_file) {
        fs::copy_file(fs::path(STRIPPED_DIR) / "lockprog.debug", dir / "lockprog.debug",
                      fs::copy_options::overwrite_existing);
    }
    return (dir / "lockprog").string();
}

// The rows of the program's own locks, by name. Its threads may also queue on
// glibc's internal locks (malloc's free_list_lock when threads exit together):
// those are real waits on libc's data, and not what this test is about.
std::map<std::string, std::string> names_and_sources(const nlohmann::json& u)
{
    std::map<std::string, std::string> out;
    for (const auto& row : u["rows"]) {
        if (row["module"].get<std::string>().rfind("libc.so", 0) != 0)
            out[row["name"]] = row["name_source"];
    }
    return out;
}

TEST_F(ProgramsUserLocks, AStrippedProgramIsNamedByPlaceAndByItsSymbolsOnceItsDebugFileIsThere)
{
    const Recorded bare = record("stripped", {install_stripped("bare", false), "1"});
    ASSERT_EQ(bare.failure, "");
    const auto stripped = names_and_sources(user_locks(bare.file));
    ASSERT_EQ(stripped.size(), 2u) << user_locks(bare.file).dump();
    bool section = false, offset = false;
    for (const auto& [name, source] : stripped) {
        EXPECT_EQ(name.find("unknown"), std::string::npos) << name;
        section = section || (source == "user-section" && name.rfind("lockprog:.bss+0x", 0) == 0);
        offset = offset || (source == "user-caller-offset" && name.rfind("pthread_mutex@lockprog+0x", 0) == 0);
    }
    EXPECT_TRUE(section) << "the global mutex by its section and offset";
    EXPECT_TRUE(offset) << "the heap mutex by its caller's module and offset";

    const Recorded debug = record("debug", {install_stripped("with-debug", true), "1"});
    ASSERT_EQ(debug.failure, "");
    const auto named = names_and_sources(user_locks(debug.file));
    EXPECT_EQ(named, (std::map<std::string, std::string>{{"g_stripped_lock", "user-symbol"},
                                                         {"pthread_mutex@Table::update", "user-caller"}}));
}

}  // namespace
