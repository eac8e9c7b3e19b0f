// The Prometheus exposition: histogram buckets exact against the kernel's
// own log2 bucketing, bounded series with monotonic counters, and the text
// a scrape returns.
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <cmath>
#include <random>

#include "core/error.h"
#include "metrics/exporter.h"
#include "metrics/exposition.h"

extern "C" {
#include "episode.h"
}

namespace lockscope::metrics {
namespace {

LockInfo lock(int64_t id, const std::string& name, const std::string& kind = "mutex", const std::string& mode = "")
{
    LockInfo l;
    l.id = id;
    l.name = name;
    l.kind = kind;
    l.mode = mode;
    return l;
}

LockInterval delta(int64_t id, uint64_t contentions, uint64_t wait_ns)
{
    LockInterval d;
    d.lock_id = id;
    d.counters.contentions = contentions;
    d.counters.spin_attempts = contentions * 2;
    d.counters.spin_failures = contentions / 2;
    d.counters.wait_ns = wait_ns;
    d.counters.hist[10] = contentions;
    return d;
}

TEST(MetricsBuckets, CumulativeCountsMatchTheWaitsThemselves)
{
    // Waits at and around every power of two, bucketed by the kernel's code.
    std::vector<uint64_t> waits{0, 1, 2, 3};
    for (int p = 2; p < 40; p++)
        for (int64_t off : {-1, 0, 1})
            waits.push_back(uint64_t((int64_t(1) << p) + off));
    std::array<uint64_t, kHistBuckets> hist{};
    for (uint64_t w : waits)
        hist[std::min<size_t>(ls_log2_bucket(w), kHistBuckets - 1)]++;

    const std::vector<Bucket> buckets = cumulative_buckets(hist);
    ASSERT_GE(buckets.size(), 3u);
    double previous = -1;
    for (const Bucket& b : buckets) {
        EXPECT_GT(b.upper_bound_s, previous);
        previous = b.upper_bound_s;
        size_t expected = 0;
        for (uint64_t w : waits)
            expected += double(w) / 1e9 <= b.upper_bound_s * (1 + 1e-12) ? 1 : 0;
        EXPECT_EQ(b.cumulative, expected) << "le=" << b.upper_bound_s;
    }
    EXPECT_TRUE(std::isinf(buckets.back().upper_bound_s));
    EXPECT_EQ(buckets.back().cumulative, waits.size());
    // About 1 µs … 4 s: the range lock waits live in.
    EXPECT_NEAR(buckets.front().upper_bound_s, 1.023e-6, 1e-15);
    EXPECT_NEAR(buckets[buckets.size() - 2].upper_bound_s, 4.294967295, 1e-9);
}

TEST(MetricsSeries, TopNKeepsItsSeriesAndFoldsTheRestByKind)
{
    std::vector<LockInfo> locks{lock(1, "a"), lock(2, "b"), lock(3, "c"), lock(4, "mmap_lock", "rwsem", "write")};
    LockSeries series(2);
    series.add({delta(1, 1, 10), delta(2, 3, 30), delta(3, 2, 20)}, locks);
    ASSERT_EQ(series.own_series(), 2u);
    const auto& s = series.series();
    EXPECT_EQ(s.at({"b", "mutex"}).contentions, 3u);
    EXPECT_EQ(s.at({"c", "mutex"}).contentions, 2u);
    EXPECT_EQ(s.at({"other", "mutex"}).contentions, 1u);
    EXPECT_FALSE(s.count({"a", "mutex"}));

    // "a" gets hot later: it stays folded; the rwsem goes to its own kind's "other".
    series.add({delta(1, 100, 1000), delta(4, 5, 50)}, locks);
    EXPECT_EQ(series.own_series(), 2u);
    EXPECT_EQ(s.at({"other", "mutex"}).contentions, 101u);
    EXPECT_EQ(s.at({"other", "rwsem/write"}).contentions, 5u);
    EXPECT_EQ(s.at({"b", "mutex"}).contentions, 3u);
}

TEST(MetricsSeries, CountersNeverDecreaseAndNothingIsLost)
{
    std::vector<LockInfo> locks;
    for (int i = 1; i <= 40; i++)
        locks.push_back(lock(i, "lock" + std::to_string(i), i % 3 ? "mutex" : "rwsem"));
    LockSeries series(5);
    std::mt19937_64 rng(7);
    std::map<SeriesKey, LockCounters> before;
    uint64_t contentions = 0, wait = 0;
    for (int interval = 0; interval < 200; interval++) {
        std::vector<LockInterval> deltas;
        for (int id = 1; id <= 40; id++) {
            if (rng() % 4)
                continue;
            const uint64_t c = rng() % 1000, w = rng() % 1000000;
            deltas.push_back(delta(id, c, w));
            contentions += c;
            wait += w;
        }
        series.add(deltas, locks);
        uint64_t sum_contentions = 0, sum_wait = 0;
        for (const auto& [key, c] : series.series()) {
            const LockCounters& b = before[key];
            EXPECT_GE(c.contentions, b.contentions);
            EXPECT_GE(c.wait_ns, b.wait_ns);
            EXPECT_GE(c.spin_failures, b.spin_failures);
            sum_contentions += c.contentions;
            sum_wait += c.wait_ns;
        }
        // No series vanishes: a scrape never loses a counter it showed.
        for (const auto& [key, c] : before)
            EXPECT_TRUE(series.series().count(key)) << key.lock;
        before = series.series();
        EXPECT_EQ(sum_contentions, contentions);
        EXPECT_EQ(sum_wait, wait);
    }
    EXPECT_EQ(series.own_series(), 5u);
    EXPECT_LE(series.series().size(), 5u + 2u);  // plus one "other" per kind
}

TEST(MetricsText, ScrapeShowsCountersHistogramsAndBuildInfo)
{
    MetricsState state(50, {{"version", "9.9.9"}});
    IntervalBatch batch;
    batch.totals.start_ns = 0;
    batch.totals.end_ns = 1000000000;
    batch.totals.cpu_ns = 2000000000;
    batch.totals.idle_ns = 500000000;
    batch.totals.events = 42;
    batch.totals.lost = 3;
    batch.locks = {delta(1, 4, 2500000000ull)};
    state.add_interval(batch, {lock(1, "pipe->mutex")});
    const std::string text = prometheus::TextSerializer().Serialize(state.families());

    EXPECT_NE(text.find("lockscope_build_info{version=\"9.9.9\"} 1"), std::string::npos) << text;
    EXPECT_NE(text.find("# TYPE lockscope_contentions_total counter"), std::string::npos) << text;
    EXPECT_NE(text.find("lockscope_contentions_total{kind=\"mutex\",lock=\"pipe->mutex\"} 4"), std::string::npos)
        << text;
    EXPECT_NE(text.find("lockscope_wait_seconds_total{kind=\"mutex\",lock=\"pipe->mutex\"} 2.5"), std::string::npos)
        << text;
    EXPECT_NE(text.find("# TYPE lockscope_wait_duration_seconds histogram"), std::string::npos) << text;
    // All four waits are in the log2 bucket of 1024..2047 ns.
    EXPECT_NE(
        text.find("lockscope_wait_duration_seconds_bucket{kind=\"mutex\",lock=\"pipe->mutex\",le=\"1.023e-06\"} 0"),
        std::string::npos)
        << text;
    EXPECT_NE(
        text.find("lockscope_wait_duration_seconds_bucket{kind=\"mutex\",lock=\"pipe->mutex\",le=\"4.095e-06\"} 4"),
        std::string::npos)
        << text;
    EXPECT_NE(text.find("lockscope_wait_duration_seconds_bucket{kind=\"mutex\",lock=\"pipe->mutex\",le=\"+Inf\"} 4"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("lockscope_wait_duration_seconds_count{kind=\"mutex\",lock=\"pipe->mutex\"} 4"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("lockscope_cpu_idle_seconds_total 0.5"), std::string::npos) << text;
    EXPECT_NE(text.find("lockscope_cpu_seconds_total 2"), std::string::npos) << text;
    EXPECT_NE(text.find("lockscope_cpu_idle_ratio 0.25"), std::string::npos) << text;
    EXPECT_NE(text.find("lockscope_lost_total 3"), std::string::npos) << text;
    EXPECT_NE(text.find("lockscope_events_total 42"), std::string::npos) << text;
}

UserLockRow user_row(int64_t run, const std::string& name, uint64_t waits, uint64_t wait_ns)
{
    UserLockRow r;
    r.run = run;
    r.pid = 4242;
    r.name = name;
    r.kind = "pthread_mutex";
    r.module = "app";
    r.waits = waits;
    r.wait_ns = wait_ns;
    r.asleep_ns = wait_ns / 2;
    r.runnable_ns = wait_ns / 4;
    r.oncpu_ns = wait_ns - r.asleep_ns - r.runnable_ns;
    r.wakes = waits / 2;
    r.hist[12] = waits;
    return r;
}

// Each interval carries its run's user-lock rows so far (cumulative): the
// series add what each row grew by, and a new run starts its rows again.
TEST(MetricsUserLocks, SeriesAddEachRowsGrowthAndTheWaitsParts)
{
    MetricsState state(50, {{"version", "9.9.9"}});
    const std::string before = prometheus::TextSerializer().Serialize(state.families());
    EXPECT_EQ(before.find("lockscope_user_lock"), std::string::npos) << "no user-lock families before any row";
    IntervalBatch batch;
    batch.user_locks = {user_row(1, "g_cache_lock", 10, 4'000'000'000ull)};
    state.add_interval(batch, {});
    batch.user_locks = {user_row(1, "g_cache_lock", 30, 8'000'000'000ull)};  // the same run, grown
    state.add_interval(batch, {});
    batch.user_locks = {user_row(2, "g_cache_lock", 5, 1'000'000'000ull)};  // the next run, from zero
    state.add_interval(batch, {});
    const std::string text = prometheus::TextSerializer().Serialize(state.families());
    const std::string labels = "{kind=\"pthread_mutex\",lock=\"g_cache_lock\"";
    EXPECT_NE(text.find("lockscope_user_lock_waits_total" + labels + "} 35"), std::string::npos) << text;
    EXPECT_NE(text.find("lockscope_user_lock_wait_seconds_total" + labels + "} 9"), std::string::npos) << text;
    EXPECT_NE(text.find("lockscope_user_lock_wait_part_seconds_total" + labels + ",part=\"asleep\"} 4.5"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("lockscope_user_lock_wait_part_seconds_total" + labels + ",part=\"runnable\"} 2.25"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("lockscope_user_lock_wait_part_seconds_total" + labels + ",part=\"oncpu\"} 2.25"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("lockscope_user_lock_wakes_total" + labels + "} 17"), std::string::npos) << text;
    EXPECT_NE(text.find("lockscope_user_lock_wait_duration_seconds_count" + labels + "} 35"), std::string::npos)
        << text;
    // Kernel lock families stay the kernel's alone.
    EXPECT_EQ(text.find("lockscope_contentions_total{kind=\"pthread_mutex\""), std::string::npos) << text;
}

// At most top_n user locks get a series of their own; the rest are lock="other".
TEST(MetricsUserLocks, BeyondTopNUserLocksFoldIntoOther)
{
    MetricsState state(1, {});
    IntervalBatch batch;
    batch.user_locks = {user_row(1, "hot", 10, 2'000'000'000ull), user_row(1, "cold", 3, 1'000'000ull)};
    state.add_interval(batch, {});
    EXPECT_EQ(state.user_locks().own_series(), 1u);
    EXPECT_EQ(state.user_locks().series().at({"hot", "pthread_mutex"}).contentions, 10u);
    EXPECT_EQ(state.user_locks().series().at({kOtherLock, "pthread_mutex"}).contentions, 3u);
}

// Every summed counter of kCounterFields has a family per lock, and per
// cgroup those a task keeps, under its name (a time in seconds); the
// families released before the table keep their names.
// What a rollout groups hosts by is on the info series, and only there: the
// per-lock series stay without a kernel (a join brings it, docs/fleet-diff.md).
TEST(MetricsText, BuildInfoCarriesKernelCpusAndOperatorLabelsButLockSeriesDoNot)
{
    const std::map<std::string, std::string> host{{"kernel_release", "6.1.0-57-amd64"},
                                                  {"kernel_version", "#1 SMP PREEMPT_DYNAMIC Debian 6.1.158-1"},
                                                  {"online_cpus", "64"},
                                                  {"cpu_model", "AMD EPYC 7763"},
                                                  {"host", "not-a-label"}};
    MetricsState state(50, build_info_labels(host, parse_operator_labels({"role=db,rack=r12", "", "team=storage"})));
    IntervalBatch batch;
    batch.totals.end_ns = 1000000000;
    batch.locks = {delta(1, 4, 1000)};
    state.add_interval(batch, {lock(1, "pipe->mutex")});
    const std::string text = prometheus::TextSerializer().Serialize(state.families());
    for (const std::string label :
         {"kernel=\"6.1.0-57-amd64\"", "kernel_version=\"#1 SMP PREEMPT_DYNAMIC Debian 6.1.158-1\"", "cpus=\"64\"",
          "cpu_model=\"AMD EPYC 7763\"", "rack=\"r12\"", "role=\"db\"", "team=\"storage\""}) {
        const size_t info = text.find("lockscope_build_info{");
        ASSERT_NE(info, std::string::npos) << text;
        EXPECT_NE(text.substr(info, text.find('\n', info) - info).find(label), std::string::npos) << label << text;
    }
    EXPECT_EQ(text.find("not-a-label"), std::string::npos) << text;
    const size_t lock_line = text.find("lockscope_contentions_total{");
    ASSERT_NE(lock_line, std::string::npos);
    EXPECT_EQ(text.substr(lock_line, text.find('\n', lock_line) - lock_line).find("kernel"), std::string::npos);
}

TEST(MetricsText, OperatorLabelsThatPrometheusOrLockscopeWouldRefuseAreUsageErrors)
{
    for (const char* bad : {"role", "=db", "role=", "2role=db", "__role=db", "ro-le=db", "kernel=6.1", "lock=x"})
        EXPECT_THROW(parse_operator_labels({bad}), UsageError) << bad;
    EXPECT_TRUE(parse_operator_labels({""}).empty());
}

TEST(MetricsText, EverySummedCounterHasAFamily)
{
    MetricsState state(50, {}, 10);
    IntervalBatch batch;
    batch.totals.end_ns = 1'000'000'000;
    LockInterval d;
    d.lock_id = 1;
    TaskStats t;
    t.run = 1;
    t.pid = 10;
    t.cgroup = "/a";
    uint64_t v = 1000;
    for (const CounterField& f : kCounterFields) {
        d.counters.*f.member = v;
        t.counters.*f.member = v + 1;
        v += 1000;
    }
    batch.locks = {d};
    batch.tasks = {t};
    state.add_interval(batch, {lock(1, "pipe->mutex")});
    const auto families = state.families();
    auto find = [&](const std::string& name) -> const prometheus::MetricFamily* {
        for (const auto& f : families)
            if (f.name == name)
                return &f;
        return nullptr;
    };
    size_t counters = 0;
    for (const CounterField& f : kCounterFields) {
        const CounterMetric m = counter_metric(f.name);
        const prometheus::MetricFamily* lock_family = find("lockscope_" + m.name);
        const prometheus::MetricFamily* cgroup_family = find("lockscope_cgroup_" + m.name);
        if (f.merge == Merge::max) {
            EXPECT_EQ(lock_family, nullptr) << f.name << " is a running max, no counter";
            continue;
        }
        ++counters;
        ASSERT_NE(lock_family, nullptr) << f.name;
        EXPECT_EQ(lock_family->help, f.help);
        ASSERT_EQ(lock_family->metric.size(), 1u) << f.name;
        EXPECT_DOUBLE_EQ(lock_family->metric[0].counter.value, double(d.counters.*f.member) * m.scale) << f.name;
        if (!f.per_task) {
            EXPECT_EQ(cgroup_family, nullptr) << f.name << " is not kept per task";
            continue;
        }
        ASSERT_NE(cgroup_family, nullptr) << f.name;
        ASSERT_EQ(cgroup_family->metric.size(), 1u) << f.name;
        EXPECT_DOUBLE_EQ(cgroup_family->metric[0].counter.value, double(t.counters.*f.member) * m.scale) << f.name;
    }
    EXPECT_GE(counters, 12u);
    for (const char* released :
         {"lockscope_contentions_total", "lockscope_spin_attempts_total", "lockscope_spin_failures_total",
          "lockscope_wait_seconds_total", "lockscope_spin_seconds_total", "lockscope_offcpu_seconds_total",
          "lockscope_sleeps_total", "lockscope_cgroup_contentions_total", "lockscope_cgroup_wait_seconds_total",
          "lockscope_cgroup_spin_seconds_total", "lockscope_cgroup_offcpu_seconds_total"})
        EXPECT_NE(find(released), nullptr) << released;
}

// The holder split per lock: four parts of the wait, by what the holder
// was doing, the last (unknown) the rest of the wait.
TEST(MetricsText, TheHolderSplitsPartsAddUpToTheWait)
{
    MetricsState state(50, {});
    IntervalBatch batch;
    batch.totals.end_ns = 1'000'000'000;
    LockInterval d = delta(1, 4, 2'000'000'000ull);
    d.counters.holder_running_ns = 500'000'000;
    d.counters.holder_runnable_ns = 1'000'000'000;
    d.counters.holder_asleep_ns = 250'000'000;
    batch.locks = {d};
    state.add_interval(batch, {lock(1, "pipe->mutex")});
    const std::string text = prometheus::TextSerializer().Serialize(state.families());
    const std::string series = "lockscope_holder_part_seconds_total{kind=\"mutex\",lock=\"pipe->mutex\",part=";
    for (const char* part : {"running\"} 0.5", "runnable\"} 1", "asleep\"} 0.25", "unknown\"} 0.25"})
        EXPECT_NE(text.find(series + "\"" + part), std::string::npos) << part << "\n" << text;
}

TaskStats task(int64_t run, uint32_t pid, const std::string& cgroup, uint64_t contentions, uint64_t wait_ns)
{
    TaskStats t;
    t.run = run;
    t.pid = pid;
    t.cgroup = cgroup;
    t.counters.contentions = contentions;
    t.counters.wait_ns = wait_ns;
    return t;
}

// Tasks' totals are cumulative within a run; each interval's growth goes to
// the cgroup the task is in now, the first N cgroups keep series of their own.
TEST(MetricsSeries, CgroupsGetEachTasksGrowthAndFoldBeyondN)
{
    CgroupSeries series(2);
    series.add({task(1, 10, "/a", 5, 50), task(1, 11, "/b", 3, 30), task(1, 12, "/c", 1, 10)});
    const auto& s = series.series();
    EXPECT_EQ(series.own_series(), 2u);
    EXPECT_EQ(s.at("/a").contentions, 5u);
    EXPECT_EQ(s.at("/b").contentions, 3u);
    EXPECT_EQ(s.at("other").contentions, 1u);

    // Task 10 grows by 2 after moving to /b; task 11 is unchanged; run 2
    // starts task 12's totals again (4, not 4 - 1).
    series.add({task(1, 10, "/b", 7, 70), task(1, 11, "/b", 3, 30), task(2, 12, "/c", 4, 40)});
    EXPECT_EQ(s.at("/a").contentions, 5u);
    EXPECT_EQ(s.at("/b").contentions, 5u);
    EXPECT_EQ(s.at("/b").wait_ns, 50u);
    EXPECT_EQ(s.at("other").contentions, 5u);
}

TEST(MetricsText, CgroupSeriesOnlyWhenAskedFor)
{
    IntervalBatch batch;
    batch.locks = {delta(1, 4, 2500000000ull)};
    batch.tasks = {task(1, 10, "/system.slice/db.service", 4, 2500000000ull)};
    MetricsState without(50, {}), with(50, {}, 10);
    without.add_interval(batch, {lock(1, "pipe->mutex")});
    with.add_interval(batch, {lock(1, "pipe->mutex")});
    const std::string off = prometheus::TextSerializer().Serialize(without.families());
    const std::string on = prometheus::TextSerializer().Serialize(with.families());
    EXPECT_EQ(off.find("cgroup"), std::string::npos) << off;
    EXPECT_NE(on.find("lockscope_cgroup_wait_seconds_total{cgroup=\"/system.slice/db.service\"} 2.5"),
              std::string::npos)
        << on;
    EXPECT_NE(on.find("lockscope_cgroup_contentions_total{cgroup=\"/system.slice/db.service\"} 4"), std::string::npos)
        << on;
}

TEST(MetricsAddress, ParsesHostAndPortAndRejectsTheRest)
{
    EXPECT_EQ(parse_listen_address("127.0.0.1:9464").host, "127.0.0.1");
    EXPECT_EQ(parse_listen_address("127.0.0.1:9464").port, 9464u);
    EXPECT_EQ(parse_listen_address("[::1]:80").host, "[::1]");
    EXPECT_EQ(parse_listen_address(":9464").host, "");
    for (const char* bad : {"", "9464", "host:", "host:http", "host:70000", "a b:1", "h:-1"})
        EXPECT_THROW(parse_listen_address(bad), UsageError) << bad;
}

}  // namespace
}  // namespace lockscope::metrics
