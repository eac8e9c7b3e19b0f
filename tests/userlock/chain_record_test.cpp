// `lockscope record -o FILE -- chain_prog`: the chain from a user lock into
// the kernel, as a user finds it. chain_prog's thread A waits on
// g_chain_lock while its owner B waits for the file's i_rwsem, which C holds
// asleep in a page fault; the session keeps that edge, and
// `lockscope report --chains` shows one chain from the user lock into the
// kernel lock the kernel side names, with C asleep at its root, counting at
// least the rounds the program confirmed in /proc and at most A's blocked
// lock attempts. --scope picks the chains by their first lock.
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "subprocess.h"
#include "test_program.h"

namespace {

namespace test = lockscope::test;
using test::Program;

constexpr int kRounds = 20;
const char* const kUserLock = "g_chain_lock (user pthread_mutex)";

struct Recorded {
    std::string failure;
    std::string file;
    long confirmed = 0, contended = 0;  // chain_prog's own counts of the rounds
};

Recorded record()
{
    Recorded r;
    const auto dir = std::filesystem::temp_directory_path() / ("lockscope-chain-record-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    r.file = (dir / "chain.lockscope").string();
    const std::string held = (dir / "held").string();
    const std::string bin = test::lockscope_bin();
    Program lockscope(bin.c_str(), {"record", "-o", r.file, "--", CHAIN_PROG, held, std::to_string(kRounds)});
    std::string line;
    while (lockscope.line(line, 60000) && line != "ready") {
    }
    if (line != "ready") {
        r.failure = "chain_prog did not start under lockscope record";
        return r;
    }
    lockscope.say("go\n");
    while (lockscope.line(line, 120000) && line != "done") {
        std::istringstream words(line);
        std::string tag;
        long rounds = 0;
        if (words >> tag && tag == "rounds") {
            words >> rounds >> tag >> r.confirmed >> tag >> r.contended;
        }
    }
    if (line != "done") {
        r.failure = "chain_prog did not finish its rounds";
        return r;
    }
    if (!lockscope.finish_within(120)) {
        r.failure = "lockscope record did not end";
    }
    return r;
}

nlohmann::json report_json(const std::string& file, const std::vector<std::string>& options)
{
    std::vector<std::string> args = {"report", file, "--chains", "--format", "json", "-E", "0"};
    args.insert(args.end(), options.begin(), options.end());
    const test::Finished f = test::run_lockscope(args);
    EXPECT_EQ(f.exit_code, 0) << f.err;
    return f.exit_code == 0 ? nlohmann::json::parse(f.out) : nlohmann::json::object();
}

std::vector<nlohmann::json> user_chains(const nlohmann::json& report)
{
    std::vector<nlohmann::json> out;
    for (const auto& c : report.value("chains", nlohmann::json::array())) {
        if (c["scope"] == "user") {
            out.push_back(c);
        }
    }
    return out;
}

TEST(RecordUserLockChain, ReportShowsOneChainFromTheUserLockIntoTheKernelLockWithCAsleepAtItsRoot)
{
    if (geteuid() != 0) {
        GTEST_SKIP() << "needs root to load BPF programs and read another process's maps";
    }
    const Recorded r = record();
    ASSERT_EQ(r.failure, "");
    ASSERT_EQ(r.confirmed, kRounds) << "the program did not confirm its rounds in /proc";

    const nlohmann::json all = report_json(r.file, {});
    const std::vector<nlohmann::json> chains = user_chains(all);
    ASSERT_EQ(chains.size(), 1u) << all["chains"].dump(1);
    const nlohmann::json& chain = chains[0];
    ASSERT_GE(chain["locks"].size(), 2u) << chain.dump(1);
    EXPECT_EQ(chain["locks"][0], kUserLock);
    // The kernel lock is one of the session's kernel rows, named by the kernel side.
    const std::string kernel_lock = chain["locks"][1].get<std::string>();
    bool kernel_row = false;
    for (const auto& row : all["locks"]) {
        if (row["name"] == kernel_lock) {
            kernel_row = true;
            EXPECT_EQ(row["kind"].get<std::string>().rfind("rwsem", 0), 0u) << row.dump();
        }
    }
    EXPECT_TRUE(kernel_row) << kernel_lock << " is not a kernel lock row of the report";
    EXPECT_GE(chain["count"].get<long>(), r.confirmed);
    EXPECT_LE(chain["count"].get<long>(), r.contended);
    EXPECT_GT(chain["wait_ns"].get<uint64_t>(), 0u);
    EXPECT_EQ(chain["root"]["state"], "sleeping") << chain.dump(1);

    // The text says it as one line: the user lock, an arrow, the kernel lock.
    const test::Finished text = test::run_lockscope({"report", r.file, "--chains", "-E", "0"});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find(std::string(kUserLock) + " -> " + kernel_lock), std::string::npos) << text.out;
    EXPECT_NE(text.out.find(" waits    " + std::string(kUserLock)), std::string::npos) << text.out;

    // The kernel lock's waiter B is seen in its own code: its user stack,
    // unwound in a binary without frame pointers, sits above its kernel
    // stack, in the report and in the folded export.
    bool user_code = false;
    for (const auto& row : all["locks"]) {
        if (row["name"] != kernel_lock) {
            continue;
        }
        EXPECT_GE(row["user_code_samples"].get<uint64_t>(), 1u) << row.dump(1);
        for (const auto& code : row["user_code"]) {
            for (const auto& frame : code["stack"]) {
                user_code = user_code || frame.get<std::string>().find("write_under_mutex") != std::string::npos;
            }
        }
        EXPECT_TRUE(user_code) << row["user_code"].dump(1);
    }
    EXPECT_NE(text.out.find("user code:"), std::string::npos) << text.out;
    const test::Finished folded = test::run_lockscope({"export", r.file, "--format", "folded"});
    ASSERT_EQ(folded.exit_code, 0) << folded.err;
    bool mixed = false;
    std::istringstream lines(folded.out);
    for (std::string line; std::getline(lines, line);) {
        // root;main..;write_under_mutex;..pwrite;entry..;..down_write weight
        const auto user = line.find("write_under_mutex(");
        if (line.rfind(kernel_lock + " [", 0) == 0 && user != std::string::npos) {
            mixed = line.find("down_write", user) != std::string::npos;
            break;
        }
    }
    EXPECT_TRUE(mixed) << "no folded stack of " << kernel_lock << " runs from write_under_mutex into down_write:\n"
                       << folded.out;

    // export --scope keeps one side's roots: the kernel's locks (with the
    // user frames above their waits) or the user-space locks.
    const auto roots = [&](const char* scope) {
        const test::Finished f = test::run_lockscope({"export", r.file, "--format", "folded", "--scope", scope});
        EXPECT_EQ(f.exit_code, 0) << f.err;
        std::pair<int, int> kernel_user{0, 0};
        std::istringstream in(f.out);
        for (std::string line; std::getline(in, line);) {
            const bool user = line.substr(0, line.find(';')).find(" [user ") != std::string::npos;
            (user ? kernel_user.second : kernel_user.first)++;
        }
        return kernel_user;
    };
    const auto both = roots("all"), kernel_only = roots("kernel"), user_only = roots("user");
    EXPECT_GT(both.first, 0);
    EXPECT_GT(both.second, 0);
    EXPECT_EQ(kernel_only, std::make_pair(both.first, 0));
    EXPECT_EQ(user_only, std::make_pair(0, both.second));

    // --scope: a chain goes with its first lock.
    EXPECT_TRUE(user_chains(report_json(r.file, {"--scope", "kernel"})).empty());
    const nlohmann::json user = report_json(r.file, {"--scope", "user"});
    EXPECT_EQ(user_chains(user).size(), 1u);
    EXPECT_EQ(user["chains"].size(), 1u) << user["chains"].dump(1);
    const test::Finished user_text = test::run_lockscope({"report", r.file, "--chains", "--scope", "user", "-E", "0"});
    EXPECT_NE(user_text.out.find(std::string(kUserLock) + " -> " + kernel_lock), std::string::npos) << user_text.out;
    std::filesystem::remove_all(std::filesystem::path(r.file).parent_path());
}

}  // namespace
