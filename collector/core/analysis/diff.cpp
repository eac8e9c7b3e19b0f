// Comparing two sessions. Rendering is in diff_format.cpp.
#include "core/analysis/diff.h"
#include "core/analysis/diff_verdicts.h"
#include "core/analysis/estimate.h"
#include "core/analysis/lock_vocabulary.h"

#include "core/error.h"
#include "core/format.h"
#include "core/analysis/stack_frames.h"
#include "core/session_vocabulary.h"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace lockscope {
namespace {

// One sample: a whole run (run mode) or one interval (interval mode).
struct Unit {
    int64_t run = 0;
    double seconds = 0;
    std::optional<double> ops;
    uint64_t idle_ns = 0, cpu_ns = 0;
    LockCounters counters;  // all locks
};

using LockKey = std::tuple<std::string, std::string, std::string>;  // name, kind, mode

// Sampled stacks of one lock: (role, functions innermost first) → samples.
using StackCounts = std::map<std::pair<std::string, std::vector<std::string>>, uint64_t>;

struct Side {
    std::vector<Unit> units;
    std::map<LockKey, std::vector<LockCounters>> locks;  // aligned with units
    std::map<LockKey, StackCounts> stacks;               // waiter and holder stacks
    size_t runs = 0, intervals = 0;
    bool all_ops = true;  // every unit knows its workload operations
};

using Value = std::function<std::optional<double>(const LockCounters&, const Unit&)>;

struct Metric {
    const char* name;
    const char* unit;
    Direction direction;
    Value value;
};

std::optional<double> ratio(double num, double den)
{
    if (!(den > 0))
        return std::nullopt;
    return num / den;
}

std::set<int64_t> run_ids(const Session& s)
{
    std::set<int64_t> ids;
    for (const IntervalTotals& in : s.intervals)
        ids.insert(in.run);
    return ids;
}

Side collect(const Session& s, bool by_runs)
{
    Side side;
    std::map<std::pair<int64_t, int64_t>, size_t> where;  // (run, index) → unit
    std::map<int64_t, size_t> run_unit;
    for (const IntervalTotals& in : s.intervals) {
        ++side.intervals;
        size_t at;
        if (by_runs) {
            auto [it, fresh] = run_unit.emplace(in.run, side.units.size());
            if (fresh)
                side.units.push_back(Unit{in.run});
            at = it->second;
        } else {
            at = side.units.size();
            side.units.push_back(Unit{in.run});
        }
        where[{in.run, in.index}] = at;
        Unit& u = side.units[at];
        u.seconds += in.seconds();
        u.idle_ns += in.idle_ns;
        u.cpu_ns += in.cpu_ns;
        u.counters.add(in.counters);
        if (in.ops)
            u.ops = u.ops.value_or(0) + *in.ops;
        else
            side.all_ops = false;
    }
    side.runs = run_ids(s).size();
    std::map<int64_t, const LockInfo*> info;
    for (const LockInfo& l : s.locks)
        info[l.id] = &l;
    for (const LockInterval& li : s.lock_intervals) {
        auto lock = info.find(li.lock_id);
        auto unit = where.find({li.run, li.index});
        if (lock == info.end() || unit == where.end())
            continue;
        const LockInfo& l = *lock->second;
        auto& series = side.locks[{current_class_name(l.name), l.kind, l.mode}];
        series.resize(side.units.size());
        series[unit->second].add(li.counters);
    }
    // Locks known to the session but never contended still count as present.
    for (const LockInfo& l : s.locks)
        side.locks[{current_class_name(l.name), l.kind, l.mode}].resize(side.units.size());
    // User-space locks are kept per run, not per interval: they are samples
    // only when whole runs are (their kinds, "pthread_mutex", ..., keep them
    // apart from kernel locks of the same name).
    if (by_runs)
        for (const UserLockRow& u : s.user_locks) {
            auto unit = run_unit.find(u.run);
            if (unit == run_unit.end())
                continue;
            auto& series = side.locks[{u.name, u.kind, ""}];
            series.resize(side.units.size());
            LockCounters& c = series[unit->second];
            c.contentions += u.waits;
            c.wait_ns += u.wait_ns;
            c.max_wait_ns = std::max(c.max_wait_ns, u.max_wait_ns);
        }
    const std::set<int64_t> runs = run_ids(s);
    for (const StackSample& st : s.stacks) {
        auto lock = info.find(st.lock_id);
        if (lock == info.end() || !runs.count(st.run) || (st.role != "waiter" && !st.holder()))
            continue;
        std::vector<std::string> functions;
        for (const std::string& frame : st.frames) {
            std::string f = stack_function(frame);
            if (!is_tracepoint_plumbing(f))
                functions.push_back(std::move(f));
        }
        const LockInfo& l = *lock->second;
        side.stacks[{current_class_name(l.name), l.kind, l.mode}][{st.role, std::move(functions)}] += st.samples;
    }
    return side;
}

// B's lock `from` is A's `to` (paired by name or by class across kinds).
void rekey(Side& sb, const LockKey& from, const LockKey& to)
{
    auto node = sb.locks.extract(from);
    node.key() = to;
    sb.locks.insert(std::move(node));
    if (auto st = sb.stacks.extract(from)) {
        st.key() = to;
        sb.stacks.insert(std::move(st));
    }
}

// "waiter" or "holder": the family whose samples a path's share is of.
std::string stack_family(const std::string& role)
{
    return role == "waiter" ? role : "holder";
}

// Every path of the locks in both sessions, where each side sampled at
// least kMinStackSamples stacks of its family: its share in A against B.
// An A/A diff stays quiet: Holm runs over every path compared.

std::vector<StackShift> compare_stacks(const Side& sa, const Side& sb, double alpha, size_t& compared)
{
    std::vector<StackShift> all;
    for (const auto& [key, stacks_a] : sa.stacks) {
        auto other = sb.stacks.find(key);
        if (other == sb.stacks.end() || !sb.locks.count(key))
            continue;
        const StackCounts& stacks_b = other->second;
        std::map<std::string, uint64_t> total_a, total_b;  // by family
        for (const auto& [path, n] : stacks_a)
            total_a[stack_family(path.first)] += n;
        for (const auto& [path, n] : stacks_b)
            total_b[stack_family(path.first)] += n;
        std::set<std::pair<std::string, std::vector<std::string>>> paths;
        for (const auto* stacks : {&stacks_a, &stacks_b})
            for (const auto& [path, n] : *stacks)
                paths.insert(path);
        for (const auto& path : paths) {
            const std::string family = stack_family(path.first);
            const uint64_t na = total_a[family], nb = total_b[family];
            if (na < kMinStackSamples || nb < kMinStackSamples)
                continue;
            StackShift sh{std::get<0>(key), std::get<1>(key), std::get<2>(key), path.first, path.second};
            auto a = stacks_a.find(path);
            auto b = stacks_b.find(path);
            sh.samples_a = a == stacks_a.end() ? 0 : a->second;
            sh.samples_b = b == stacks_b.end() ? 0 : b->second;
            sh.total_a = na;
            sh.total_b = nb;
            sh.share = stats::proportion_difference(sh.samples_a, na, sh.samples_b, nb, alpha);
            all.push_back(std::move(sh));
        }
    }
    compared = all.size();
    std::vector<double> p;
    for (const StackShift& sh : all)
        p.push_back(sh.share.p_value);
    const std::vector<double> adjusted = stats::holm_adjust(p);
    std::vector<StackShift> shifts;
    for (size_t i = 0; i < all.size(); ++i) {
        all[i].p_adjusted = adjusted[i];
        if (adjusted[i] < alpha)
            shifts.push_back(std::move(all[i]));
    }
    std::stable_sort(shifts.begin(), shifts.end(), [](const StackShift& x, const StackShift& y) {
        return std::fabs(x.share.difference) > std::fabs(y.share.difference);
    });
    return shifts;
}

std::string workload_identity(const Session& s)
{
    std::string w = s.meta_value("workload");
    return w.empty() ? s.meta_value("command") : w;
}

// Metadata a reader needs to judge whether the numbers are comparable,
// in the order they matter: kernel, its config, machine, what ran, tooling.
int meta_rank(const std::string& key)
{
    // PREEMPT_RT first: it swaps mutexes and rwsems for rtmutex-based locks,
    // which changes what every lock row means.
    static const char* const order[] = {"config.CONFIG_PREEMPT_RT",
                                        "kernel_release",
                                        "kernel_version",
                                        "config.",
                                        "cpu_model",
                                        "online_cpus",
                                        "recorder",
                                        "workload",
                                        "command",
                                        "scope",
                                        "interval_ms",
                                        "repeat",
                                        "stack_period",
                                        "tool_version"};
    for (size_t i = 0; i < std::size(order); ++i) {
        const std::string prefix = order[i];
        if (key == prefix || (prefix.back() == '.' && key.starts_with(prefix)) ||
            (prefix == "workload" && key.starts_with("workload.")))
            return int(i);
    }
    return -1;
}

std::vector<MetaDifference> meta_differences(const Session& a, const Session& b)
{
    std::set<std::string> keys;
    for (const auto* s : {&a, &b})
        for (const auto& [key, value] : s->meta)
            if (meta_rank(key) >= 0)
                keys.insert(key);
    std::vector<MetaDifference> out;
    for (const std::string& key : keys) {
        std::string va = a.meta_value(key), vb = b.meta_value(key);
        if (va != vb)
            out.push_back({key, va, vb});
    }
    std::stable_sort(out.begin(), out.end(), [](const MetaDifference& x, const MetaDifference& y) {
        return meta_rank(x.key) < meta_rank(y.key);
    });
    return out;
}

// Values of one metric per unit; nullopt where it is undefined (no attempts, ...).
std::vector<std::optional<double>> values(const Side& side, const std::vector<LockCounters>* lock, const Value& value)
{
    std::vector<std::optional<double>> out;
    for (size_t i = 0; i < side.units.size(); ++i)
        out.push_back(value(lock ? (*lock)[i] : side.units[i].counters, side.units[i]));
    return out;
}

MetricDiff compare(const Metric& metric, const Side& a, const Side& b, const std::vector<LockCounters>* lock_a,
                   const std::vector<LockCounters>* lock_b, bool by_runs, double alpha)
{
    MetricDiff m{metric.name, metric.unit, metric.direction};
    std::vector<double> xs, ys;
    std::vector<std::vector<double>> series;  // per run, for the autocorrelation
    auto gather = [&](const Side& side, const std::vector<LockCounters>* lock, std::vector<double>& out) {
        std::map<int64_t, std::vector<double>> by_run;
        const auto vals = values(side, lock, metric.value);
        for (size_t i = 0; i < vals.size(); ++i)
            if (vals[i]) {
                out.push_back(*vals[i]);
                by_run[side.units[i].run].push_back(*vals[i]);
            }
        for (auto& [run, v] : by_run)
            series.push_back(std::move(v));
    };
    gather(a, lock_a, xs);
    gather(b, lock_b, ys);
    if (by_runs) {
        m.test = stats::welch_test(xs, ys, alpha);
    } else {
        m.autocorrelation = stats::lag1_autocorrelation(series);
        m.test = stats::mann_whitney(xs, ys, alpha, stats::ar1_variance_inflation(m.autocorrelation));
    }
    m.p_adjusted = m.test.p_value;
    return m;
}

void require_data(const Session& s, const std::string& label)
{
    if (s.runs.empty() && s.intervals.empty())
        throw Error("cannot diff session", label, 0,
                    "it has no runs; it was probably interrupted before recording started");
    if (s.intervals.empty())
        throw Error("cannot diff session", label, 0, "it has no recorded intervals; record at least one full interval");
}

OneSidedLock one_sided(const LockKey& key, const std::vector<LockCounters>& series, const Side& side)
{
    OneSidedLock o{std::get<0>(key), std::get<1>(key), std::get<2>(key)};
    double seconds = 0;
    for (size_t i = 0; i < series.size(); ++i) {
        o.contentions += series[i].contentions;
        o.wait_ns += series[i].wait_ns;
        seconds += side.units[i].seconds;
    }
    o.wait_per_s = seconds > 0 ? double(o.wait_ns) / seconds : 0.0;
    return o;
}

// A lock keeps its class when its implementation changes (PREEMPT_RT makes a
// mutex an rtmutex, an rwsem an rt-rwlock): keys of the same name and mode
// found on one side each, under different kinds, are paired. Returns A's key
// → B's kind for the report.
std::map<LockKey, std::string> pair_kind_changes(const Side& sa, Side& sb)
{
    std::map<LockKey, std::string> changed;
    auto unmatched = [](const Side& side, const Side& other) {
        std::map<std::pair<std::string, std::string>, std::vector<LockKey>> out;  // (name, mode)
        for (const auto& [key, series] : side.locks)
            if (!other.locks.count(key))
                out[{std::get<0>(key), std::get<2>(key)}].push_back(key);
        return out;
    };
    const auto only_a = unmatched(sa, sb);
    const auto only_b = unmatched(sb, sa);
    for (const auto& [name_mode, keys_a] : only_a) {
        auto it = only_b.find(name_mode);
        if (it == only_b.end() || keys_a.size() != 1 || it->second.size() != 1)
            continue;
        const LockKey& key_b = it->second.front();
        rekey(sb, key_b, keys_a.front());
        changed[keys_a.front()] = std::get<1>(key_b);
    }
    return changed;
}

bool is_bench(const Session& s)
{
    return is_bench_scope(s.meta_value(kScopeKey));
}

// False for a session that counted contentions but never timed a wait:
// `lockscope bench` sessions count spin outcomes and sleeps from the
// reference locks' own counters, which do not time waits.
bool times_waits(const Session& s)
{
    uint64_t contentions = 0, wait_ns = 0;
    for (const IntervalTotals& in : s.intervals) {
        contentions += in.counters.contentions;
        wait_ns += in.counters.wait_ns;
    }
    return contentions == 0 || wait_ns > 0;
}

// Renames B's side of each pair to A's key so the comparison loop matches
// them; returns A's key → B's name for the report. A pair matches keys of the
// same kind and mode, or the single key of each name when kinds differ
// (a mutex that became an rwsem).
std::map<LockKey, std::string> apply_pairs(const std::vector<std::pair<std::string, std::string>>& pairs,
                                           const Side& sa, Side& sb)
{
    std::map<LockKey, std::string> renamed;
    auto keys_named = [](const Side& side, const std::string& name) {
        std::vector<LockKey> keys;
        for (const auto& [key, series] : side.locks)
            if (std::get<0>(key) == name)
                keys.push_back(key);
        return keys;
    };
    for (const auto& [name_a, name_b] : pairs) {
        if (name_a == name_b)
            continue;
        const std::vector<LockKey> ka = keys_named(sa, name_a), kb = keys_named(sb, name_b);
        for (const LockKey& key_b : kb) {
            LockKey key_a{name_a, std::get<1>(key_b), std::get<2>(key_b)};
            if (!sa.locks.count(key_a)) {
                if (ka.size() != 1 || kb.size() != 1)
                    continue;
                key_a = ka.front();
            }
            if (sb.locks.count(key_a))
                continue;  // B has a lock of A's name too: it is matched by name
            rekey(sb, key_b, key_a);
            renamed[key_a] = name_b;
        }
    }
    return renamed;
}

}  // namespace

