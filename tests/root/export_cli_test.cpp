// `lockscope export` and `record --trace` on bad input: one clear sentence
// and the documented exit code (1 failure, 2 usage), never a crash.
#include <gtest/gtest.h>

#include <fstream>

#include "core/session_store.h"
#include "subprocess.h"

namespace lockscope {
namespace {

test::Finished lockscope(std::vector<std::string> args)
{
    args.insert(args.begin(), test::lockscope_bin());
    return test::run(args, 60);
}

// The first line of stderr, which carries the sentence.
std::string first_line(const std::string& err)
{
    return err.substr(0, err.find('\n'));
}

std::string untraced_session()
{
    const std::string path = test::temp_path("untraced.lockscope");
    SessionWriter w = SessionWriter::create(path, true);
    w.set_meta({{"host", "h"}});
    w.close();
    return path;
}

TEST(ExportCli, MissingFile)
{
    test::Finished f = lockscope({"export", test::temp_path("nosuch.lockscope"), "--format", "csv"});
    EXPECT_EQ(f.exit_code, 1);
    EXPECT_NE(first_line(f.err).find("cannot open session file"), std::string::npos) << f.err;
    EXPECT_NE(first_line(f.err).find("No such file or directory"), std::string::npos) << f.err;
    EXPECT_TRUE(f.out.empty());
}

TEST(ExportCli, NotASession)
{
    const std::string path = test::temp_path("notes.txt");
    std::ofstream(path) << "these are notes, not a session\n";
    test::Finished f = lockscope({"export", path, "--format", "chrome-trace"});
    EXPECT_EQ(f.exit_code, 1);
    EXPECT_NE(first_line(f.err).find("is not a lockscope session"), std::string::npos) << f.err;
    EXPECT_TRUE(f.out.empty()) << "nothing half-written on failure";
}

TEST(ExportCli, UnknownFormatAndMisplacedOptionsAreUsageErrors)
{
    const std::string session = untraced_session();
    test::Finished f = lockscope({"export", session, "--format", "svg"});
    EXPECT_EQ(f.exit_code, 2);
    EXPECT_NE(first_line(f.err).find("unknown format 'svg': use chrome-trace, folded or csv"), std::string::npos)
        << f.err;
    f = lockscope({"export", session});
    EXPECT_EQ(f.exit_code, 2) << f.err;
    EXPECT_NE(f.err.find("format"), std::string::npos) << f.err;
    f = lockscope({"export", session, "--format", "csv", "--weight", "wait"});
    EXPECT_EQ(f.exit_code, 2);
    EXPECT_NE(first_line(f.err).find("--weight goes with --format folded"), std::string::npos) << f.err;
    f = lockscope({"export", session, "--format", "csv", "--table", "stacks"});
    EXPECT_EQ(f.exit_code, 2);
    EXPECT_NE(first_line(f.err).find("unknown table 'stacks'"), std::string::npos) << f.err;
    f = lockscope({"record", "--trace-buffer", "8", "-o", test::temp_path("x.lockscope")});
    EXPECT_EQ(f.exit_code, 2);
    EXPECT_NE(first_line(f.err).find("--trace-buffer goes with --trace"), std::string::npos) << f.err;
}

TEST(ExportCli, UntracedSessionGivesCountersAndSaysWhy)
{
    const std::string session = untraced_session();
    test::Finished f = lockscope({"export", session, "--format", "chrome-trace"});
    EXPECT_EQ(f.exit_code, 0) << f.err;
    EXPECT_NE(f.err.find("recorded without --trace"), std::string::npos) << f.err;
    EXPECT_NE(f.out.find("\"traceEvents\""), std::string::npos) << f.out;
}

TEST(ExportCli, UnwritableOutput)
{
    const std::string session = untraced_session();
    test::Finished f = lockscope({"export", session, "--format", "csv", "-o", "/nonexistent-dir/x.csv"});
    EXPECT_EQ(f.exit_code, 1);
    EXPECT_NE(first_line(f.err).find("cannot create output file"), std::string::npos) << f.err;
}

}  // namespace
}  // namespace lockscope
