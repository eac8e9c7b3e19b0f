// `lockscope export` and `record --trace` on bad input: one clear sentence
// and the documented exit code (1 failure, 2 usage), never a crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/storage/session_store.h"
#include "recorded_session.h"
#include "subprocess.h"

namespace lockscope {
namespace {

using test::kRecordedPipe;

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
// the sample types, each sample's wait parts add up to its delay, and the
// values add up to the report's totals.
TEST(ExportCli, GoToolPprofReadsTheProfileWithTheReportsTotals)
{
    if (test::run({"sh", "-c", "command -v go"}).exit_code != 0)
        GTEST_SKIP() << "go is not installed (scripts/install-deps.sh installs golang-go)";
    const std::string session = kRecordedPipe;
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
              "contentions/count delay/nanoseconds[dflt] spinning/nanoseconds queued_on_cpu/nanoseconds "
              "asleep/nanoseconds runnable/nanoseconds")
        << raw.out;
    uint64_t contentions = 0, delay = 0, samples = 0;
    while (std::getline(lines, line) && line.find(':') != std::string::npos && line.rfind("Locations", 0) != 0) {
        std::istringstream values(line.substr(0, line.find(':')));
        uint64_t c = 0, d = 0, parts[4] = {};
        if (!(values >> c >> d >> parts[0] >> parts[1] >> parts[2] >> parts[3]))
            continue;  // a label line ("lock:[...]") under a sample
        EXPECT_EQ(parts[0] + parts[1] + parts[2] + parts[3], d) << line;
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
    // a usage error, as `export --help` and report's missing file say
    EXPECT_EQ(f.exit_code, 2);
    EXPECT_NE(first_line(f.err).find("no such session file"), std::string::npos) << f.err;
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

// `export -o` onto the session it reads: refused with one sentence however
// the output names it (itself, a symbolic link, a hard link; --force too),
// and the session still reads.
TEST(ExportCli, WritingOverItsOwnSessionIsRefusedAndTheSessionStillReads)
{
    const std::string session = test::temp_path("own.lockscope");
    std::filesystem::copy_file(kRecordedPipe, session, std::filesystem::copy_options::overwrite_existing);
    const std::string link = test::temp_path("own-link.lockscope"), hard = test::temp_path("own-hard.lockscope");
    std::filesystem::remove(link);
    std::filesystem::remove(hard);
    std::filesystem::create_symlink(session, link);
    std::filesystem::create_hard_link(session, hard);
    for (const std::string& out : {session, link, hard})
        for (bool force : {false, true}) {
            std::vector<std::string> args = {"export", session, "--format", "folded", "-o", out};
            if (force)
                args.push_back("--force");
            test::Finished f = test::run_lockscope(args);
            EXPECT_EQ(f.exit_code, 2) << out << ": " << f.err;
            EXPECT_NE(first_line(f.err).find("is the session being exported"), std::string::npos) << f.err;
            EXPECT_EQ(test::run_lockscope({"report", session}).exit_code, 0) << "the session no longer reads";
        }
}

// An existing file is replaced only with --force, as `record` does; a
// refusal leaves it as it was, a replacement leaves the whole export.
TEST(ExportCli, AnExistingFileIsReplacedOnlyWithForce)
{
    const std::string out = test::temp_path("existing.folded");
    std::ofstream(out) << "precious\n";
    test::Finished f = test::run_lockscope({"export", kRecordedPipe, "--format", "folded", "-o", out});
    EXPECT_EQ(f.exit_code, 1) << f.err;
    EXPECT_NE(first_line(f.err).find("overwrite it with --force"), std::string::npos) << f.err;
    std::stringstream kept;
    kept << std::ifstream(out).rdbuf();
    EXPECT_EQ(kept.str(), "precious\n");
    f = test::run_lockscope({"export", kRecordedPipe, "--format", "folded", "-o", out, "--force"});
    EXPECT_EQ(f.exit_code, 0) << f.err;
    std::stringstream written;
    written << std::ifstream(out).rdbuf();
    EXPECT_EQ(written.str(), test::run_lockscope({"export", kRecordedPipe, "--format", "folded"}).out);
    // No temporary file is left beside it.
    for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(out).parent_path()))
        EXPECT_FALSE(entry.path().filename().string().starts_with(".existing.folded.")) << entry.path();
}

// -E N cuts the locks table's rows as `report -E N` does: the shares stay
// shares of the whole session's wait.
TEST(ExportCli, TopLocksTableIsTheReportsTopRows)
{
    for (const char* n : {"1", "2"}) {
        test::Finished e = test::run_lockscope({"export", kRecordedPipe, "--format", "csv", "-E", n});
        test::Finished r = test::run_lockscope({"report", kRecordedPipe, "--format", "csv", "-E", n});
        ASSERT_EQ(e.exit_code, 0) << e.err;
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(e.out, r.out);
    }
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