Session select_runs(const Session& s, const std::string& pattern)
{
    Session out = s;
    std::set<int64_t> keep;
    std::string labels;
    for (const RunInfo& r : s.runs) {
        if (fnmatch(pattern.c_str(), r.label.c_str(), 0) == 0)
            keep.insert(r.id);
        if (labels.size() < 200)
            labels += (labels.empty() ? "" : ", ") + ("'" + r.label + "'");
    }
    if (keep.empty())
        throw Error("no run matches", pattern, 0,
                    s.runs.empty() ? "the session has no runs" : "its runs are " + labels);
    auto kept = [&](const auto& row) { return keep.count(row.run) == 0; };
    std::erase_if(out.runs, [&](const RunInfo& r) { return keep.count(r.id) == 0; });
    std::erase_if(out.intervals, kept);
    std::erase_if(out.lock_intervals, kept);
    std::erase_if(out.stacks, kept);
    std::erase_if(out.edges, kept);
    std::erase_if(out.holder_tasks, kept);
    std::erase_if(out.lock_cgroups, kept);
    std::erase_if(out.tasks, kept);
    std::set<int64_t> seen;
    for (const LockInterval& li : out.lock_intervals)
        seen.insert(li.lock_id);
    std::erase_if(out.locks, [&](const LockInfo& l) { return seen.count(l.id) == 0; });
    out.meta["runs"] = pattern;
    return out;
}

