// What lockscope exposes to Prometheus, as plain values: cumulative series
// per (lock, kind) built from the recorder's intervals, with bounded label
// cardinality, and their rendering into prometheus-cpp metric families.
// No sockets here (exporter.h serves them), so it is tested without root.
//
// Cardinality and monotonicity: at most `top_n` (lock, kind) pairs get a
// series of their own. Slots are handed out while free, hottest first
// within an interval (by wait time), and a pair keeps its series for the
// life of the process; every other pair's counts go to lock="other" with
// its kind. Each series only ever adds non-negative interval deltas, so all
// counters are monotonic. Re-ranking (dropping a pair that cooled down)
// would move its past counts between series and make counters go
// backwards, which Prometheus reads as a reset; restart the recorder to
// re-rank instead.
#pragma once

#include <prometheus/metric_family.h>

#include <algorithm>
#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/model.h"

namespace lockscope::metrics {

inline constexpr const char* kOtherLock = "other";
inline constexpr const char* kOtherCgroup = "other";

// A label pair: lock name and kind ("rwsem/write" when there is a mode).
struct SeriesKey {
    std::string lock;
    std::string kind;
    auto operator<=>(const SeriesKey&) const = default;
};

// A cumulative Prometheus bucket: waits of at most `upper_bound_s`.
struct Bucket {
    double upper_bound_s = 0;  // +infinity for the last bucket
    uint64_t cumulative = 0;
};

// The kernel's log2 bucket i holds waits of 2^i .. 2^(i+1) - 1 ns, so a
// cumulative count is exact at le = 2^k - 1 ns. We export k = 10, 12, … 32
// (about 1 µs, 4 µs … 4.3 s) and +Inf: sensible for lock waits, 13
// series per lock instead of 37.
std::vector<Bucket> cumulative_buckets(const std::array<uint64_t, kHistBuckets>& hist);

// Cumulative counters per key with the folding described above: at most
// `top_n` keys get a series of their own, the hottest newcomers of an
// interval first (by wait), for the life of the process; any other key adds
// to `other(key)`, which never gets a slot of its own.
template <class Key>
class BoundedSeries {
public:
    explicit BoundedSeries(size_t top_n) : top_n_(top_n) {}

    template <class Other>
    void add(const std::map<Key, LockCounters>& interval, Other other)
    {
        std::vector<std::pair<const Key*, const LockCounters*>> newcomers;
        for (const auto& [key, c] : interval)
            if (!exported_.count(key) && !(key == other(key)))
                newcomers.push_back({&key, &c});
        std::stable_sort(newcomers.begin(), newcomers.end(), [](const auto& a, const auto& b) {
            if (a.second->wait_ns != b.second->wait_ns)
                return a.second->wait_ns > b.second->wait_ns;
            return a.second->contentions > b.second->contentions;
        });
        for (const auto& entry : newcomers) {
            if (exported_.size() >= top_n_)
                break;
            exported_.insert(*entry.first);
        }
        for (const auto& [key, c] : interval)
            series_[exported_.count(key) ? key : other(key)].add(c);
    }

    const std::map<Key, LockCounters>& series() const { return series_; }
    size_t own_series() const { return exported_.size(); }

private:
    size_t top_n_;
    std::set<Key> exported_;  // keys with a series of their own
    std::map<Key, LockCounters> series_;
};

// Per-(lock, kind) series; other pairs are lock="other" with their kind.
class LockSeries : public BoundedSeries<SeriesKey> {
public:
    explicit LockSeries(size_t top_n) : BoundedSeries(top_n) {}

    // One interval's sparse per-lock deltas; `locks[id - 1]` names lock id.
    void add(const std::vector<LockInterval>& deltas, const std::vector<LockInfo>& locks);
};

// Per-cgroup series (record --prometheus-cgroups N), from the tasks' totals:
// each task's growth since the last interval goes to the cgroup it is in
// now; other cgroups are cgroup="other". Contention no task has published
// yet (it ran on since its last episodes) is in the lock series only.
class CgroupSeries : public BoundedSeries<std::string> {
public:
    explicit CgroupSeries(size_t top_n) : BoundedSeries(top_n) {}

    // One interval's tasks, cumulative within their run.
    void add(const std::vector<TaskStats>& tasks);

private:
    std::map<uint32_t, std::pair<int64_t, LockCounters>> last_;  // by pid: run, totals
};

// Per-(user lock, kind) series (record's user-lock recorder), from the
// run's cumulative user-lock rows that each interval carries: each row's
// growth since the last interval adds to its lock's series, folded as the
// kernel locks' (at most top_n, others lock="other"). In the counters:
// contentions = futex waits, wait_ns, sleep_ns = asleep, preempt_ns =
// runnable (on CPU is the rest), wakeups = wakes, hist.
class UserLockSeries : public BoundedSeries<SeriesKey> {
public:
    explicit UserLockSeries(size_t top_n) : BoundedSeries(top_n) {}

    void add(const std::vector<UserLockRow>& rows);
    bool seen() const { return seen_; }

private:
    // (run, pid, name, kind, module) -> that row's counters at the last interval
    std::map<std::tuple<int64_t, uint32_t, std::string, std::string, std::string>, LockCounters> last_;
    bool seen_ = false;
};

// Everything the exporter serves, accumulated over the process's intervals.
class MetricsState {
public:
    // top_cgroups 0: no per-cgroup series.
    MetricsState(size_t top_n, std::map<std::string, std::string> build_labels, size_t top_cgroups = 0);

    void add_interval(const IntervalBatch& batch, const std::vector<LockInfo>& locks);
    std::vector<prometheus::MetricFamily> families() const;

    const LockSeries& locks() const { return locks_; }
    const CgroupSeries& cgroups() const { return cgroups_; }
    const UserLockSeries& user_locks() const { return user_locks_; }

private:
    LockSeries locks_;
    UserLockSeries user_locks_;
    CgroupSeries cgroups_;
    bool per_cgroup_ = false;
    std::map<std::string, std::string> build_labels_;
    uint64_t idle_ns_ = 0;
    uint64_t cpu_ns_ = 0;
    uint64_t events_ = 0;
    uint64_t lost_ = 0;
    uint64_t intervals_ = 0;
    double last_idle_fraction_ = 0;
};

// lockscope_build_info's labels, from the recording host's metadata
// (core/host/metadata.h): version, kernel (uname -r), kernel_version
// (uname -v: the build, which tells two builds of one release apart), cpus
// (online), cpu_model; plus the operator's labels (record
// --prometheus-label), which group hosts in a fleet diff. The kernel goes
// here only, never on the per-lock series: a PromQL join on
// (instance, job) brings it to them.
std::map<std::string, std::string> build_info_labels(const std::map<std::string, std::string>& host_meta,
                                                     const std::map<std::string, std::string>& operator_labels);

// "role=db" or "role=db,rack=r12" into labels; "" is none. Throws
// UsageError for a name Prometheus would refuse or one lockscope sets.
std::map<std::string, std::string> parse_operator_labels(const std::vector<std::string>& args);

// A counter field's family name after "lockscope_" (or "lockscope_cgroup_"),
// and the factor to its unit: <field>_total, and a time in ns as seconds,
// <stem>_seconds_total (wait_ns: wait_seconds_total).
struct CounterMetric {
    std::string name;
    double scale = 1.0;
};
CounterMetric counter_metric(std::string_view field);

}  // namespace lockscope::metrics
