// record --session-dir, as the exporter service runs it: with a size limit
// far smaller than a few seconds of a busy workload, old files are removed,
// the series stays under the limit, and every file kept is a whole session
// that continues where the previous one ended.
#include <signal.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "core/storage/session_rotation.h"
#include "core/storage/session_store.h"
#include "root_helpers.h"
#include "subprocess.h"

namespace lockscope::test {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> matches(const std::string& text, const std::string& pattern)
{
    std::vector<std::string> out;
    const std::regex re(pattern);
    for (std::sregex_iterator it(text.begin(), text.end(), re), end; it != end; ++it)
        out.push_back((*it)[1]);
    return out;
}

TEST(SessionRotation, ATinySizeLimitRemovesOldSessionsAndKeepsTheNewestWhole)
{
    LOCKSCOPE_REQUIRE_BPF();
    const std::string dir = temp_path("series");
    constexpr uint64_t kLimit = 1024 * 1024;
    // A thousand contended pipes: each interval adds a lot to a session.
    Process load = Process::start({lockscope_bin(), "workload", "pipes", "-t", "2", "-d", "30"});
    Process rec = Process::start({lockscope_bin(), "record", "--prometheus", "127.0.0.1:0", "-i", "0.25",
                                  "--session-dir", dir, "--rotate-every", "1h", "--max-mib", "1"});
    // Two files removed (the first two started): the limit held while files kept coming.
    ASSERT_TRUE(rec.wait_for_stderr("complete, now writing", 60)) << rec.stderr_so_far();
    std::vector<std::string> second;
    for (int i = 0; i < 50 && second.empty(); i++) {
        rec.wait_for_stderr("(the rest of the line)", 0.1);
        second = matches(rec.stderr_so_far(), "now writing (\\S+)\n");
    }
    ASSERT_FALSE(second.empty()) << rec.stderr_so_far();
    EXPECT_TRUE(rec.wait_for_stderr("removed the old session " + second[0], 60)) << rec.stderr_so_far();
    rec.signal(SIGTERM);
    Finished f = rec.wait(60);
    load.signal(SIGINT);
    load.wait(60);
    ASSERT_EQ(f.exit_code, 0) << f.err;

    std::vector<std::string> started = matches(f.err, "recording system-wide into (\\S+) ");
    for (const std::string& s : matches(f.err, "now writing (\\S+)\n"))
        started.push_back(s);
    const std::vector<std::string> removed = matches(f.err, "removed the old session (\\S+)\n");
    ASSERT_GE(removed.size(), 2u) << f.err;
    for (const std::string& r : removed)
        EXPECT_FALSE(fs::exists(r)) << r << " was reported removed";

    const std::vector<std::string> kept = rotated_sessions(dir);
    ASSERT_FALSE(kept.empty());
    EXPECT_EQ(kept.back(), started.back()) << "the newest file is not the last one started";
    uint64_t bytes = 0;
    for (const std::string& k : kept)
        bytes += session_bytes(k);
    EXPECT_LE(bytes, kLimit) << kept.size() << " files kept";

    uint64_t previous_end = 0;
    for (size_t i = 0; i < kept.size(); i++) {
        const Session s = load_session(kept[i]);
        EXPECT_TRUE(s.warnings.empty()) << kept[i];
        ASSERT_EQ(s.runs.size(), 1u) << kept[i];
        EXPECT_EQ(s.runs[0].status, i + 1 == kept.size() ? "interrupted" : "complete") << kept[i];
        EXPECT_GE(s.intervals.size(), 1u) << kept[i];
        EXPECT_FALSE(s.locks.empty()) << kept[i];
        EXPECT_EQ(s.meta_value("scope"), "system") << kept[i];
        if (previous_end) {
            EXPECT_EQ(s.runs[0].start_ns, previous_end) << kept[i] << " does not start where the one before ended";
        }
        previous_end = s.runs[0].end_ns;
    }
    Finished report = run({lockscope_bin(), "report", kept.back()});
    EXPECT_EQ(report.exit_code, 0) << report.err;
    EXPECT_NE(report.out.find("pipe_inode_info.mutex"), std::string::npos) << report.out;
    std::error_code ec;
    fs::remove_all(dir, ec);
}

// The contentions of one process's tasks.
uint64_t contentions_of(const Session& s, pid_t tgid)
{
    uint64_t n = 0;
    for (const TaskStats& t : s.tasks)
        if (t.tgid == uint32_t(tgid))
            n += t.counters.contentions;
    return n;
}

TEST(SessionRotation, AFreshProbeTakesOverWithNothingLostOrCountedTwice)
{
    LOCKSCOPE_REQUIRE_BPF();
    const std::string dir = temp_path("renewed");
    // A table of 64 locks and 40 contended pipes: half full within a file or
    // two whatever else contends (on a quiet machine, nothing), then a file
    // starts with a fresh probe.
    Process series =
        Process::start({lockscope_bin(), "record", "--prometheus", "127.0.0.1:0", "-i", "0.25", "--session-dir", dir,
                        "--rotate-every", "1s", "--keep", "1000", "--max-locks", "64"});
    ASSERT_TRUE(series.wait_for_stderr("recording system-wide", 60)) << series.stderr_so_far();
    // The independent count: a second recorder of the workload alone, one
    // probe throughout, its tables far from full.
    Process load = Process::start({lockscope_bin(), "workload", "pipes", "--locks", "40", "-t", "2", "-d", "6"},
                                  /*hold=*/true);
    const pid_t load_pid = load.pid();
    const std::string single = temp_path("single.lockscope");
    Process one = Process::start({lockscope_bin(), "record", "-p", std::to_string(load_pid), "-o", single});
    ASSERT_TRUE(one.wait_for_stderr("lockscope: recording", 60)) << one.stderr_so_far();
    load.release();
    ASSERT_EQ(load.wait(60).exit_code, 0);
    Finished o = one.wait(60);
    ASSERT_EQ(o.exit_code, 0) << o.err;
    series.signal(SIGTERM);
    Finished f = series.wait(60);
    ASSERT_EQ(f.exit_code, 0) << f.err;
    EXPECT_NE(f.err.find("a fresh probe takes over with the next session"), std::string::npos) << f.err;

    const std::vector<std::string> kept = rotated_sessions(dir);
    ASSERT_GE(kept.size(), 4u) << f.err;
    uint64_t lock_map_full = 0, series_contentions = 0, previous_end = 0;
    for (const std::string& k : kept) {
        const Session s = load_session(k);
        EXPECT_TRUE(s.warnings.empty()) << k;
        ASSERT_EQ(s.runs.size(), 1u) << k;
        lock_map_full += s.runs[0].lost.lock_map_full;
        series_contentions += contentions_of(s, load_pid);
        if (previous_end) {
            EXPECT_EQ(s.runs[0].start_ns, previous_end) << k << " does not start where the one before ended";
        }
        previous_end = s.runs[0].end_ns;
    }
    EXPECT_EQ(lock_map_full, 0u) << "locks lost to a full table";
    const uint64_t single_contentions = contentions_of(load_session(single), load_pid);
    ASSERT_GT(single_contentions, 1000u) << "the workload contended too little to judge";
    // Only the moments between an old probe's last read and a fresh one's
    // first go uncounted.
    EXPECT_NEAR(double(series_contentions), double(single_contentions), 0.02 * double(single_contentions));
    std::error_code ec;
    fs::remove_all(dir, ec);
}

TEST(SessionRotation, ASeriesWithoutALimitIsRefusedBeforeAnythingIsCreated)
{
    const std::string dir = temp_path("unbounded");
    Finished f = run({lockscope_bin(), "record", "--session-dir", dir, "-d", "1"});
    EXPECT_EQ(f.exit_code, 2) << f.err;
    EXPECT_NE(f.err.find("--keep N or --max-mib M"), std::string::npos) << f.err;
    EXPECT_FALSE(fs::exists(dir));
    f = run({lockscope_bin(), "record", "--keep", "3", "-d", "1"});
    EXPECT_EQ(f.exit_code, 2) << f.err;
    EXPECT_NE(f.err.find("--keep goes with --session-dir"), std::string::npos) << f.err;
}

}  // namespace
}  // namespace lockscope::test
