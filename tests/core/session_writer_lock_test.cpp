// One writer per session file: a second one, even told to overwrite, must
// not truncate the file or unlink the WAL of a session being recorded.
#include "core/error.h"
#include "core/storage/session_store.h"
#include "sample_session.h"

#include <gtest/gtest.h>

#include <string>

using namespace lockscope;
using lockscope::testing::sample_batch;
using lockscope::testing::TempDir;

TEST(SessionWriterLockTest, OverwritingASessionBeingWrittenIsRefusedUntilItCloses)
{
    TempDir dir;
    const std::string path = dir.file("busy.lockscope");
    auto first = SessionWriter::create(path, false);
    const int64_t run = first.begin_run("run", 0);
    first.write_interval(sample_batch(run, 0, 2));
    try {
        SessionWriter::create(path, true);
        FAIL() << "a second writer truncated a session being written";
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()),
                  "cannot create session file '" + path + "' (another lockscope is recording into it)");
    }
    // The first writer's session is intact and it keeps writing.
    first.write_interval(sample_batch(run, 1, 2));
    EXPECT_EQ(load_session(path).intervals.size(), 2u);
    SessionWriter moved = std::move(first);  // the claim moves with the writer
    EXPECT_THROW(SessionWriter::create(path, true), Error);
    moved.close();
    EXPECT_NO_THROW(SessionWriter::create(path, true).close());
    EXPECT_EQ(load_session(path).intervals.size(), 0u);
}
