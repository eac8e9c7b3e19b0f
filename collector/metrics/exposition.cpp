#include "metrics/exposition.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <limits>
#include <utility>

#include "core/analysis/counter_delta.h"
#include "core/analysis/holder_parts.h"
#include "core/analysis/report_parts.h"
#include "core/error.h"
#include "core/lock_key.h"
#include "lockscope_version.h"

namespace lockscope::metrics {
namespace {

constexpr int kFirstPower = 10;  // 2^10 - 1 ns, about 1 µs
constexpr int kLastPower = 32;   // 2^32 - 1 ns, about 4.3 s
constexpr int kPowerStep = 2;

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

std::vector<ClientMetric::Label> to_labels(const std::map<std::string, std::string>& labels)
{
    std::vector<ClientMetric::Label> out;
    for (const auto& [name, value] : labels)
        out.push_back({name, value});
    return out;
}

std::vector<ClientMetric::Label> lock_labels(const SeriesKey& key)
{
    return {{"kind", key.kind}, {"lock", key.lock}};
}

MetricFamily family(const std::string& name, const std::string& help, MetricType type)
{
    MetricFamily f;
    f.name = name;
    f.help = help;
    f.type = type;
    return f;
}

ClientMetric counter(double value, std::vector<ClientMetric::Label> labels = {})
{
    ClientMetric m;
    m.label = std::move(labels);
    m.counter.value = value;
    return m;
}

ClientMetric gauge(double value, std::vector<ClientMetric::Label> labels = {})
{
    ClientMetric m;
    m.label = std::move(labels);
    m.gauge.value = value;
    return m;
}

double seconds(uint64_t ns)
{
    return double(ns) / 1e9;
}

std::vector<ClientMetric::Label> cgroup_labels(const std::string& cgroup)
{
    return {{"cgroup", cgroup}};
}

using CounterValue = std::function<double(const LockCounters&)>;

// One counter family with a sample per series.
template <class Key>
MetricFamily per_series(const BoundedSeries<Key>& series, const std::string& name, const std::string& help,
                        const CounterValue& value, std::vector<ClientMetric::Label> (*labels)(const Key&))
{
    MetricFamily f = family(name, help, MetricType::Counter);
    for (const auto& [key, c] : series.series())
        f.metric.push_back(counter(value(c), labels(key)));
    return f;
}

MetricFamily per_lock(const LockSeries& locks, const std::string& name, const std::string& help,
                      const CounterValue& value)
{
    return per_series<SeriesKey>(locks, name, help, value, lock_labels);
}

MetricFamily per_cgroup(const CgroupSeries& cgroups, const std::string& name, const std::string& help,
                        const CounterValue& value)
{
    return per_series<std::string>(cgroups, name, help, value, cgroup_labels);
}

MetricFamily wait_histograms(const BoundedSeries<SeriesKey>& locks, const std::string& name, const std::string& help)
{
    MetricFamily f = family(name, help, MetricType::Histogram);
    for (const auto& [key, c] : locks.series()) {
        ClientMetric m;
        m.label = lock_labels(key);
        for (const Bucket& b : cumulative_buckets(c.hist))
            m.histogram.bucket.push_back({b.cumulative, b.upper_bound_s});
        m.histogram.sample_count = m.histogram.bucket.back().cumulative_count;
        m.histogram.sample_sum = seconds(c.wait_ns);
        f.metric.push_back(std::move(m));
    }
    return f;
}

// The wait's four parts (core/analysis/report_parts.h) as one family with a
// part label, per series: they add up to the series' wait_seconds_total.
template <class Key>
MetricFamily wait_parts(const BoundedSeries<Key>& series, const std::string& name, const std::string& help,
                        std::vector<ClientMetric::Label> (*labels)(const Key&))
{
    MetricFamily f = family(name, help, MetricType::Counter);
    for (const auto& [key, c] : series.series()) {
        const auto ns = lockscope::wait_parts(c);
        for (size_t i = 0; i < kWaitPartCount; ++i) {
            std::vector<ClientMetric::Label> l = labels(key);
            l.push_back({"part", kWaitParts[i].name});
            f.metric.push_back(counter(seconds(ns[i]), std::move(l)));
        }
    }
    return f;
}

// The holder split's four parts (core/analysis/holder_parts.h), per lock
// (kernel locks, or user locks under the family's own name): they add up to
// the lock's wait_seconds_total too.
template <typename Series>
MetricFamily holder_parts(const Series& locks, const char* name)
{
    MetricFamily f =
        family(name,
               "The wait in parts by what the lock's holder was doing meanwhile, adding up to it: "
               "part=running (on a CPU), runnable (preempted, or woken and waiting for a CPU), "
               "asleep (blocked while holding), unknown (no owner to follow, the lock free, or a holder not seen)",
               MetricType::Counter);
    for (const auto& [key, c] : locks.series())
        for (const HolderPart& part : kHolderParts) {
            std::vector<ClientMetric::Label> l = lock_labels(key);
            l.push_back({"part", part.name});
            f.metric.push_back(counter(seconds(part.ns(c)), std::move(l)));
        }
    return f;
}

constexpr const char* kWaitPartsHelp =
    "The wait in parts that add up to it: part=spinning (on CPU in optimistic spin phases), queued_on_cpu "
    "(on CPU after queueing), asleep (switched out blocked), runnable (switched out runnable: preempted, or "
    "woken and waiting for a CPU)";

// The user-space locks' families (lockscope_user_lock_*), as the kernel
// locks' but for the futex syscall's wait.
void add_user_lock_families(std::vector<MetricFamily>& out, const UserLockSeries& locks)
{
    out.push_back(per_series<SeriesKey>(
        locks, "lockscope_user_lock_waits_total",
        "Futex waits on a user-space lock (a sleep, or a call refused at once)",
        [](const LockCounters& c) { return double(c.contentions); }, lock_labels));
    out.push_back(per_series<SeriesKey>(
        locks, "lockscope_user_lock_wait_seconds_total",
        "Time in those waits, from the futex syscall's entry to its exit",
        [](const LockCounters& c) { return seconds(c.wait_ns); }, lock_labels));
    MetricFamily parts = family("lockscope_user_lock_wait_part_seconds_total",
                                "The wait in parts that add up to it: part=oncpu (in the syscall on a CPU), "
                                "asleep (switched out blocked), runnable (woken or preempted, waiting for a CPU)",
                                MetricType::Counter);
    for (const auto& [key, c] : locks.series()) {
        // A user lock's wait has no spin phases: on CPU is the kernel locks' queued on CPU.
        const std::pair<const char*, uint64_t> split[] = {
            {"oncpu", c.queued_on_cpu_ns()}, {"asleep", c.asleep_ns()}, {"runnable", c.runnable_ns()}};
        for (const auto& [part, ns] : split) {
            auto labels = lock_labels(key);
            labels.push_back({"part", part});
            parts.metric.push_back(counter(seconds(ns), std::move(labels)));
        }
    }
    out.push_back(std::move(parts));
    out.push_back(holder_parts(locks, "lockscope_user_lock_holder_part_seconds_total"));
    out.push_back(per_series<SeriesKey>(
        locks, "lockscope_user_lock_wakes_total", "Waits whose sleep a thread's wakeup ended (for a mutex, its unlock)",
        [](const LockCounters& c) { return double(c.wakeups); }, lock_labels));
    out.push_back(wait_histograms(locks, "lockscope_user_lock_wait_duration_seconds",
                                  "Futex wait time on a user-space lock; buckets are exact sums of log2 buckets, "
                                  "le = 2^k - 1 ns"));
}

}  // namespace

CounterMetric counter_metric(std::string_view field)
{
    if (field.ends_with("_ns"))
        return {std::string(field.substr(0, field.size() - 3)) + "_seconds_total", 1e-9};
    return {std::string(field) + "_total", 1.0};
}

std::map<std::string, std::string> build_info_labels(const std::map<std::string, std::string>& host_meta,
                                                     const std::map<std::string, std::string>& operator_labels)
{
    std::map<std::string, std::string> labels = operator_labels;
    auto meta = [&](const char* key) {
        auto it = host_meta.find(key);
        return it == host_meta.end() ? std::string() : it->second;
    };
    labels["version"] = LOCKSCOPE_VERSION;
    labels["kernel"] = meta("kernel_release");
    labels["kernel_version"] = meta("kernel_version");
    labels["cpus"] = meta("online_cpus");
    labels["cpu_model"] = meta("cpu_model");
    std::erase_if(labels, [](const auto& label) { return label.second.empty(); });
    return labels;
}

std::map<std::string, std::string> parse_operator_labels(const std::vector<std::string>& args)
{
    static const std::set<std::string> taken{"version",  "kernel", "kernel_version", "cpus", "cpu_model",
                                             "instance", "job",    "lock",           "kind", "cgroup"};
    std::map<std::string, std::string> labels;
    for (const std::string& arg : args) {
        size_t start = 0;
        while (start < arg.size()) {
            const size_t comma = std::min(arg.find(',', start), arg.size());
            const std::string pair = arg.substr(start, comma - start);
            start = comma + 1;
            const size_t eq = pair.find('=');
            const std::string name = pair.substr(0, eq);
            const bool valid_name = !name.empty() && !std::isdigit((unsigned char)name[0]) && !name.starts_with("__") &&
                                    name.find_first_not_of(
                                        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789_") == std::string::npos;
            if (eq == std::string::npos || eq + 1 == pair.size() || !valid_name)
                throw UsageError("--prometheus-label wants NAME=VALUE (NAME of letters, digits and _), not '" + pair +
                                 "'");
            if (taken.count(name))
                throw UsageError("--prometheus-label " + name + ": lockscope sets that label itself");
            labels[name] = pair.substr(eq + 1);
        }
    }
    return labels;
}

std::vector<Bucket> cumulative_buckets(const std::array<uint64_t, kHistBuckets>& hist)
{
    std::vector<Bucket> out;
    uint64_t below = 0;  // waits in the log2 buckets under the current power
    int next_bucket = 0;
    for (int power = kFirstPower; power <= kLastPower; power += kPowerStep) {
        for (; next_bucket < power && next_bucket < kHistBuckets; next_bucket++)
            below += hist[size_t(next_bucket)];
        out.push_back({double((uint64_t(1) << power) - 1) / 1e9, below});
    }
    for (; next_bucket < kHistBuckets; next_bucket++)
        below += hist[size_t(next_bucket)];
    out.push_back({std::numeric_limits<double>::infinity(), below});
    return out;
}

void LockSeries::add(const std::vector<LockInterval>& deltas, const std::vector<LockInfo>& locks)
{
    std::map<SeriesKey, LockCounters> interval;
    for (const LockInterval& d : deltas) {
        if (d.lock_id < 1 || size_t(d.lock_id) > locks.size())
            continue;
        const LockInfo& lock = locks[size_t(d.lock_id - 1)];
        interval[{lock.name, kind_text(lock.kind, lock.mode)}].add(d.counters);
    }
    BoundedSeries::add(interval, [](const SeriesKey& k) { return SeriesKey{kOtherLock, k.kind}; });
}

void CgroupSeries::add(const std::vector<TaskStats>& tasks)
{
    std::map<std::string, LockCounters> interval;
    for (const TaskStats& t : tasks) {
        auto& [run, before] = last_[t.pid];
        // A new run starts every task's totals again from zero.
        const LockCounters grown = run == t.run ? counter_delta(t.counters, before) : t.counters;
        run = t.run;
        before = t.counters;
        if (!grown.empty())
            interval[t.cgroup.empty() ? "unknown" : t.cgroup].add(grown);
    }
    BoundedSeries::add(interval, [](const std::string&) { return std::string(kOtherCgroup); });
}

void UserLockSeries::add(const std::vector<UserLockRow>& rows)
{
    std::map<SeriesKey, LockCounters> interval;
    for (const UserLockRow& row : rows) {
        seen_ = true;
        const LockCounters now = row.counters();  // cumulative over its run
        LockCounters& before = last_[{row.run, row.pid, row.name, row.kind, row.module}];
        const LockCounters grown = counter_delta(now, before);
        before = now;
        if (!grown.empty())
            interval[{row.name, row.kind}].add(grown);
    }
    BoundedSeries::add(interval, [](const SeriesKey& k) { return SeriesKey{kOtherLock, k.kind}; });
}

MetricsState::MetricsState(size_t top_n, std::map<std::string, std::string> build_labels, size_t top_cgroups)
    : locks_(top_n),
      user_locks_(top_n),
      cgroups_(top_cgroups),
      per_cgroup_(top_cgroups > 0),
      build_labels_(std::move(build_labels))
{
}

void MetricsState::add_interval(const IntervalBatch& batch, const std::vector<LockInfo>& locks)
{
    locks_.add(batch.locks, locks);
    user_locks_.add(batch.user_locks);
    if (per_cgroup_)
        cgroups_.add(batch.tasks);
    idle_ns_ += batch.totals.idle_ns;
    cpu_ns_ += batch.totals.cpu_ns;
    events_ += batch.totals.events;
    lost_ += batch.totals.lost;
    intervals_++;
    last_idle_fraction_ = batch.totals.idle_fraction();
}

std::vector<MetricFamily> MetricsState::families() const
{
    std::vector<MetricFamily> out;
    MetricFamily info =
        family("lockscope_build_info", "lockscope version and the kernel it records", MetricType::Gauge);
    info.metric.push_back(gauge(1, to_labels(build_labels_)));
    out.push_back(std::move(info));

    // A family per summed field of kCounterFields (a running max is no
    // counter: the histogram has the waits), per cgroup those tasks keep.
    for (const CounterField& f : kCounterFields) {
        if (f.merge != Merge::sum)
            continue;
        const CounterMetric m = counter_metric(f.name);
        const auto member = f.member;
        const CounterValue value = [member, scale = m.scale](const LockCounters& c) {
            return double(c.*member) * scale;
        };
        out.push_back(per_lock(locks_, "lockscope_" + m.name, f.help, value));
        if (per_cgroup_ && f.per_task)
            out.push_back(per_cgroup(cgroups_, "lockscope_cgroup_" + m.name,
                                     std::string(f.help) + ", by the cgroup's tasks", value));
    }
    out.push_back(per_lock(locks_, "lockscope_offcpu_seconds_total",
                           "Time waiters were switched out (asleep or preempted)",
                           [](const LockCounters& c) { return seconds(c.offcpu_ns()); }));
    if (per_cgroup_)
        out.push_back(per_cgroup(cgroups_, "lockscope_cgroup_offcpu_seconds_total",
                                 "Time the cgroup's tasks were switched out waiting for locks",
                                 [](const LockCounters& c) { return seconds(c.offcpu_ns()); }));
    out.push_back(wait_parts<SeriesKey>(locks_, "lockscope_wait_part_seconds_total", kWaitPartsHelp, lock_labels));
    if (per_cgroup_)
        out.push_back(wait_parts<std::string>(cgroups_, "lockscope_cgroup_wait_part_seconds_total",
                                              std::string(kWaitPartsHelp) + ", by the cgroup's tasks", cgroup_labels));
    out.push_back(holder_parts(locks_, "lockscope_holder_part_seconds_total"));
    out.push_back(wait_histograms(locks_, "lockscope_wait_duration_seconds",
                                  "Episode wait time (first contention_begin to contention_end); buckets are exact "
                                  "sums of the kernel's log2 buckets, le = 2^k - 1 ns"));
    if (user_locks_.seen())
        add_user_lock_families(out, user_locks_);

    auto single = [&](const char* name, const char* help, MetricType type, double value) {
        MetricFamily f = family(name, help, type);
        f.metric.push_back(type == MetricType::Counter ? counter(value) : gauge(value));
        out.push_back(std::move(f));
    };
    single("lockscope_cpu_idle_seconds_total", "Time the idle task ran, summed over CPUs", MetricType::Counter,
           seconds(idle_ns_));
    single("lockscope_cpu_seconds_total", "Recorded time times online CPUs (the idle fraction's denominator)",
           MetricType::Counter, seconds(cpu_ns_));
    single("lockscope_cpu_idle_ratio", "Idle fraction of the CPUs over the last interval", MetricType::Gauge,
           last_idle_fraction_);
    single("lockscope_events_total", "Tracepoint events handled", MetricType::Counter, double(events_));
    single("lockscope_lost_total",
           "Events or keys dropped: a map or buffer was full, nesting too deep, an interrupt "
           "contended inside lockscope's own program, or an inner episode's end never came",
           MetricType::Counter, double(lost_));
    single("lockscope_intervals_total", "Intervals drained from the kernel", MetricType::Counter, double(intervals_));
    single("lockscope_lock_series", "(lock, kind) pairs with a series of their own (see --prometheus-top)",
           MetricType::Gauge, double(locks_.own_series()));
    return out;
}

}  // namespace lockscope::metrics
