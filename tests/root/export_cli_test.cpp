// `lockscope export` and `record --trace` on bad input: one clear sentence
// and the documented exit code (1 failure, 2 usage), never a crash.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/storage/session_store.h"
#include "subprocess.h"

namespace lockscope {
namespace {

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

// go tool pprof (Debian's golang-go) reads the profile: its -raw listing has
// the four sample types, and the values add up to the report's totals.
TEST(ExportCli, GoToolPprofReadsTheProfileWithTheReportsTotals)
{
    if (test::run({"sh", "-c", "command -v go"}).exit_code != 0)
        GTEST_SKIP() << "go is not installed (scripts/install-deps.sh installs golang-go)";
    const std::string session = LOCKSCOPE_SOURCE_DIR "/tests/fuzz/corpus/session_file/load-recorded-pipe-1s.lockscope";
    const std::string out = test::temp_path("pipe.pb.gz");
    test::Finished e = test::run_lockscope({"export", session, "--format", "pprof", "-o", out});
    ASSERT_EQ(e.exit_code, 0) << e.err;
    test::Finished raw = test::run({"go", "tool", "pprof", "-raw", "-symbolize=none", out}, 120);
    ASSERT_EQ(raw.exit_code, 0) << raw.err;
    std::istringstream lines(raw.out);
    std::string line;
    while (std::getline(lines, line) && line != "Samples:") {
    }
    ASSERT_TRUE(std::getline(lines, line)) << raw.out;
    EXPECT_EQ(line.substr(line.find_first_not_of(' ')),
              "contentions/count delay/nanoseconds[dflt] spin/nanoseconds offcpu/nanoseconds")
        << raw.out;
    uint64_t contentions = 0, delay = 0, samples = 0;
    while (std::getline(lines, line) && line.find(':') != std::string::npos && line.rfind("Locations", 0) != 0) {
        std::istringstream values(line.substr(0, line.find(':')));
        uint64_t c = 0, d = 0;
        if (!(values >> c >> d))
            continue;  // a label line ("lock:[...]") under a sample
        contentions += c;
        delay += d;
        samples++;
    }
    EXPECT_GT(samples, 0u) << raw.out;
    test::Finished rep = test::run_lockscope({"report", session, "--format", "json"});
    ASSERT_EQ(rep.exit_code, 0);
    const nlohmann::json totals = nlohmann::json::parse(rep.out)["totals"];
    EXPECT_EQ(contentions, totals["contentions"].get<uint64_t>());
    EXPECT_EQ(delay, totals["wait_ns"].get<uint64_t>());
}

TEST(ExportCli, MissingFile)
{
    test::Finished f = test::run_lockscope({"export", test::temp_path("nosuch.lockscope"), "--format", "csv"});
    EXPECT_EQ(f.exit_code, 1);
    EXPECT_NE(first_line(f.err).find("cannot open session file"), std::string::npos) << f.err;
    EXPECT_NE(first_line(f.err).find("No such file or directory"), std::string::npos) << f.err;
    EXPECT_TRUE(f.out.empty());
}

TEST(ExportCli, NotASession)
{
    const std::string path = test::temp_path("notes.txt");
    std::ofstream(path) << "these are notes, not a session\n";
    test::Finished f = test::run_lockscope({"export", path, "--format", "chrome-trace"});
    EXPECT_EQ(f.exit_code, 1);
    EXPECT_NE(first_line(f.err).find("is not a lockscope session"), std::string::npos) << f.err;
    EXPECT_TRUE(f.out.empty()) << "nothing half-written on failure";
}

TEST(ExportCli, UnknownFormatAndMisplacedOptionsAreUsageErrors)
{
    const std::string session = untraced_session();
    test::Finished f = test::run_lockscope({"export", session, "--format", "svg"});
    EXPECT_EQ(f.exit_code, 2);
    EXPECT_NE(first_line(f.err).find("unknown format 'svg': use chrome-trace, folded, csv or pprof"), std::string::npos)
        << f.err;
    f = test::run_lockscope({"export", session});
    EXPECT_EQ(f.exit_code, 2) << f.err;
    EXPECT_NE(f.err.find("format"), std::string::npos) << f.err;
    f = test::run_lockscope({"export", session, "--format", "csv", "--weight", "wait"});
    EXPECT_EQ(f.exit_code, 2);
    EXPECT_NE(first_line(f.err).find("--weight goes with --format folded"), std::string::npos) << f.err;
    f = test::run_lockscope({"export", session, "--format", "csv", "--table", "stacks"});
    EXPECT_EQ(f.exit_code, 2);
    EXPECT_NE(first_line(f.err).find("unknown table 'stacks'"), std::string::npos) << f.err;
    f = test::run_lockscope({"record", "--trace-buffer", "8", "-o", test::temp_path("x.lockscope")});
    EXPECT_EQ(f.exit_code, 2);
    EXPECT_NE(first_line(f.err).find("--trace-buffer goes with --trace"), std::string::npos) << f.err;
}

TEST(ExportCli, UntracedSessionGivesCountersAndSaysWhy)
{
    const std::string session = untraced_session();
    test::Finished f = test::run_lockscope({"export", session, "--format", "chrome-trace"});
    EXPECT_EQ(f.exit_code, 0) << f.err;
    EXPECT_NE(f.err.find("recorded without --trace"), std::string::npos) << f.err;
    EXPECT_NE(f.out.find("\"traceEvents\""), std::string::npos) << f.out;
}

TEST(ExportCli, UnwritableOutput)
{
    const std::string session = untraced_session();
    test::Finished f = test::run_lockscope({"export", session, "--format", "csv", "-o", "/nonexistent-dir/x.csv"});
    EXPECT_EQ(f.exit_code, 1);
    EXPECT_NE(first_line(f.err).find("cannot create output file"), std::string::npos) << f.err;
}

}  // namespace
}  // namespace lockscope