namespace {

// --pair, plus: two bench sessions of one lock each (say rwsem@4.2 and
// rwsem@4.7-hacked) compare that lock under each policy.
std::vector<std::pair<std::string, std::string>> lock_pairs(const Session& a, const Session& b, const Side& sa,
                                                            const Side& sb, const DiffOptions& options, DiffResult& d)
{
    std::vector<std::pair<std::string, std::string>> pairs = options.pairs;
    if (!pairs.empty() || !is_bench(a) || !is_bench(b) || sa.locks.size() != 1 || sb.locks.size() != 1)
        return pairs;
    const LockKey& ka = sa.locks.begin()->first;
    const LockKey& kb = sb.locks.begin()->first;
    if (std::get<0>(ka) != std::get<0>(kb) && std::get<1>(ka) == std::get<1>(kb)) {
        pairs.emplace_back(std::get<0>(ka), std::get<0>(kb));
        d.notes.push_back("bench sessions of one lock each: " + std::get<0>(ka) + " (" + options.label_a +
                          ") is compared with " + std::get<0>(kb) + " (" + options.label_b + ")");
    }
    return pairs;
}

void warn_unused_pairs(const DiffOptions& options, const std::map<LockKey, std::string>& renamed, DiffResult& d)
{
    for (const auto& [name_a, name_b] : options.pairs) {
        // Init-captures: clang before 16 cannot capture structured bindings.
        const bool used =
            std::any_of(renamed.begin(), renamed.end(), [&want_a = name_a, &want_b = name_b](const auto& r) {
                return std::get<0>(r.first) == want_a && r.second == want_b;
            });
        if (!used && name_a != name_b)
            d.warnings.push_back("--pair " + name_a + "=" + name_b + " matched no lock (is '" + name_a + "' in " +
                                 options.label_a + " and '" + name_b + "' in " + options.label_b + "?)");
    }
}

// Damaged rows and losses on either side; returns whether the sessions ran
// unrelated workloads (also a warning).
bool warn_about_sessions(const Session& a, const Session& b, DiffResult& d)
{
    for (const auto& [s, label] : {std::pair{&a, &d.label_a}, std::pair{&b, &d.label_b}}) {
        if (!s->warnings.empty())
            d.warnings.push_back(*label + ": " + std::to_string(s->warnings.size()) +
                                 " damaged rows were skipped while loading");
        uint64_t lost = 0;
        for (const IntervalTotals& in : s->intervals)
            lost += in.lost;
        if (lost)
            d.warnings.push_back(*label + " lost " + format_count(lost) +
                                 " events or keys; its counts are lower bounds");
    }
    const std::string wa = workload_identity(a), wb = workload_identity(b);
    const bool unrelated = !wa.empty() && !wb.empty() && wa != wb;
    if (unrelated)
        d.warnings.push_back("the sessions ran unrelated workloads ('" + wa + "' vs '" + wb +
                             "'): differences reflect the workloads as much as the kernels");
    return unrelated;
}

// What diff compares, per unit (a run or an interval).
struct Metrics {
    Metric throughput, wait, contentions, spin_failures;
    std::vector<Metric> shares;  // spin share, off-CPU share, CPU idle (last)
};

Metrics make_metrics(bool per_op)
{
    return Metrics{
        {"throughput", "ops/s", Direction::HigherIsBetter,
         [](const LockCounters&, const Unit& u) -> std::optional<double> {
             return u.ops ? ratio(*u.ops, u.seconds) : std::nullopt;
         }},
        per_op ? Metric{"wait_per_op", "ns/op", Direction::LowerIsBetter,
                        [](const LockCounters& c, const Unit& u) -> std::optional<double> {
                            return u.ops ? ratio(double(c.wait_ns), *u.ops) : std::nullopt;
                        }}
               : Metric{"wait_per_s", "ns/s", Direction::LowerIsBetter,
                        [](const LockCounters& c, const Unit& u) { return ratio(double(c.wait_ns), u.seconds); }},
        {"contentions_per_s", "/s", Direction::LowerIsBetter,
         [](const LockCounters& c, const Unit& u) { return ratio(double(c.contentions), u.seconds); }},
        {"spin_failure_rate", "fraction", Direction::LowerIsBetter,
         [](const LockCounters& c, const Unit&) { return ratio(double(c.spin_failures), double(c.spin_attempts)); }},
        {{"spin_share", "fraction", Direction::Neutral,
          [](const LockCounters& c, const Unit&) { return ratio(double(c.spin_ns), double(c.wait_ns)); }},
         {"offcpu_share", "fraction", Direction::Neutral,
          [](const LockCounters& c, const Unit&) { return ratio(double(c.offcpu_ns()), double(c.wait_ns)); }},
         {"idle_fraction", "fraction", Direction::Neutral,
          [](const LockCounters&, const Unit& u) { return ratio(double(u.idle_ns), double(u.cpu_ns)); }}}};
}

// The totals: the few questions asked up front (did throughput, the
// spin-failure rate... change?), each tested at alpha on its own.
void compare_totals(const Session& a, const Session& b, const Side& sa, const Side& sb, const Metrics& m,
                    bool unrelated, bool timed, DiffResult& d)
{
    const bool per_op = sa.all_ops && sb.all_ops;
    if (unrelated)
        d.warnings.push_back("throughput omitted: operations of different workloads are not comparable");
    else if (!per_op)
        d.notes.push_back("throughput omitted: " + (sa.all_ops ? d.label_b : d.label_a) +
                          " has no workload operation counts");
    // A wait that was never timed is not a wait of 0 ns: leave it out.
    if (!timed)
        d.notes.push_back(
            "wait per op, spin share and off-CPU share omitted: " + (times_waits(a) ? d.label_b : d.label_a) +
            " counts contentions but does not time waits (bench sessions count spin outcomes "
            "and sleeps only)");
    for (const auto& [s, label] : {std::pair{&a, &d.label_a}, std::pair{&b, &d.label_b}})
        if (const uint32_t period = timing_period(s->meta).value_or(1); period > 1)
            d.notes.push_back(*label + " timed one episode in " + std::to_string(period) +
                              " (record --sample): its wait and time shares are unbiased estimates. The tests "
                              "compare their spread between intervals (or runs), which contains the sampling "
                              "error, so they stay valid but need larger differences to call one");
    std::vector<const Metric*> total_metrics;
    if (!unrelated && per_op)
        total_metrics.push_back(&m.throughput);
    total_metrics.push_back(&m.contentions);
    total_metrics.push_back(&m.spin_failures);
    if (timed) {
        total_metrics.push_back(&m.wait);
        for (size_t i = 0; i + 1 < m.shares.size(); ++i)
            total_metrics.push_back(&m.shares[i]);
    }
    total_metrics.push_back(&m.shares.back());  // CPU idle
    for (const Metric* metric : total_metrics)
        d.totals.push_back(compare(*metric, sa, sb, nullptr, nullptr, d.by_runs, d.alpha));
    for (MetricDiff& md : d.totals)
        adjust_family({&md}, d.alpha);
}

// The lock rows: many and exploratory, so their p-values are Holm-adjusted
// together, which keeps an A/A diff quiet.
void compare_locks(const Side& sa, const Side& sb, const Metrics& m, bool timed,
                   const std::map<LockKey, std::string>& renamed, const std::map<LockKey, std::string>& kind_changed,
                   DiffResult& d)
{
    for (const auto& [key, series_a] : sa.locks) {
        auto other = sb.locks.find(key);
        if (other == sb.locks.end()) {
            d.only_a.push_back(one_sided(key, series_a, sa));
            continue;
        }
        LockDiff l{std::get<0>(key), std::get<1>(key), std::get<2>(key)};
        if (auto r = renamed.find(key); r != renamed.end())
            l.name_b = r->second;
        if (auto k = kind_changed.find(key); k != kind_changed.end())
            l.kind_b = k->second;
        std::vector<const Metric*> lock_metrics{&m.wait, &m.contentions, &m.spin_failures};
        if (!timed)
            lock_metrics.erase(lock_metrics.begin());
        for (const Metric* metric : lock_metrics) {
            MetricDiff md = compare(*metric, sa, sb, &series_a, &other->second, d.by_runs, d.alpha);
            if (md.test.n_a + md.test.n_b > 0)  // no spin attempts anywhere: nothing to say
                l.metrics.push_back(std::move(md));
        }
        const double effect = l.metrics.empty() ? 0.0 : std::fabs(l.metrics.front().test.difference);
        l.effect = std::isfinite(effect) ? effect : 0.0;
        d.locks.push_back(std::move(l));
    }
    for (const auto& [key, series_b] : sb.locks)
        if (!sa.locks.count(key))
            d.only_b.push_back(one_sided(key, series_b, sb));
    std::vector<MetricDiff*> family;
    for (LockDiff& l : d.locks)
        for (MetricDiff& md : l.metrics)
            family.push_back(&md);
    adjust_family(family, d.alpha);
    std::stable_sort(d.locks.begin(), d.locks.end(),
                     [](const LockDiff& x, const LockDiff& y) { return x.effect > y.effect; });
    for (auto* list : {&d.only_a, &d.only_b})
        std::stable_sort(list->begin(), list->end(),
                         [](const OneSidedLock& x, const OneSidedLock& y) { return x.wait_ns > y.wait_ns; });
}

// With hosts as the samples, a metric without enough of them says so in those words.
void say_not_enough_hosts(DiffResult& d)
{
    auto say = [](MetricDiff& m) {
        if (!m.test.enough_data && m.test.method == stats::Method::Welch)
            m.test.reason = "not enough hosts: the test needs at least 3 hosts with a value on each side (A has " +
                            std::to_string(m.test.n_a) + ", B has " + std::to_string(m.test.n_b) + ")";
    };
    std::for_each(d.totals.begin(), d.totals.end(), say);
    for (LockDiff& l : d.locks)
        std::for_each(l.metrics.begin(), l.metrics.end(), say);
}

// How the numbers were tested, said with them.
void method_notes(DiffResult& d)
{
    char buf[400];
    if (d.by_hosts) {
        std::snprintf(buf, sizeof buf,
                      "samples are per-host values over the window (%zu vs %zu hosts), compared with Welch's "
                      "t-test, which needs at least 3 hosts with a value on each side; the relative-change "
                      "interval is Fieller's",
                      d.runs_a, d.runs_b);
    } else if (d.by_runs) {
        std::snprintf(buf, sizeof buf,
                      "samples are per-run values (%zu vs %zu runs), compared with Welch's t-test; the "
                      "relative-change interval is Fieller's",
                      d.runs_a, d.runs_b);
    } else {
        std::snprintf(buf, sizeof buf,
                      "fewer than 3 runs on a side: samples are per-interval values (%zu vs %zu), compared "
                      "with Mann-Whitney U. Intervals are autocorrelated (the test's variance is widened by "
                      "the measured lag-1 correlation) and cannot show run-to-run variation, so treat "
                      "verdicts as tentative; record each side with --repeat 3 or more",
                      d.intervals_a, d.intervals_b);
    }
    d.notes.push_back(buf);
    std::snprintf(buf, sizeof buf,
                  "each total is tested at alpha %.3g; lock rows' p-values are Holm-adjusted over all "
                  "lock rows; confidence intervals are %.3g%% per comparison",
                  d.alpha, 100 * (1 - d.alpha));
    d.notes.push_back(buf);
    if (d.stack_paths_compared)
        d.notes.push_back(
            "call paths: each path's share of its lock's sampled waiter (or holder) stacks, compared "
            "with the pooled two-proportion z-test, Holm-adjusted over the " +
            std::to_string(d.stack_paths_compared) +
            " paths compared; intervals are Newcombe's hybrid score intervals, in percentage points. "
            "Stacks are samples: a path missing from a few samples is not proof that it is gone");
}

}  // namespace

