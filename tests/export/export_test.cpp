// Exports of a session with known episodes, stacks and intervals, written
// through the session writer: every figure below is worked out by hand from
// the episodes, so the writer, the episode reader and the exporters are
// checked together.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include "core/analysis/report.h"
#include "core/error.h"
#include "core/render/export.h"
#include "core/storage/session_store.h"
#include "profile.pb.h"

#include <zlib.h>
#include <array>

namespace lockscope {
namespace {

constexpr uint64_t kStart = 1'000'000'000;  // the run starts here (CLOCK_MONOTONIC ns)
constexpr uint64_t kMutex = 0xffff'8880'0000'1000;
constexpr uint64_t kRwsem = 0xffff'8880'0000'2000;

std::filesystem::path temp_dir()
{
    return std::filesystem::temp_directory_path() / ("lockscope-export-test-" + std::to_string(getpid()));
}

std::string temp_file(const std::string& name)
{
    std::filesystem::create_directories(temp_dir());
    std::filesystem::remove(temp_dir() / name);
    return (temp_dir() / name).string();
}

class RemoveTempDir : public ::testing::Environment {
public:
    void TearDown() override
    {
        std::error_code ignored;
        std::filesystem::remove_all(temp_dir(), ignored);
    }
};
const auto* const kCleanup = ::testing::AddGlobalTestEnvironment(new RemoveTempDir);

EpisodePhase phase(bool spin, uint64_t at, int owner = -1)
{
    return {spin, kStart + at, owner};
}

Episode episode(uint32_t tid, uint64_t lock, uint32_t flags, uint64_t begin, uint64_t end,
                std::vector<EpisodePhase> phases, uint64_t spin_ns)
{
    Episode e;
    e.tid = tid;
    e.tgid = 100;
    e.lock_address = lock;
    e.lock_flags = flags;
    e.begin_ns = kStart + begin;
    e.end_ns = kStart + end;
    e.phases = std::move(phases);
    e.spin_ns = spin_ns;
    return e;
}

// Three episodes:
//   A: thread 101, pipe->mutex: spin 1 µs, queued 4 µs (owner on CPU), spin 1 µs; woken by 100
//   B: thread 100, mmap_lock (write): queued 10 µs (reader-owned), asleep 8 µs of it
//   C: thread 101, pipe->mutex: spin 0.5 µs
std::vector<Episode> known_episodes()
{
    Episode a = episode(101, kMutex, 32, 100'000, 106'000,
                        {phase(true, 100'000), phase(false, 101'000, 0), phase(true, 105'000)}, 2'000);
    a.waker_tid = 100;
    Episode b = episode(100, kRwsem, 4, 200'000, 210'000, {phase(false, 200'000, 2)}, 0);
    b.sleep_ns = 8'000;
    b.sleeps = 1;
    b.waker_tid = 101;  // thread 101 woke it at 207 µs
    b.waker_tgid = 100;
    b.wake_ns = kStart + 207'000;
    Episode c = episode(101, kMutex, 32, 300'000, 300'500, {phase(true, 300'000)}, 500);
    return {a, b, c};
}

LockCounters mutex_counters()
{
    LockCounters c;
    c.contentions = 2;
    c.spin_attempts = 3;
    c.spin_failures = 1;
    c.spin_successes = 2;
    c.wait_ns = 6'500;
    c.spin_ns = 2'500;
    c.max_wait_ns = 6'000;
    c.wakeups = 1;
    c.owner[0] = 1;
    return c;
}

LockCounters rwsem_counters()
{
    LockCounters c;
    c.contentions = 1;
    c.wait_ns = 10'000;
    c.sleep_ns = 8'000;
    c.max_wait_ns = 10'000;
    c.sleeps = 1;
    c.owner[2] = 1;
    return c;
}

void write_session(const std::string& path, bool traced)
{
    SessionWriter w = SessionWriter::create(path, true);
    if (traced)
        w.set_meta({{"trace", "on"}, {"host", "testhost"}});
    else
        w.set_meta({{"host", "testhost"}});
    const int64_t run = w.begin_run("run", kStart);
    IntervalBatch b;
    b.totals.run = run;
    b.totals.index = 0;
    b.totals.start_ns = kStart;
    b.totals.end_ns = kStart + 1'000'000'000;
    b.totals.cpu_ns = 2'000'000'000;
    b.totals.idle_ns = 500'000'000;
    b.totals.events = 8;
    b.totals.counters = mutex_counters();
    b.totals.counters.add(rwsem_counters());
    b.new_locks = {{1, "pipe->mutex", "mutex", "", "anon_pipe_read", kMutex, 32},
                   {2, "mmap_lock", "rwsem", "write", "vm_mmap_pgoff", kRwsem, 4}};
    b.locks = {{run, 0, 1, mutex_counters()}, {run, 0, 2, rwsem_counters()}};
    // Two sampled stacks of the mutex, none of the rwsem.
    b.stacks = {{run,
                 1,
                 "waiter",
                 {"__traceiter_contention_end+0x4/0x10", "__mutex_lock+0x10/0x20", "anon_pipe_read+0x5/0x30",
                  "vfs_read+0x1/0x2"},
                 1,
                 100},
                {run, 1, "waiter", {"__mutex_lock+0x10/0x20", "anon_pipe_write+0x5/0x30"}, 1, 200},
                {run, 1, "waker", {"mutex_unlock+0x1/0x2"}, 1, 0}};
    b.tasks = {{run, 100, 100, "main", rwsem_counters()}, {run, 101, 100, "worker", mutex_counters()}};
    if (traced)
        b.episodes = known_episodes();
    b.run.id = run;
    w.write_interval(b);
    RunInfo r = b.run;
    r.end_ns = b.totals.end_ns;
    r.status = "complete";
    w.end_run(r);
    w.close();
}

Session load(const std::string& path)
{
    LoadOptions o;
    o.lock_intervals = false;  // what `lockscope export` loads
    return load_session(path, o);
}

TEST(EpisodeStore, RoundTripsThroughTheWriterAndMapsToLockRows)
{
    const std::string path = temp_file("roundtrip.lockscope");
    write_session(path, true);
    EpisodeReader reader(path);
    EXPECT_EQ(reader.count(), 3u);
    EXPECT_EQ(reader.first_begin_ns(), kStart + 100'000);
    std::vector<Episode> read;
    EXPECT_EQ(reader.for_each([&](const Episode& e) { read.push_back(e); }), 0u);
    std::vector<Episode> want = known_episodes();
    ASSERT_EQ(read.size(), want.size());
    const int64_t lock_ids[] = {1, 2, 1};
    for (size_t i = 0; i < want.size(); ++i) {
        want[i].run = 1;
        want[i].lock_id = lock_ids[i];
        EXPECT_EQ(read[i], want[i]) << "episode " << i;
    }
    // The loader proper never reads episodes.
    EXPECT_EQ(load(path).locks.size(), 2u);
}

TEST(EpisodeStore, SessionsWithoutWakeTimesReadAsNeverWoken)
{
    const std::string path = temp_file("nowake.lockscope");
    write_session(path, true);
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    // The episodes table as it was before the waker's process and wake time.
    for (const char* sql : {"ALTER TABLE episodes DROP COLUMN wake_ns", "ALTER TABLE episodes DROP COLUMN waker_tgid"})
        ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sql;
    sqlite3_close(db);
    std::vector<Episode> read;
    EXPECT_EQ(EpisodeReader(path).for_each([&](const Episode& e) { read.push_back(e); }), 0u);
    ASSERT_EQ(read.size(), 3u);
    EXPECT_EQ(read[1].waker_tid, 101u);
    EXPECT_EQ(read[1].waker_tgid, 0u);
    EXPECT_EQ(read[1].wake_ns, 0u);
    ChromeTraceSummary sum;
    std::ostringstream out;
    sum = export_chrome_trace(path, load(path), out);
    EXPECT_EQ(sum.episodes, 3u);
    EXPECT_EQ(sum.flows, 0u) << "no wake time, no arrow";
}

TEST(EpisodeStore, PhaseEncodingIsCompactAndStrict)
{
    Episode e = known_episodes()[0];
    EXPECT_EQ(encode_phases(e), "s0 q1000:0 s5000");
    Episode back = e;
    ASSERT_TRUE(decode_phases("s0 q1000:0 s5000", back));
    EXPECT_EQ(back.phases, e.phases);
    for (const char* bad : {"x0", "s", "s0 ", "s7000", "s10 s5", "q0:9", "q0:", "s0  s1", "s-1"})
        EXPECT_FALSE(decode_phases(bad, back)) << bad;
}

TEST(EpisodeStore, InvalidRowsAreSkippedAndOldSessionsHaveNone)
{
    const std::string path = temp_file("hostile.lockscope");
    write_session(path, true);
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "UPDATE episodes SET phases = 'z' WHERE tid = 100", nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
    size_t seen = 0;
    EXPECT_EQ(EpisodeReader(path).for_each([&](const Episode&) { seen++; }), 1u);
    EXPECT_EQ(seen, 2u);

    // A session written before the table existed.
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "DROP TABLE episodes", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
    EpisodeReader old(path);
    EXPECT_EQ(old.count(), 0u);
    EXPECT_EQ(old.for_each([&](const Episode&) { seen++; }), 0u);
    EXPECT_EQ(seen, 2u);
    std::ostringstream out;
    EXPECT_FALSE(export_chrome_trace(path, load(path), out).episodes);
}

nlohmann::json chrome_trace(const std::string& path, ChromeTraceSummary* summary = nullptr)
{
    std::ostringstream out;
    ChromeTraceSummary s = export_chrome_trace(path, load(path), out);
    if (summary)
        *summary = s;
    return nlohmann::json::parse(out.str());
}

TEST(ChromeTrace, EpisodePhasesAreSlicesOnTheirThreadsTrack)
{
    const std::string path = temp_file("trace.lockscope");
    write_session(path, true);
    ChromeTraceSummary sum;
    const nlohmann::json j = chrome_trace(path, &sum);
    EXPECT_TRUE(sum.traced);
    EXPECT_EQ(sum.episodes, 3u);
    EXPECT_EQ(sum.lost, 0u);
    EXPECT_EQ(j["displayTimeUnit"], "ns");
    EXPECT_EQ(j["otherData"]["time_origin_ns"], kStart);
    EXPECT_EQ(j["otherData"]["session"]["host"], "testhost");

    std::vector<nlohmann::json> slices, marks, flows;
    std::map<std::string, std::string> names;  // "M" events: "pid/tid" -> name
    for (const auto& e : j["traceEvents"]) {
        if (e["ph"] == "X" && e["name"].get<std::string>().rfind("wakes ", 0) == 0)
            marks.push_back(e);
        else if (e["ph"] == "X")
            slices.push_back(e);
        if (e["ph"] == "s" || e["ph"] == "f")
            flows.push_back(e);
        if (e["ph"] == "M")
            names[e["name"].get<std::string>() + " " + std::to_string(e["pid"].get<int>()) + "/" +
                  std::to_string(e.value("tid", -1))] = e["args"]["name"];
    }
    EXPECT_EQ(names["process_name 100/-1"], "main 100");
    EXPECT_EQ(names["thread_name 100/101"], "worker 101");
    EXPECT_EQ(names["process_name 0/-1"], "machine");

    // A: spin, queued (owner on CPU), spin; B: queued, woken at 207 µs; C: spin.
    ASSERT_EQ(slices.size(), 6u);
    const struct {
        const char* name;
        const char* cat;
        int tid;
        double ts, dur;
    } want[] = {{"pipe->mutex", "spin", 101, 100.0, 1.0}, {"pipe->mutex", "queued", 101, 101.0, 4.0},
                {"pipe->mutex", "spin", 101, 105.0, 1.0}, {"mmap_lock", "queued", 100, 200.0, 7.0},
                {"mmap_lock", "woken", 100, 207.0, 3.0},  {"pipe->mutex", "spin", 101, 300.0, 0.5}};
    for (size_t i = 0; i < slices.size(); ++i) {
        const auto& s = slices[i];
        SCOPED_TRACE(s.dump());
        EXPECT_EQ(s["name"], want[i].name);
        EXPECT_EQ(s["cat"], want[i].cat);
        EXPECT_EQ(s["pid"], 100);
        EXPECT_EQ(s["tid"], want[i].tid);
        EXPECT_DOUBLE_EQ(s["ts"].get<double>(), want[i].ts);
        EXPECT_DOUBLE_EQ(s["dur"].get<double>(), want[i].dur);
    }
    EXPECT_EQ(slices[1]["args"]["owner"], "on-cpu");
    EXPECT_EQ(slices[1]["args"]["waker"], 100);
    EXPECT_EQ(slices[1]["args"]["caller"], "anon_pipe_read");
    EXPECT_EQ(slices[1]["args"]["episode_wait_ns"], 6000);
    EXPECT_EQ(slices[3]["args"]["owner"], "reader-owned");
    EXPECT_EQ(slices[3]["args"]["kind"], "rwsem/write");
    EXPECT_EQ(slices[3]["args"]["offcpu_ns"], 8000);
    EXPECT_EQ(slices[4]["args"]["owner"], "reader-owned");
    EXPECT_FALSE(slices[5]["args"].contains("waker"));

    // Who unblocked whom: a 1 ns mark on the waker's track (thread 101) and a
    // flow from it to the woken slice; A's waker has no wake time (an older
    // session's episode): no arrow.
    EXPECT_EQ(j["otherData"]["wakeup_flows"], 1);
    ASSERT_EQ(marks.size(), 1u);
    EXPECT_EQ(marks[0]["tid"], 101);
    EXPECT_DOUBLE_EQ(marks[0]["ts"].get<double>(), 207.0);
    EXPECT_DOUBLE_EQ(marks[0]["dur"].get<double>(), 0.001);
    EXPECT_EQ(marks[0]["args"]["woken_tid"], 100);
    ASSERT_EQ(flows.size(), 2u);
    EXPECT_EQ(flows[0]["ph"], "s");
    EXPECT_EQ(flows[1]["ph"], "f");
    EXPECT_EQ(flows[0]["id"], flows[1]["id"]);
    EXPECT_EQ(flows[0]["cat"], flows[1]["cat"]);
    EXPECT_EQ(flows[0]["tid"], 101);
    EXPECT_EQ(flows[1]["tid"], 100);
    EXPECT_EQ(flows[1]["bp"], "e");
    for (const auto& f : flows)
        EXPECT_DOUBLE_EQ(f["ts"].get<double>(), 207.0);

    // Slices add up to the session's wait and spin totals.
    uint64_t all = 0, spin = 0;
    for (const auto& s : slices) {
        const auto ns = uint64_t(std::llround(s["dur"].get<double>() * 1000));
        all += ns;
        spin += s["cat"] == "spin" ? ns : 0;
    }
    const Report rep = build_report(load(path), {});
    EXPECT_EQ(all, rep.totals.counters.wait_ns);
    EXPECT_EQ(spin, rep.totals.counters.spin_ns);
}

TEST(ChromeTrace, CountersPerIntervalWithOrWithoutTrace)
{
    for (bool traced : {true, false}) {
        const std::string path = temp_file(traced ? "c1.lockscope" : "c0.lockscope");
        write_session(path, traced);
        ChromeTraceSummary sum;
        const nlohmann::json j = chrome_trace(path, &sum);
        EXPECT_EQ(sum.traced, traced);
        std::vector<nlohmann::json> counters;
        size_t slices = 0;
        for (const auto& e : j["traceEvents"]) {
            if (e["ph"] == "C")
                counters.push_back(e);
            slices += e["ph"] == "X";
        }
        EXPECT_EQ(slices, traced ? 7u : 0u);  // 5 phases, one split at its wake-up, the waker's mark
        // One interval: a sample at its start and one closing it at its end.
        ASSERT_EQ(counters.size(), 6u);
        EXPECT_EQ(counters[0]["name"], "CPU idle");
        EXPECT_DOUBLE_EQ(counters[0]["ts"].get<double>(), 0.0);
        EXPECT_DOUBLE_EQ(counters[0]["args"]["idle %"].get<double>(), 25.0);
        EXPECT_EQ(counters[1]["name"], "contentions/s");
        EXPECT_DOUBLE_EQ(counters[1]["args"]["contentions/s"].get<double>(), 3.0);
        // The wait's four parts in ms per second: 2.5 µs spinning, 6 µs
        // queued on CPU, 8 µs asleep in the interval's second.
        EXPECT_EQ(counters[2]["name"], "wait ms/s");
        EXPECT_DOUBLE_EQ(counters[2]["args"]["spinning"].get<double>(), 0.0025);
        EXPECT_DOUBLE_EQ(counters[2]["args"]["queued_on_cpu"].get<double>(), 0.006);
        EXPECT_DOUBLE_EQ(counters[2]["args"]["asleep"].get<double>(), 0.008);
        EXPECT_DOUBLE_EQ(counters[2]["args"]["runnable"].get<double>(), 0.0);
        EXPECT_DOUBLE_EQ(counters[3]["ts"].get<double>(), 1e6);
    }
}

std::string folded(const std::string& path, FoldedWeight w)
{
    std::ostringstream out;
    export_folded(load(path), w, out);
    return out.str();
}

TEST(Folded, LockTotalsAreSpreadOverSampledStacksExactly)
{
    const std::string path = temp_file("folded.lockscope");
    write_session(path, true);
    // The mutex's wait parts over sampled waits 100 : 200, each shared on
    // its own (largest remainders): 2500 ns spinning is 833 : 1667, 4000 ns
    // queued on CPU 1333 : 2667; a stack's wait is the sum of its parts. The
    // rwsem has no stack.
    EXPECT_EQ(folded(path, FoldedWeight::WaitNs),
              "mmap_lock [rwsem/write];[no stack sampled] 10000\n"
              "pipe->mutex [mutex];anon_pipe_write;__mutex_lock 4334\n"
              "pipe->mutex [mutex];vfs_read;anon_pipe_read;__mutex_lock 2166\n");
    EXPECT_EQ(folded(path, FoldedWeight::Contentions),
              "mmap_lock [rwsem/write];[no stack sampled] 1\n"
              "pipe->mutex [mutex];anon_pipe_write;__mutex_lock 1\n"
              "pipe->mutex [mutex];vfs_read;anon_pipe_read;__mutex_lock 1\n");
}

// The profile back: gunzipped and parsed with the same schema.
perftools::profiles::Profile pprof(const std::string& path)
{
    std::ostringstream out;
    export_pprof(load(path), out);
    const std::string gz = out.str();
    EXPECT_GE(gz.size(), 2u);
    EXPECT_EQ(uint8_t(gz[0]), 0x1f);  // gzip magic
    EXPECT_EQ(uint8_t(gz[1]), 0x8b);
    z_stream z{};
    inflateInit2(&z, 15 + 16);
    std::string raw(1 << 20, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
    z.avail_in = uInt(gz.size());
    z.next_out = reinterpret_cast<Bytef*>(raw.data());
    z.avail_out = uInt(raw.size());
    EXPECT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
    raw.resize(z.total_out);
    inflateEnd(&z);
    perftools::profiles::Profile p;
    EXPECT_TRUE(p.ParseFromString(raw));
    return p;
}

TEST(Pprof, MutexProfileTypesAndValuesThatAddUpToTheLocksTotals)
{
    const std::string path = temp_file("pprof.lockscope");
    write_session(path, true);
    const perftools::profiles::Profile p = pprof(path);
    ASSERT_GT(p.string_table_size(), 0);
    EXPECT_EQ(p.string_table(0), "");
    auto str = [&](int64_t i) { return p.string_table(int(i)); };
    ASSERT_EQ(p.sample_type_size(), 6);
    EXPECT_EQ(str(p.sample_type(0).type()) + "/" + str(p.sample_type(0).unit()), "contentions/count");
    EXPECT_EQ(str(p.sample_type(1).type()) + "/" + str(p.sample_type(1).unit()), "delay/nanoseconds");
    const char* const parts[] = {"spinning", "queued_on_cpu", "asleep", "runnable"};
    for (int i = 0; i < 4; ++i)
        EXPECT_EQ(str(p.sample_type(2 + i).type()) + "/" + str(p.sample_type(2 + i).unit()),
                  std::string(parts[i]) + "/nanoseconds");
    // Per lock (its root frame, the last location), the values are the lock's totals.
    std::map<std::string, std::array<int64_t, 6>> by_lock;
    std::map<uint64_t, std::string> name_of;
    for (const auto& f : p.function())
        name_of[f.id()] = str(f.name());
    for (const auto& s : p.sample()) {
        ASSERT_EQ(s.value_size(), 6);
        ASSERT_GT(s.location_id_size(), 0);
        // In every sample the four parts add up to the delay.
        EXPECT_EQ(s.value(2) + s.value(3) + s.value(4) + s.value(5), s.value(1));
        const std::string root =
            name_of[p.location(int(s.location_id(s.location_id_size() - 1) - 1)).line(0).function_id()];
        for (int i = 0; i < 6; ++i)
            by_lock[root][size_t(i)] += s.value(i);
    }
    const Report r = build_report(load(path), ReportOptions{.top = 0});
    ASSERT_EQ(by_lock.size(), r.rows.size());
    for (const ReportRow& row : r.rows) {
        const std::string root = row.name + " [" + row.kind + (row.mode.empty() ? "" : "/" + row.mode) + "]";
        ASSERT_TRUE(by_lock.count(root)) << root;
        EXPECT_EQ(uint64_t(by_lock[root][0]), row.counters.contentions) << root;
        EXPECT_EQ(uint64_t(by_lock[root][1]), row.counters.wait_ns) << root;
        EXPECT_EQ(uint64_t(by_lock[root][2]), row.counters.spinning_ns()) << root;
        EXPECT_EQ(uint64_t(by_lock[root][3]), row.counters.queued_on_cpu_ns()) << root;
        EXPECT_EQ(uint64_t(by_lock[root][4]), row.counters.asleep_ns()) << root;
        EXPECT_EQ(uint64_t(by_lock[root][5]), row.counters.runnable_ns()) << root;
    }
    // The same stacks as the folded export, innermost frame first.
    bool saw_write = false;
    for (const auto& s : p.sample())
        saw_write |= name_of[p.location(int(s.location_id(0) - 1)).line(0).function_id()] == "__mutex_lock" &&
                     name_of[p.location(int(s.location_id(1) - 1)).line(0).function_id()] == "anon_pipe_write";
    EXPECT_TRUE(saw_write);
}

TEST(Csv, IntervalsAndLocks)
{
    const std::string path = temp_file("csv.lockscope");
    write_session(path, true);
    const Session s = load(path);
    // The intervals table needs the per-interval lock rows (`export` loads
    // them for it) to tell a measured maximum from a bound: the rows of the
    // first interval of a run are measured. The wait's parts and the bound
    // come after the older columns, then the holder split's (none of this
    // wait's holders was followed: all of it is unknown).
    std::ostringstream intervals;
    export_csv(load_session(path), CsvTable::Intervals, intervals);
    EXPECT_EQ(intervals.str(),
              "run,interval,start_s,end_s,seconds,contentions,spin_attempts,spin_failures,"
              "spin_successes,wait_ns,spin_ns,offcpu_ns,sleep_ns,preempt_ns,sleeps,preemptions,"
              "max_wait_ns,errors,wakeups,timed,wait_var_us2,spin_offcpu_ns,spin_yields,idle_fraction,events,lost,ops,"
              "spinning_ns,queued_on_cpu_ns,asleep_ns,runnable_ns,max_wait_bound_ns,"
              "holder_running_ns,holder_runnable_ns,holder_asleep_ns,holder_unknown_ns\n"
              "1,0,0,1,1,3,3,1,2,16500,2500,8000,8000,0,1,0,10000,0,1,0,0,0,0,0.25,8,0,,2500,6000,8000,0,10000,"
              "0,0,0,16500\n");
    // Loaded with per-run totals only, nothing says which maximum was measured.
    std::ostringstream from_totals;
    export_csv(s, CsvTable::Intervals, from_totals);
    EXPECT_NE(from_totals.str().find(",1,0,,0,1,"), std::string::npos) << from_totals.str();
    std::ostringstream locks;
    export_csv(s, CsvTable::Locks, locks);
    ReportOptions all;
    all.top = 0;
    EXPECT_EQ(locks.str(), format_csv(build_report(s, all)));
    EXPECT_NE(locks.str().find("\nmmap_lock,rwsem,write,vm_mmap_pgoff,1,0,0,0,0,10000,0,8000,"), std::string::npos)
        << locks.str();
}

TEST(ExportOptions, UnknownSpellingsAreUsageErrors)
{
    EXPECT_EQ(parse_export_format("folded"), ExportFormat::Folded);
    EXPECT_EQ(parse_export_format("pprof"), ExportFormat::Pprof);
    EXPECT_THROW(parse_export_format("svg"), UsageError);
    EXPECT_THROW(parse_folded_weight("spin"), UsageError);
    EXPECT_THROW(parse_csv_table("stacks"), UsageError);
    EXPECT_EQ(parse_csv_table("user-locks"), CsvTable::UserLocks);
    // Each message lists every spelling the option takes.
    auto message = [](auto parse, const std::string& text) {
        try {
            parse(text);
        } catch (const UsageError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(message(parse_export_format, "svg"), "unknown format 'svg': use chrome-trace, folded, csv or pprof");
    EXPECT_EQ(message(parse_folded_weight, "spin"), "unknown weight 'spin': use wait or contentions");
    EXPECT_EQ(message(parse_csv_table, "stacks"), "unknown table 'stacks': use locks, intervals or user-locks");
}

}  // namespace
}  // namespace lockscope
