#include "metrics/exposition.h"

#include <algorithm>
#include <limits>
#include <utility>

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

MetricFamily family(const char* name, const char* help, MetricType type)
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

double seconds(uint64_t ns) { return double(ns) / 1e9; }

// One counter family with a sample per lock series.
MetricFamily per_lock(const LockSeries& locks, const char* name, const char* help,
                      double (*value)(const LockCounters&))
{
    MetricFamily f = family(name, help, MetricType::Counter);
    for (const auto& [key, c] : locks.series())
        f.metric.push_back(counter(value(c), lock_labels(key)));
    return f;
}

MetricFamily wait_histograms(const LockSeries& locks)
{
    MetricFamily f = family("lockscope_wait_duration_seconds",
                            "Episode wait time (first contention_begin to contention_end); buckets are exact "
                            "sums of the kernel's log2 buckets, le = 2^k - 1 ns",
                            MetricType::Histogram);
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

}  // namespace

std::string kind_label(const LockInfo& lock)
{
    return lock.mode.empty() ? lock.kind : lock.kind + "/" + lock.mode;
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

LockSeries::LockSeries(size_t top_n) : top_n_(top_n) {}

void LockSeries::add(const std::vector<LockInterval>& deltas, const std::vector<LockInfo>& locks)
{
    std::map<SeriesKey, LockCounters> interval;
    for (const LockInterval& d : deltas) {
        if (d.lock_id < 1 || size_t(d.lock_id) > locks.size())
            continue;
        const LockInfo& lock = locks[size_t(d.lock_id - 1)];
        interval[{lock.name, kind_label(lock)}].add(d.counters);
    }
    // Free slots go to this interval's hottest newcomers.
    std::vector<std::pair<const SeriesKey*, const LockCounters*>> newcomers;
    for (const auto& [key, c] : interval)
        if (!exported_.count(key) && key.lock != kOtherLock)
            newcomers.push_back({&key, &c});
    std::stable_sort(newcomers.begin(), newcomers.end(), [](const auto& a, const auto& b) {
        if (a.second->wait_ns != b.second->wait_ns)
            return a.second->wait_ns > b.second->wait_ns;
        return a.second->contentions > b.second->contentions;
    });
    for (const auto& [key, c] : newcomers) {
        if (exported_.size() >= top_n_)
            break;
        exported_[*key] = true;
    }
    for (const auto& [key, c] : interval) {
        const bool own = exported_.count(key) != 0;
        series_[own ? key : SeriesKey{kOtherLock, key.kind}].add(c);
    }
}

MetricsState::MetricsState(size_t top_n, std::map<std::string, std::string> build_labels)
    : locks_(top_n), build_labels_(std::move(build_labels))
{
}

void MetricsState::add_interval(const IntervalBatch& batch, const std::vector<LockInfo>& locks)
{
    locks_.add(batch.locks, locks);
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
    MetricFamily info = family("lockscope_build_info", "lockscope version and the kernel it records",
                               MetricType::Gauge);
    info.metric.push_back(gauge(1, to_labels(build_labels_)));
    out.push_back(std::move(info));

    out.push_back(per_lock(locks_, "lockscope_contentions_total", "Contention episodes that ended",
                           [](const LockCounters& c) { return double(c.contentions); }));
    out.push_back(per_lock(locks_, "lockscope_spin_attempts_total", "Optimistic spin phases of sleeping locks",
                           [](const LockCounters& c) { return double(c.spin_attempts); }));
    out.push_back(per_lock(locks_, "lockscope_spin_failures_total",
                           "Spin phases that ended with the waiter queueing",
                           [](const LockCounters& c) { return double(c.spin_failures); }));
    out.push_back(per_lock(locks_, "lockscope_wait_seconds_total", "Time waiters waited",
                           [](const LockCounters& c) { return seconds(c.wait_ns); }));
    out.push_back(per_lock(locks_, "lockscope_spin_seconds_total", "Time waiters spent spinning",
                           [](const LockCounters& c) { return seconds(c.spin_ns); }));
    out.push_back(per_lock(locks_, "lockscope_offcpu_seconds_total",
                           "Time waiters were switched out (asleep or preempted)",
                           [](const LockCounters& c) { return seconds(c.offcpu_ns()); }));
    out.push_back(per_lock(locks_, "lockscope_sleeps_total", "Times a waiter was switched out blocked",
                           [](const LockCounters& c) { return double(c.sleeps); }));
    out.push_back(wait_histograms(locks_));

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
    single("lockscope_intervals_total", "Intervals drained from the kernel", MetricType::Counter,
           double(intervals_));
    single("lockscope_lock_series", "(lock, kind) pairs with a series of their own (see --prometheus-top)",
           MetricType::Gauge, double(locks_.own_series()));
    return out;
}

}  // namespace lockscope::metrics
