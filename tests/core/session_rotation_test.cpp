// record --session-dir: the series' names sort by start time, and pruning
// removes the oldest files (never the one being written, never a file of
// another name) until the count and size limits hold.
#include "core/storage/session_rotation.h"
#include "core/error.h"
#include "sample_session.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

using namespace lockscope;
using lockscope::testing::TempDir;
namespace fs = std::filesystem;

namespace {

std::string make(const TempDir& dir, time_t seconds, size_t bytes)
{
    const std::string path = dir.file(rotated_session_name(timespec{seconds, 5000000}));
    std::ofstream(path) << std::string(bytes, 'x');
    return path;
}

}  // namespace

TEST(SessionRotation, NamesSortInTheOrderTheFilesStarted)
{
    EXPECT_EQ(rotated_session_name(timespec{0, 123456789}), "lockscope-19700101-000000.123.lockscope");
    EXPECT_LT(rotated_session_name(timespec{999999999, 999000000}), rotated_session_name(timespec{1000000000, 0}));
}

TEST(SessionRotation, KeepRemovesTheOldestButNeverTheCurrentOrOtherFiles)
{
    TempDir dir;
    const std::string a = make(dir, 1000, 10), b = make(dir, 2000, 10), c = make(dir, 3000, 10);
    const std::string current = make(dir, 4000, 10);
    const std::string mine = dir.file("lockscope-mine.lockscope");
    std::ofstream(mine) << "not part of the series";
    RotationPolicy policy;
    policy.dir = dir.path();
    policy.keep = 2;
    EXPECT_EQ(rotated_sessions(dir.path()), (std::vector<std::string>{a, b, c, current}));
    EXPECT_EQ(prune_sessions(policy, current), (std::vector<std::string>{a, b}));
    EXPECT_FALSE(fs::exists(a));
    EXPECT_FALSE(fs::exists(b));
    EXPECT_TRUE(fs::exists(c));
    EXPECT_TRUE(fs::exists(current));
    EXPECT_TRUE(fs::exists(mine));
    policy.keep = 1;  // only the current one fits
    EXPECT_EQ(prune_sessions(policy, current), (std::vector<std::string>{c}));
    EXPECT_TRUE(fs::exists(current));
}

TEST(SessionRotation, MaxBytesCountsEveryFileWithItsLog)
{
    TempDir dir;
    const std::string a = make(dir, 1000, 400), b = make(dir, 2000, 400), c = make(dir, 3000, 100);
    std::ofstream(c + "-wal") << std::string(300, 'w');  // c is being written: 400 bytes in all
    EXPECT_EQ(session_bytes(c), 400u);
    RotationPolicy policy;
    policy.dir = dir.path();
    policy.max_bytes = 1000;
    EXPECT_EQ(prune_sessions(policy, c), (std::vector<std::string>{a}));
    EXPECT_TRUE(fs::exists(b));
    policy.max_bytes = 100;  // the current file alone is over: it stays, all others go
    EXPECT_EQ(prune_sessions(policy, c), (std::vector<std::string>{b}));
    EXPECT_TRUE(fs::exists(c));
    EXPECT_EQ(policy.file_bytes(), 25u);
}

TEST(SessionRotation, AnUnreadableDirectoryIsAnError)
{
    RotationPolicy policy;
    policy.dir = "/nonexistent/lockscope-sessions";
    policy.keep = 1;
    EXPECT_THROW(prune_sessions(policy, ""), Error);
}
