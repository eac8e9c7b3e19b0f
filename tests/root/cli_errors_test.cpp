// Bad input gets one clear sentence and the documented exit code: 1 for a
// failure, 2 for usage; never a crash, never a stray file.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "subprocess.h"
#include "recorded_session.h"

namespace lockscope {
namespace {

TEST(CliErrors, UnknownCommandAndOptionAreUsageErrors)
{
    test::Finished f = test::run_lockscope({"recrod"});
    EXPECT_EQ(f.exit_code, 2);
    EXPECT_NE(f.err.find("unknown command 'recrod'"), std::string::npos) << f.err;
    f = test::run_lockscope({"record", "--bogus"});
    EXPECT_EQ(f.exit_code, 2);
    EXPECT_NE(f.err.find("--bogus"), std::string::npos) << f.err;
    EXPECT_NE(f.err.find("lockscope record --help"), std::string::npos) << f.err;
}

TEST(CliErrors, UnknownWorkloadListsTheValidOnes)
{
    test::Finished f = test::run_lockscope({"record", "--workload", "nosuch", "-o", test::temp_path("x.lockscope")});
    EXPECT_EQ(f.exit_code, 2);
    for (const char* w : {"pipe", "unlink1", "unlink2", "mmap1", "pagefault"})
        EXPECT_NE(f.err.find(w), std::string::npos) << f.err;
    f = test::run_lockscope({"workload", "pipe", "-t", "0", "-d", "1"});
    EXPECT_EQ(f.exit_code, 2) << f.err;
}

TEST(CliErrors, CommandNotFound)
{
    const std::string out = test::temp_path("nocmd.lockscope");
    test::Finished f = test::run_lockscope({"record", "-o", out, "--", "no-such-command-xyz"});
    EXPECT_EQ(f.exit_code, 1);
    EXPECT_NE(f.err.find("command not found 'no-such-command-xyz'"), std::string::npos) << f.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << "a failed start must not leave a file";
}

TEST(CliErrors, MissingPid)
{
    test::Finished f = test::run_lockscope({"record", "-p", "999999", "-o", test::temp_path("nopid.lockscope")});
    EXPECT_EQ(f.exit_code, 1);
    EXPECT_NE(f.err.find("no process with PID 999999"), std::string::npos) << f.err;
}

TEST(CliErrors, UnwritableOutputPath)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "checks the output path after the privilege check, which needs root";
    test::Finished f = test::run_lockscope({"record", "-d", "1", "-o", "/nonexistent-dir/x.lockscope"});
    EXPECT_EQ(f.exit_code, 1);
    EXPECT_NE(f.err.find("/nonexistent-dir/x.lockscope"), std::string::npos) << f.err;
}

TEST(CliErrors, NotRootSaysWhichPrivilegesAreMissing)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "drops to an unprivileged user, which needs root";
    const std::string out = test::temp_path("noroot.lockscope");
    test::Finished f =
        test::Process::start({test::lockscope_bin(), "record", "-d", "1", "-o", out}, false, 65534).wait(60);
    EXPECT_EQ(f.exit_code, 1);
    EXPECT_NE(f.err.find("CAP_BPF"), std::string::npos) << f.err;
    EXPECT_NE(f.err.find("CAP_PERFMON"), std::string::npos) << f.err;
    EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(CliErrors, ReportOfANonSessionIsOneSentence)
{
    const std::string path = test::temp_path("garbage.lockscope");
    FILE* fp = fopen(path.c_str(), "w");
    fputs("not a database at all\n", fp);
    fclose(fp);
    test::Finished f = test::run_lockscope({"report", path});
    EXPECT_EQ(f.exit_code, 1);
    EXPECT_NE(f.err.find("not a lockscope session"), std::string::npos) << f.err;
    f = test::run_lockscope({"report", test::temp_path("missing.lockscope")});
    EXPECT_EQ(f.exit_code, 2) << "a missing file is a usage error, as --help says";
    EXPECT_NE(f.err.find("no such session file"), std::string::npos) << f.err;
    f = test::run_lockscope({"report"});
    EXPECT_EQ(f.exit_code, 2);
}

TEST(CliErrors, SmallMistakesAreSaidOnceInTheUsersTerms)
{
    test::Finished f = test::run_lockscope({"report"});
    EXPECT_EQ(f.exit_code, 2);
    EXPECT_NE(f.err.find("no session file given: lockscope report FILE"), std::string::npos) << f.err;
    EXPECT_EQ(f.err.find("--file"), std::string::npos) << "no such option is documented: " << f.err;
    f = test::run_lockscope({"report", test::kRecordedPipe, "--top", "-1"});
    EXPECT_EQ(f.exit_code, 2) << f.out;
    EXPECT_TRUE(f.out.empty()) << "nothing printed: " << f.out;
    EXPECT_NE(f.err.find("--top takes a number of rows, 0 or more"), std::string::npos) << f.err;
    f = test::run_lockscope({"workload", "nosuch"});
    EXPECT_EQ(f.exit_code, 2);
    EXPECT_EQ(f.err.find("workload: workload:"), std::string::npos) << f.err;
    EXPECT_NE(f.err.find("lockscope workload: unknown workload 'nosuch'"), std::string::npos) << f.err;
}

TEST(CliErrors, InfoDoesNotMarkBpfStatsOffAsOk)
{
    FILE* in = std::fopen("/proc/sys/kernel/bpf_stats_enabled", "r");
    if (!in)
        GTEST_SKIP() << "this kernel has no kernel.bpf_stats_enabled";
    const int enabled = std::fgetc(in);
    std::fclose(in);
    test::Finished f = test::run_lockscope({"info"});
    ASSERT_EQ(f.exit_code, 0) << f.err;
    const size_t at = f.out.find("BPF run-time stats");
    ASSERT_NE(at, std::string::npos) << f.out;
    const std::string line = f.out.substr(f.out.rfind('\n', at) + 1, f.out.find('\n', at) - f.out.rfind('\n', at) - 1);
    EXPECT_EQ(line.find("[ok]") != std::string::npos, enabled != '0') << line;
}

TEST(CliErrors, EveryHelpEndsWithExamples)
{
    for (const char* cmd :
         {"record", "top", "report", "contention", "diff", "export", "workload", "info", "bench", "lab"}) {
        test::Finished f = test::run_lockscope({cmd, "--help"});
        ASSERT_EQ(f.exit_code, 0) << cmd;
        const size_t examples = f.out.rfind("\nexamples:\n");
        ASSERT_NE(examples, std::string::npos) << cmd << ": " << f.out;
        size_t lines = 0;
        for (size_t at = examples + 11; at < f.out.size(); at = f.out.find('\n', at) + 1) {
            EXPECT_EQ(f.out.compare(at, 12, "  lockscope "), 0) << cmd << ": " << f.out.substr(at);
            lines++;
            if (f.out.find('\n', at) == std::string::npos)
                break;
        }
        EXPECT_GE(lines, 2u) << cmd;
        EXPECT_LE(lines, 3u) << cmd;
    }
}

TEST(CliErrors, HelpTeaches)
{
    for (const char* cmd : {"record", "report", "contention", "workload", "info"}) {
        test::Finished f = test::run_lockscope({cmd, "--help"});
        EXPECT_EQ(f.exit_code, 0) << cmd;
        std::string out = f.out;
        for (char& c : out)
            c = char(std::tolower(c));
        EXPECT_NE(out.find("usage: lockscope " + std::string(cmd)), std::string::npos) << cmd << ": " << f.out;
    }
}

}  // namespace
}  // namespace lockscope
