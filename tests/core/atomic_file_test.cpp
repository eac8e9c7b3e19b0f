// Files written whole or not at all (core/storage/atomic_file.h): an
// interrupted writer leaves nothing, an existing file is replaced only when
// asked and only by a complete one, and what is not a regular file is
// written as it is.
#include "core/error.h"
#include "core/storage/atomic_file.h"
#include "core/storage/session_store.h"
#include "sample_session.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

using namespace lockscope;
using lockscope::testing::TempDir;

namespace {

std::string read_all(const std::string& path)
{
    std::stringstream s;
    s << std::ifstream(path).rdbuf();
    return s.str();
}

void write_all(const std::string& path, const std::string& text)
{
    std::ofstream(path) << text;
}

size_t entries(const TempDir& dir)
{
    return size_t(std::distance(std::filesystem::directory_iterator(dir.path()), {}));
}

}  // namespace

TEST(AtomicFileTest, TheFileAppearsWholeAtCommitAndNotBefore)
{
    TempDir dir;
    const std::string path = dir.file("out.folded");
    AtomicFile f(path, false);
    f.stream() << std::string(200'000, 'x') << '\n';
    EXPECT_FALSE(std::filesystem::exists(path));
    f.commit();
    EXPECT_EQ(read_all(path).size(), 200'001u);
    EXPECT_EQ(entries(dir), 1u) << "nothing but the file";
}

TEST(AtomicFileTest, AWriterThatStopsLeavesNothing)
{
    TempDir dir;
    {
        AtomicFile f(dir.file("out.csv"), false);
        f.stream() << "half a table";
    }  // no commit: a failed export
    EXPECT_TRUE(dir.empty());
    // Killed half way: not even a temporary file stays behind.
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        AtomicFile f(dir.file("out.csv"), false);
        for (int i = 0; i < 1000; ++i)
            f.stream() << std::string(1000, 'y');
        f.stream().flush();
        raise(SIGKILL);
        _exit(0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status));
    EXPECT_TRUE(dir.empty());
}

TEST(AtomicFileTest, AnExistingFileIsReplacedOnlyWhenAskedKeepingItsPermissions)
{
    TempDir dir;
    const std::string path = dir.file("existing.txt");
    write_all(path, "precious\n");
    ASSERT_EQ(chmod(path.c_str(), 0600), 0);
    try {
        AtomicFile refused(path, false);
        FAIL() << "opened an existing file without --force";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("overwrite it with --force"), std::string::npos) << e.what();
    }
    AtomicFile f(path, true);
    f.stream() << "new\n";
    f.stream().flush();
    EXPECT_EQ(read_all(path), "precious\n") << "replaced before the commit";
    f.commit();
    EXPECT_EQ(read_all(path), "new\n");
    struct stat st {};
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600u);
    EXPECT_EQ(entries(dir), 1u);
}

TEST(AtomicFileTest, ALinkIsFollowedToTheFileItNames)
{
    TempDir dir;
    const std::string target = dir.file("target.txt"), link = dir.file("link.txt");
    write_all(target, "old\n");
    std::filesystem::create_symlink(target, link);
    AtomicFile f(link, true);
    f.stream() << "new\n";
    f.commit();
    EXPECT_TRUE(std::filesystem::is_symlink(link));
    EXPECT_EQ(read_all(target), "new\n");
    // A link to nothing is refused: it would create a file elsewhere.
    std::filesystem::create_symlink(dir.file("nowhere"), dir.file("dangling"));
    EXPECT_THROW(AtomicFile(dir.file("dangling"), true), Error);
    EXPECT_FALSE(std::filesystem::exists(dir.file("nowhere")));
}

TEST(AtomicFileTest, AFileCreatedMeanwhileIsNotOverwritten)
{
    TempDir dir;
    const std::string path = dir.file("race.txt");
    AtomicFile f(path, false);
    f.stream() << "mine\n";
    write_all(path, "theirs\n");
    try {
        f.commit();
        FAIL() << "overwrote a file made while it wrote";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("created while lockscope wrote"), std::string::npos) << e.what();
    }
    EXPECT_EQ(read_all(path), "theirs\n");
}

TEST(AtomicFileTest, WhatIsNoRegularFileIsWrittenAsItIs)
{
    AtomicFile f("/dev/null", false);  // no --force needed: nothing is lost
    f.stream() << "discarded\n";
    EXPECT_NO_THROW(f.commit());
    TempDir dir;
    EXPECT_THROW(AtomicFile(dir.path().string(), true), Error);  // a directory
    EXPECT_THROW(AtomicFile(dir.file("no/such/dir/x"), false), Error);
}

TEST(AtomicFileTest, ReplacingASessionLeavesNoTemporaryFileAndTheNewSessionReads)
{
    TempDir dir;
    const std::string path = dir.file("s.lockscope");
    lockscope::testing::write_sample(path, 1, 2, 3);
    {
        SessionWriter w = SessionWriter::create(path, true);
        EXPECT_EQ(load_session(path).intervals.size(), 0u) << "the new session is in place as soon as it exists";
        w.close();
    }
    EXPECT_EQ(entries(dir), 1u);
    EXPECT_EQ(load_session(path).schema_version, kSchemaVersion);
}
