// Replays the fuzz corpus (seeds, hostile files and every input a fuzzer
// ever crashed on) through the fuzz targets' code in a plain build, and
// through the `lockscope report` and `diff` commands a user would run.
// Names say what must happen: "load-…" must load, "refuse-…" must be
// refused with one sentence; "crash-…" (fuzzer findings) must do either.
#include "session_harness.h"
#include "subprocess.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace lockscope {
namespace {

std::vector<fs::path> corpus(const char* target)
{
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(fs::path(LOCKSCOPE_FUZZ_CORPUS) / target))
        if (entry.is_regular_file())
            files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    return files;
}

std::string read_file(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool starts_with(const fs::path& path, const char* prefix)
{
    return path.filename().string().rfind(prefix, 0) == 0;
}

void expect_named_outcome(const fs::path& file, fuzz::Outcome outcome)
{
    if (starts_with(file, "load-")) {
        EXPECT_EQ(outcome, fuzz::Outcome::Loaded) << file.filename() << " must load";
    } else if (starts_with(file, "refuse-")) {
        EXPECT_EQ(outcome, fuzz::Outcome::Refused) << file.filename() << " must be refused";
    }
}

TEST(FuzzCorpus, SessionFilesLoadOrAreRefusedAsNamed)
{
    const auto files = corpus("session_file");
    ASSERT_GE(files.size(), 5u);
    for (const fs::path& file : files) {
        SCOPED_TRACE(file.filename().string());
        const std::string bytes = read_file(file);
        expect_named_outcome(
            file, fuzz::exercise_session_bytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
    }
}

TEST(FuzzCorpus, SqlMutationsOfAValidSessionLoadOrAreRefusedAsNamed)
{
    const auto files = corpus("session_sql");
    ASSERT_GE(files.size(), 5u);
    for (const fs::path& file : files) {
        SCOPED_TRACE(file.filename().string());
        const std::string sql = read_file(file);
        expect_named_outcome(
            file, fuzz::exercise_sql_on_valid_session(reinterpret_cast<const uint8_t*>(sql.data()), sql.size()));
    }
}

// What the user sees: exit 0 with a report, or exit 1 with one line that
// names the file; never a crash or a usage error.
TEST(FuzzCorpus, ReportAndDiffCommandsAnswerEveryFileWithAReportOrOneSentence)
{
    const auto files = corpus("session_file");
    const fs::path valid = fs::path(LOCKSCOPE_FUZZ_CORPUS) / "session_file" / "load-writer-2runs.lockscope";
    ASSERT_TRUE(fs::exists(valid));
    for (const fs::path& file : files) {
        SCOPED_TRACE(file.filename().string());
        // A copy: SQLite may leave -shm files next to a WAL-mode input.
        const std::string copy = test::temp_path("corpus.lockscope");
        fs::copy_file(file, copy, fs::copy_options::overwrite_existing);
        for (const std::vector<std::string>& args :
             {std::vector<std::string>{"report", copy, "--top", "0"},
              std::vector<std::string>{"report", copy, "--format", "json", "--by", "task"},
              std::vector<std::string>{"diff", valid.string(), copy},
              std::vector<std::string>{"diff", copy, valid.string(), "--format", "json"}}) {
            std::vector<std::string> argv{test::lockscope_bin()};
            argv.insert(argv.end(), args.begin(), args.end());
            const test::Finished f = test::run(argv, 60);
            ASSERT_TRUE(f.exit_code == 0 || f.exit_code == 1)
                << args[0] << " exit " << f.exit_code << " signal " << f.signal << "\n"
                << f.err;
            if (f.exit_code == 1) {
                EXPECT_EQ(std::count(f.err.begin(), f.err.end(), '\n'), 1) << f.err;
                EXPECT_NE(f.err.find(copy), std::string::npos) << f.err;
            }
            if (starts_with(file, "load-") && args[0] == "report") {
                EXPECT_EQ(f.exit_code, 0) << f.err;
            }
        }
    }
}

}  // namespace
}  // namespace lockscope
