// User locks in programs nobody here wrote, as Debian ships them, recorded
// with `lockscope record -- CMD` and counted against an independent
// observer of their futex calls (futex_calls.bpf.c):
//  - perf bench futex lock-pi: its PI futex's waits, every FUTEX_LOCK_PI
//    call (each one a contended acquisition), named by its place in perf;
//  - stress-ng's mutex stressor (stripped): four processes, each with its
//    own mutex in the binary's .bss, four locks by instance, none unknown;
//  - a program of ours stripped the same way: its locks named by place, and
//    by their symbols once its debug file is beside it.
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "futex_calls_bpf.skel.h"
#include "subprocess.h"

namespace {

namespace fs = std::filesystem;
namespace test = lockscope::test;

struct Calls {
    uint64_t pi_calls = 0, pi_slept = 0, wait_calls = 0;
};

// Counts every process's futex calls from construction to stop().
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
    std::map<uint32_t, Calls> stop()
    {
        std::map<uint32_t, Calls> out;
        futex_calls_bpf::detach(skel_);
        const int fd = bpf_map__fd(skel_->maps.per_process);
        uint32_t key = 0;
        const uint32_t* previous = nullptr;
        while (bpf_map_get_next_key(fd, previous, &key) == 0) {
            uint64_t value[3] = {};
            if (bpf_map_lookup_elem(fd, &key, value) == 0) {
                out[key] = {value[0], value[1], value[2]};
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
    std::map<uint32_t, Calls> observed;
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
    r.observed = calls.stop();
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

TEST_F(ProgramsUserLocks, StressNgMutexStressorsAreFourLocksNamedByTheirPlace)
{
    // Its threads run SCHED_FIFO at random priorities: --realtime keeps the
    // recorder reading the stressors' binaries while they run.
    const Recorded r = record("stress-ng", {"stress-ng", "--mutex", "4", "-t", "2"}, true);
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
        const uint32_t pid = row["pids"][0];
        pids.insert(pid);
        waits += row["waits"].get<uint64_t>();
        if (const auto o = r.observed.find(pid); o != r.observed.end()) {
            observed += o->second.wait_calls;
        }
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

std::map<std::string, std::string> names_and_sources(const nlohmann::json& u)
{
    std::map<std::string, std::string> out;
    for (const auto& row : u["rows"]) {
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