DiffResult diff_sessions(const Session& a, const Session& b, const DiffOptions& options)
{
    if (!(options.alpha > 0 && options.alpha <= 0.5))
        throw Error("cannot diff", "", 0, "alpha must be in (0, 0.5], e.g. 0.05");
    require_data(a, options.label_a);
    require_data(b, options.label_b);

    DiffResult d;
    d.label_a = options.label_a;
    d.label_b = options.label_b;
    d.alpha = options.alpha;
    d.by_hosts = options.runs_are_hosts;
    d.by_runs = d.by_hosts || (run_ids(a).size() >= 3 && run_ids(b).size() >= 3);
    const Side sa = collect(a, d.by_runs);
    Side sb = collect(b, d.by_runs);
    const std::map<LockKey, std::string> renamed = apply_pairs(lock_pairs(a, b, sa, sb, options, d), sa, sb);
    const std::map<LockKey, std::string> kind_changed = pair_kind_changes(sa, sb);
    if (!kind_changed.empty())
        d.notes.push_back(
            "a lock whose kind differs between the sessions (mutex → rtmutex under PREEMPT_RT) is "
            "compared under its class name; the kind change is shown with it");
    warn_unused_pairs(options, renamed, d);
    d.runs_a = sa.runs;
    d.runs_b = sb.runs;
    d.intervals_a = sa.intervals;
    d.intervals_b = sb.intervals;
    d.metadata = meta_differences(a, b);

    const bool unrelated = warn_about_sessions(a, b, d);
    const Metrics metrics = make_metrics(sa.all_ops && sb.all_ops);
    const bool timed = times_waits(a) && times_waits(b);
    compare_totals(a, b, sa, sb, metrics, unrelated, timed, d);
    compare_locks(sa, sb, metrics, timed, renamed, kind_changed, d);
    if (!d.by_runs && (!a.user_locks.empty() || !b.user_locks.empty()))
        d.notes.push_back(
            "user-space locks left out: their waits are kept per run, so they are compared only "
            "between sessions of 3 or more runs each");
    d.stack_shifts = compare_stacks(sa, sb, d.alpha, d.stack_paths_compared);
    if (d.by_hosts)
        say_not_enough_hosts(d);
    method_notes(d);
    return d;
}

}  // namespace lockscope
