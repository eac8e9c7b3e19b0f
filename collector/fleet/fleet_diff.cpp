#include "fleet/fleet_diff.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <ctime>
#include <map>
#include <set>
#include <tuple>

#include "core/error.h"
#include "core/format.h"
#include "fleet/fleet_query.h"
#include "fleet/prometheus_api.h"

namespace lockscope::fleet {
namespace {

using HostKey = std::pair<std::string, std::string>;  // instance, job

HostKey host_of(const Sample& s)
{
    return {s.label("instance"), s.label("job")};
}

struct Host {
    HostKey key;
    std::string kernel, kernel_version, cpu_model;
    double cpus = 0;  // 0: unknown (an exporter older than the cpus label)
    std::map<std::pair<std::string, std::string>, LockCounters> locks;  // (lock, kind label)
    uint64_t idle_ns = 0, cpu_ns = 0, lost = 0;
};

struct Group {
    std::string selector;  // {…}
    std::map<HostKey, Host> hosts;
    size_t left_out = 0;
};

uint64_t count_of(double v)
{
    return std::isfinite(v) && v > 0 ? uint64_t(std::llround(v)) : 0;
}

uint64_t ns_of(double seconds)
{
    return count_of(seconds * 1e9);
}

// Where an increase goes in LockCounters.
struct CounterTarget {
    const char* metric;  // after lockscope_
    uint64_t LockCounters::*member;
    bool seconds;
};
constexpr CounterTarget kCounters[] = {
    {"contentions_total", &LockCounters::contentions, false},
    {"wait_seconds_total", &LockCounters::wait_ns, true},
    {"spin_attempts_total", &LockCounters::spin_attempts, false},
    {"spin_failures_total", &LockCounters::spin_failures, false},
    {"spin_seconds_total", &LockCounters::spin_ns, true},
    {"sleep_seconds_total", &LockCounters::sleep_ns, true},
    {"preempt_seconds_total", &LockCounters::preempt_ns, true},
    // What spin phases spent switched out: without it spinning and the
    // time off CPU would overlap, and the wait's parts would not add up.
    {"spin_offcpu_seconds_total", &LockCounters::spin_offcpu_ns, true},
};

// Increases as Prometheus gives them, per (lock, kind label), one per kCounters.
using RawCounts = std::map<std::pair<std::string, std::string>, std::array<double, std::size(kCounters)>>;

// Each host's "(all)" row, less its top locks, becomes its "(rest)" row;
// then every row in LockCounters' units. What is left of "(all)" after
// rounding alone is no lock's.
std::map<std::pair<std::string, std::string>, LockCounters> host_locks(RawCounts raw)
{
    std::map<std::pair<std::string, std::string>, LockCounters> out;
    if (auto all = raw.extract({kAllLocks, ""})) {
        auto rest = all.mapped();
        for (const auto& [lock, values] : raw)
            for (size_t i = 0; i < rest.size(); ++i)
                rest[i] -= values[i];
        for (size_t i = 0; i < rest.size(); ++i)
            if (rest[i] <= 1e-9 * all.mapped()[i])
                rest[i] = 0;
        raw[{kRestLock, ""}] = rest;
    }
    for (const auto& [lock, values] : raw) {
        LockCounters c;
        for (size_t i = 0; i < values.size(); ++i)
            c.*kCounters[i].member = kCounters[i].seconds ? ns_of(values[i]) : count_of(values[i]);
        if (!c.empty())
            out[lock] = c;
    }
    return out;
}

// --by LABEL: the two largest groups, the lower value (in version order) as A.
std::pair<std::string, std::string> largest_groups(const PrometheusApi& api, const FleetOptions& o,
                                                   const std::string& range)
{
    std::vector<std::pair<std::string, double>> sizes;
    for (const Sample& s : api.query(group_sizes_query(o.by, range), o.end))
        sizes.emplace_back(s.label(o.by), s.value);
    if (sizes.size() < 2)
        throw Error("cannot compare groups by " + o.by, "", 0,
                    "the hosts' lockscope_build_info shows " + std::to_string(sizes.size()) +
                        " value(s) of that label in the window; two are needed");
    std::stable_sort(sizes.begin(), sizes.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
    std::string a = sizes[0].first, b = sizes[1].first;
    if (natural_less(b, a))  // "6.1.0-9" as A before "6.1.0-47"
        std::swap(a, b);
    return {"{" + label_matcher(o.by, a) + "}", "{" + label_matcher(o.by, b) + "}"};
}

void fetch_hosts(const PrometheusApi& api, double end, const std::string& range, Group& g)
{
    for (const Sample& s : api.query(host_info_query(g.selector, range), end)) {
        Host& h = g.hosts[host_of(s)];
        h.key = host_of(s);
        h.kernel = s.label("kernel");
        h.kernel_version = s.label("kernel_version");
        h.cpu_model = s.label("cpu_model");
        h.cpus = std::max(h.cpus, std::strtod(s.label("cpus").c_str(), nullptr));
    }
    for (const Sample& s : api.query(left_out_query(g.selector, range), end))
        g.left_out = count_of(s.value);
}

// One value of a side's metadata: the hosts' common value, or how many differ.
std::string common_value(const Group& g, std::string Host::*member)
{
    std::set<std::string> values;
    for (const auto& [key, h] : g.hosts)
        values.insert(h.*member);
    if (values.size() == 1)
        return *values.begin();
    return std::to_string(values.size()) + " values: " + *values.begin() + ", " + *std::next(values.begin()) +
           (values.size() > 2 ? ", …" : "");
}

// A group as a session: each host one run of one interval as long as the
// window (times its CPUs, when rates are per CPU).
Session as_session(const Group& g, double window_s, bool per_cpu)
{
    Session s;
    s.meta["kernel_release"] = common_value(g, &Host::kernel);
    s.meta["kernel_version"] = common_value(g, &Host::kernel_version);
    s.meta["cpu_model"] = common_value(g, &Host::cpu_model);
    std::set<double> cpus;
    for (const auto& [key, h] : g.hosts)
        cpus.insert(h.cpus);
    s.meta["online_cpus"] = cpus.size() == 1 ? std::to_string(std::llround(*cpus.begin()))
                                             : std::to_string(std::llround(*cpus.begin())) + " to " +
                                                   std::to_string(std::llround(*cpus.rbegin()));
    std::map<std::pair<std::string, std::string>, int64_t> lock_ids;
    int64_t run = 0;
    for (const auto& [key, h] : g.hosts) {
        ++run;
        RunInfo r;
        r.id = run;
        r.label = key.first + (key.second.empty() ? "" : " (" + key.second + ")");
        r.status = "complete";
        IntervalTotals in;
        in.run = run;
        in.end_ns = ns_of(window_s * (per_cpu ? h.cpus : 1.0));
        r.end_ns = in.end_ns;
        in.idle_ns = h.idle_ns;
        in.cpu_ns = h.cpu_ns;
        in.lost = h.lost;
        for (const auto& [lock, c] : h.locks) {
            auto [it, fresh] = lock_ids.emplace(lock, int64_t(lock_ids.size() + 1));
            if (fresh) {
                LockInfo info;
                info.id = it->second;
                info.name = lock.first;
                const size_t slash = lock.second.find('/');
                info.kind = lock.second.substr(0, slash);
                info.mode = slash == std::string::npos ? "" : lock.second.substr(slash + 1);
                if (info.kind.empty())
                    info.kind = "all";  // the summed rest
                s.locks.push_back(info);
            }
            s.lock_intervals.push_back({run, 0, it->second, c});
            in.counters.add(c);
        }
        s.runs.push_back(r);
        s.intervals.push_back(in);
    }
    return s;
}

// Metrics of rates become per CPU when hosts differ in size.
void name_per_cpu(std::vector<MetricDiff>& metrics)
{
    for (MetricDiff& m : metrics)
        if (m.metric == "contentions_per_s" || m.metric == "wait_per_s") {
            m.metric += "_per_cpu";
            m.unit += "/CPU";
        }
}

}  // namespace

double parse_window(const std::string& text)
{
    const std::optional<double> s = parse_duration_s(text);
    if (!s || *s < 1)
        throw UsageError("--window takes a duration of at least a second, such as 30m, 1h or 1d, not '" + text + "'");
    return *s;
}

double parse_end(const std::string& text, double now_s)
{
    if (text.empty() || text == "now")
        return now_s;
    char* rest = nullptr;
    const double unix_s = std::strtod(text.c_str(), &rest);
    if (rest && *rest == '\0' && unix_s > 0)
        return unix_s;
    tm t{};
    const char* after = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &t);
    if (!after || (std::string(after) != "Z" && std::string(after) != "+00:00"))
        throw UsageError("--end takes now, Unix seconds or a UTC time such as 2026-12-01T14:00:00Z, not '" + text +
                         "'");
    return double(timegm(&t));
}

FleetOptions fleet_options(const FleetRequest& r, double now_s)
{
    if (r.by.empty() == (r.a.empty() || r.b.empty()) || (!r.by.empty() && !(r.a.empty() && r.b.empty())))
        throw UsageError("--prometheus needs --a SELECTOR and --b SELECTOR, or --by LABEL");
    if (r.top < 1 || r.top > 1000)
        throw UsageError("--top must be between 1 and 1000");
    if (!(r.alpha > 0 && r.alpha <= 0.5))
        throw UsageError("--alpha must be in (0, 0.5], e.g. 0.05");
    if (!(r.min_effect >= 0 && r.min_effect < 1))
        throw UsageError("--min-effect must be in [0, 1), e.g. 0.05 or 5%");
    FleetOptions o;
    o.url = r.url;
    o.selector_a = r.a;
    o.selector_b = r.b;
    o.by = r.by;
    o.window_s = parse_window(r.window);
    o.end = parse_end(r.end, now_s);
    o.top = r.top;
    o.alpha = r.alpha;
    o.min_effect = r.min_effect;
    return o;
}

namespace {

Host* find_host(Group& a, Group& b, const HostKey& key)
{
    for (Group* g : {&a, &b})
        if (auto it = g->hosts.find(key); it != g->hosts.end())
            return &it->second;
    return nullptr;
}

// A host whose build info matched both selectors belongs to neither.
void drop_hosts_in_both(Group& a, Group& b, std::vector<std::string>& warnings)
{
    size_t in_both = 0;
    for (auto it = a.hosts.begin(); it != a.hosts.end();)
        if (b.hosts.erase(it->first)) {
            it = a.hosts.erase(it);
            ++in_both;
        } else {
            ++it;
        }
    if (in_both)
        warnings.push_back(std::to_string(in_both) + " hosts match both selectors and were left out of both");
    for (const Group* g : {&a, &b})
        if (g->hosts.empty())
            throw Error("no host to compare", "lockscope_build_info" + g->selector, 0,
                        "no host's build info matched it throughout the window; list the values there are with "
                        "the PromQL 'count by (kernel) (lockscope_build_info)'");
}

// Each host's counters over the window: the top locks one by one, the rest
// summed, and the host's own (lost events, CPU and idle time).
void fetch_counts(const PrometheusApi& api, const FleetOptions& o, const std::string& range, Group& a, Group& b)
{
    const std::string both = "(" + hosts_expr(a.selector, range) + " or " + hosts_expr(b.selector, range) + ")";
    std::set<std::pair<std::string, std::string>> top;  // (lock, kind label)
    std::set<std::string> top_names;
    for (const Sample& s : api.query(top_locks_query(both, range, o.top), o.end)) {
        top.insert({s.label("lock"), s.label("kind")});
        top_names.insert(s.label("lock"));
    }
    const std::string top_regex = names_regex({top_names.begin(), top_names.end()});
    const std::pair<std::string, std::string> all_locks{kAllLocks, ""};
    std::map<HostKey, RawCounts> raw;
    for (size_t i = 0; i < std::size(kCounters); ++i)
        for (const Sample& s : api.query(lock_counter_query(kCounters[i].metric, both, top_regex, range), o.end)) {
            const std::pair<std::string, std::string> lock{s.label("lock"), s.label("kind")};
            if (find_host(a, b, host_of(s)) && (lock == all_locks || top.count(lock)))
                raw[host_of(s)][lock][i] = std::isfinite(s.value) ? s.value : 0.0;
        }
    for (auto& [key, counts] : raw)
        if (Host* h = find_host(a, b, key))
            h->locks = host_locks(std::move(counts));
    for (const Sample& s : api.query(host_counter_query(both, range), o.end))
        if (Host* h = find_host(a, b, host_of(s))) {
            const std::string counter = s.label("counter");
            (counter == "lost"          ? h->lost
             : counter == "cpu_seconds" ? h->cpu_ns
                                        : h->idle_ns) = counter == "lost" ? count_of(s.value) : ns_of(s.value);
        }
}

// What the comparison rests on: per-CPU rates, hosts left out, the window
// and the locks compared.
void add_fleet_notes(DiffResult& d, const FleetOptions& o, const std::string& range, bool per_cpu, const Group& a,
                     const Group& b)
{
    // Exporters count no workload operations: throughput is never compared.
    std::erase_if(d.notes, [](const std::string& n) { return n.starts_with("throughput omitted"); });
    if (per_cpu) {
        name_per_cpu(d.totals);
        for (LockDiff& l : d.locks)
            name_per_cpu(l.metrics);
        d.notes.push_back("the hosts differ in CPU count: contentions and wait are per second per CPU");
    }
    for (const auto& [g, label] : {std::pair{&a, "A"}, std::pair{&b, "B"}})
        if (g->left_out)
            d.notes.push_back(std::to_string(g->left_out) + " host(s) matched " + label +
                              "'s selector for part of the window only (another kernel or settings, e.g. a "
                              "reboot): left out");
    char window[160];
    const time_t end = time_t(o.end);
    tm utc{};
    gmtime_r(&end, &utc);
    char when[32];
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &utc);
    std::snprintf(window, sizeof window,
                  "window: %s ending %s, rates from Prometheus' increase() (counter resets "
                  "handled as rate() does)",
                  range.c_str(), when);
    d.notes.push_back(window);
    d.notes.push_back("locks: the " + std::to_string(o.top) +
                      " (lock, kind) pairs with the most wait over both "
                      "groups, each compared on its own; every other pair summed per host as lock \"" +
                      kRestLock + "\". A host without a series for a lock counts 0 for it");
}

}  // namespace

DiffResult diff_fleet(const FleetOptions& o)
{
    const PrometheusApi api(o.url, 120, o.cancelled);
    const std::string range = promql_range(o.window_s);
    Group a, b;
    if (!o.by.empty()) {
        std::tie(a.selector, b.selector) = largest_groups(api, o, range);
    } else {
        a.selector = build_info_selector(o.selector_a);
        b.selector = build_info_selector(o.selector_b);
    }
    fetch_hosts(api, o.end, range, a);
    fetch_hosts(api, o.end, range, b);
    std::vector<std::string> warnings;
    drop_hosts_in_both(a, b, warnings);
    fetch_counts(api, o, range, a, b);

    std::set<double> cpus;
    for (const Group* g : {&a, &b})
        for (const auto& [key, h] : g->hosts)
            cpus.insert(h.cpus);
    const bool per_cpu = cpus.size() > 1 && !cpus.count(0);
    if (cpus.size() > 1 && cpus.count(0))
        warnings.push_back(
            "hosts differ in CPU count, but some export no cpus label (an older lockscope): rates "
            "are per host, not per CPU");

    DiffOptions options;
    options.alpha = o.alpha;
    options.min_effect = o.min_effect;
    options.runs_are_hosts = true;
    options.label_a = "hosts with lockscope_build_info" + a.selector;
    options.label_b = "hosts with lockscope_build_info" + b.selector;
    DiffResult d = diff_sessions(as_session(a, o.window_s, per_cpu), as_session(b, o.window_s, per_cpu), options);
    d.warnings.insert(d.warnings.begin(), warnings.begin(), warnings.end());
    add_fleet_notes(d, o, range, per_cpu, a, b);
    return d;
}

}  // namespace lockscope::fleet
