// Text and JSON renderings of a DiffResult. The verdict is always spelled
// out, so the text reads the same without colour and in CI logs.
#include "core/analysis/diff.h"
#include "core/format.h"
#include "core/enum_names.h"
#include "core/lock_key.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <sstream>

namespace lockscope {
namespace {

constexpr size_t kDiffWidth = 100;

// Columns: label, A, B, change, CI, p, verdict; 100 columns with separators.
constexpr size_t kLabelW = 19, kValueW = 9, kChangeW = 8, kCiW = 18, kPW = 6;

std::string pad_cell(const std::string& s, size_t width, bool right)
{
    size_t w = display_width(s);
    std::string fill(w < width ? width - w : 0, ' ');
    return right ? fill + s : s + fill;
}

std::string label_of(const MetricDiff& m)
{
    // The wait's parts (and its holder split's) are indented under the wait's row: shares of it.
    static constexpr std::pair<const char*, const char*> kLabels[] = {{"throughput", "throughput ops/s"},
                                                                      {"contentions_per_s", "contentions/s"},
                                                                      {"spin_failure_rate", "spin-failure rate"},
                                                                      {"wait_per_op", "wait per op"},
                                                                      {"wait_per_s", "wait per second"},
                                                                      {"spinning_share", "  spinning"},
                                                                      {"queued_on_cpu_share", "  queued on CPU"},
                                                                      {"asleep_share", "  asleep"},
                                                                      {"runnable_share", "  runnable"},
                                                                      {"holder_running_share", "  holder running"},
                                                                      {"holder_runnable_share", "  holder runnable"},
                                                                      {"holder_asleep_share", "  holder asleep"},
                                                                      {"holder_unknown_share", "  holder unknown"},
                                                                      {"idle_fraction", "CPU idle"}};
    // diff --prometheus over hosts of different sizes: rates per CPU.
    if (m.metric.ends_with("_per_cpu"))
        return label_of(MetricDiff{m.metric.substr(0, m.metric.size() - 8)}) + "/CPU";
    for (const auto& [metric, label] : kLabels)
        if (m.metric == metric)
            return label;
    return m.metric;
}

std::string value_of(const MetricDiff& m, double v)
{
    if (!std::isfinite(v))
        return "-";
    if (m.unit == "fraction")
        return format_percent(v);
    if (m.unit == "ns/op" || m.unit.starts_with("ns/s"))
        return std::signbit(v) ? "-" + format_duration(-v, true) : format_duration(v, true);
    if (std::fabs(v) >= 999.5)
        return (v < 0 ? "-" : "") + format_count_short(std::fabs(v));
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

std::string signed_percent(double fraction)
{
    char buf[32];
    if (fraction >= 9.995)
        std::snprintf(buf, sizeof buf, "%.0fx", fraction + 1);  // "12x" reads better than "+1100.0%"
    else
        std::snprintf(buf, sizeof buf, "%+.1f%%", fraction * 100);
    return buf;
}

// A fraction's change in percentage points: "+2.5pp", "-100pp".
std::string signed_points(double fraction)
{
    char buf[32];
    const double points = 100 * fraction;
    std::snprintf(buf, sizeof buf, std::fabs(points) >= 99.95 ? "%+.0fpp" : "%+.1fpp", points);
    return buf;
}

// A rate's or time's change relative to A; a fraction's in points (a share
// going from 1% to 2% is not "+100%" worth of anything).
std::string change_of(const MetricDiff& m)
{
    const stats::TestResult& t = m.test;
    if (m.fraction())
        return std::isfinite(t.difference) ? signed_points(t.difference) : "-";
    if (std::isfinite(t.relative))
        return signed_percent(t.relative);
    return t.center_a == 0 && t.center_b > 0 ? "from 0" : "-";
}

std::string ci_of(const MetricDiff& m)
{
    const stats::TestResult& t = m.test;
    if (!t.enough_data || !std::isfinite(t.diff_low) || !std::isfinite(t.diff_high))
        return "-";
    if (m.fraction())
        return "[" + signed_points(t.diff_low) + ", " + signed_points(t.diff_high) + "]";
    if (std::isfinite(t.rel_low) && std::isfinite(t.rel_high))
        return "[" + signed_percent(t.rel_low) + ", " + signed_percent(t.rel_high) + "]";
    // From 0: no relative change, the difference in the metric's unit.
    auto sign = [&](double v) { return (v >= 0 ? "+" : "") + value_of(m, v); };
    return "[" + sign(t.diff_low) + ", " + sign(t.diff_high) + "]";
}

std::string p_of(const MetricDiff& m)
{
    if (!m.test.enough_data)
        return "-";
    if (m.p_adjusted < 0.001)
        return "<0.001";
    char buf[16];
    std::snprintf(buf, sizeof buf, "%.3f", m.p_adjusted);
    return buf;
}

std::string row(const std::string& label, const std::string& a, const std::string& b, const std::string& change,
                const std::string& ci, const std::string& p, const std::string& verdict)
{
    std::string s = pad_cell(truncate_display(label, kLabelW), kLabelW, false) + " " + pad_cell(a, kValueW, true) +
                    " " + pad_cell(b, kValueW, true) + " " + pad_cell(change, kChangeW, true) + " " +
                    pad_cell(ci, kCiW, true) + " " + pad_cell(p, kPW, true) + " " + verdict;
    return s + '\n';
}

std::string metric_row(const MetricDiff& m, const std::string& indent)
{
    return row(indent + label_of(m), value_of(m, m.test.center_a), value_of(m, m.test.center_b), change_of(m), ci_of(m),
               p_of(m), verdict_name(m.verdict));
}

std::string table_header(const DiffResult& d, const char* first)
{
    char ci[32];
    std::snprintf(ci, sizeof ci, "%.3g%% CI", 100 * (1 - d.alpha));
    return row(first, "A", "B", "change", ci, "p adj", "verdict");
}

std::string samples_of(const stats::TestResult& t)
{
    return std::string(stats::method_name(t.method)) + ", n " + std::to_string(t.n_a) + "/" + std::to_string(t.n_b);
}

nlohmann::json number(double v)
{
    return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

const char* direction_name(Direction d)
{
    static constexpr std::array kNames{"higher_is_better", "lower_is_better", "neutral"};
    return enum_name<Direction::Neutral>(kNames, d);
}

nlohmann::json metric_json(const MetricDiff& m)
{
    const stats::TestResult& t = m.test;
    nlohmann::json j = {{"metric", m.metric},
                        {"unit", m.unit},
                        {"direction", direction_name(m.direction)},
                        {"test", stats::method_name(t.method)},
                        {"center", "ratio_of_sums"},
                        {"n_a", t.n_a},
                        {"n_b", t.n_b},
                        {"a", number(t.center_a)},
                        {"b", number(t.center_b)},
                        {"difference", number(t.difference)},
                        {"difference_ci", {number(t.diff_low), number(t.diff_high)}},
                        {"relative_change", number(t.relative)},
                        {"relative_ci", {number(t.rel_low), number(t.rel_high)}},
                        {"p_value", t.enough_data ? number(t.p_value) : nullptr},
                        {"p_adjusted", t.enough_data ? number(m.p_adjusted) : nullptr},
                        {"effect", number(m.effect())},
                        {"verdict", verdict_name(m.verdict)}};
    if (!t.reason.empty())
        j["reason"] = t.reason;
    j["df"] = t.enough_data ? number(t.df) : nullptr;
    return j;
}

nlohmann::json one_sided_json(const std::vector<OneSidedLock>& locks)
{
    nlohmann::json arr = nlohmann::json::array();
    for (const OneSidedLock& l : locks)
        arr.push_back({{"name", l.name},
                       {"kind", l.kind},
                       {"mode", l.mode},
                       {"contentions", l.contentions},
                       {"wait_ns", l.wait_ns},
                       {"wait_per_s", l.wait_per_s}});
    return arr;
}

std::string wrap(const std::string& text, const std::string& first, size_t indent)
{
    return wrap_text(text, first, indent, kDiffWidth);
}

std::string lock_title(const std::string& name, const std::string& kind, const std::string& mode)
{
    return name + " (" + kind_text(kind, mode) + ")";
}

// "waiting in" / "held while sleeping in": what a path's role means.
std::string stack_role_phrase(const std::string& role)
{
    if (role == "waiter")
        return "waiting in";
    return "held while " + (role.size() > 7 ? role.substr(7) : std::string("held")) + " in";
}

std::string path_text(const std::vector<std::string>& functions, size_t frames)
{
    std::string text;
    for (size_t i = 0; i < functions.size() && i < frames; ++i)
        text += (i ? " <- " : "") + functions[i];
    return functions.empty() ? "(no frames)" : text;
}

std::string points(double fraction)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.0f", fraction * 100.0);
    return buf;
}

void stack_shifts_text(const DiffResult& d, std::ostream& out)
{
    constexpr size_t kShown = 10, kFrames = 4;
    out << "\ncall paths that moved (share of the lock's sampled waiter or holder stacks)\n";
    if (d.stack_paths_compared == 0) {
        out << "  none compared: no lock in both sessions has " << kMinStackSamples
            << "+ sampled waiter or holder stacks a side, in " << kMinRuns << "+ runs\n";
        return;
    }
    if (d.stack_shifts.empty()) {
        out << "  none: " << d.stack_paths_compared << " paths compared, none moved beyond noise\n";
        return;
    }
    for (size_t i = 0; i < d.stack_shifts.size() && i < kShown; ++i) {
        const StackShift& sh = d.stack_shifts[i];
        char shares[160];
        std::snprintf(shares, sizeof shares, "%s -> %s  (%s pts, CI [%s, %s], p_adj %.2g)%s",
                      format_percent_cell(sh.share.p_a).c_str(), format_percent_cell(sh.share.p_b).c_str(),
                      points(sh.share.difference).c_str(), points(sh.share.low).c_str(), points(sh.share.high).c_str(),
                      sh.p_adjusted, sh.appeared() ? "  new in B" : "");
        out << truncate_display("  " + lock_title(sh.name, sh.kind, sh.mode) + ", " + stack_role_phrase(sh.role),
                                kDiffWidth)
            << '\n'
            << truncate_display("    " + path_text(sh.functions, kFrames), kDiffWidth) << '\n'
            << "    " << shares << '\n';
    }
    if (d.stack_shifts.size() > kShown)
        out << "  ... and " << d.stack_shifts.size() - kShown << " more (--format json lists them all)\n";
}

nlohmann::json stack_shifts_json(const DiffResult& d)
{
    nlohmann::json arr = nlohmann::json::array();
    for (const StackShift& sh : d.stack_shifts)
        arr.push_back({{"name", sh.name},
                       {"kind", sh.kind},
                       {"mode", sh.mode},
                       {"role", sh.role},
                       {"functions", sh.functions},
                       {"samples_a", sh.samples_a},
                       {"samples_b", sh.samples_b},
                       {"total_a", sh.total_a},
                       {"total_b", sh.total_b},
                       {"share_a", number(sh.share.p_a)},
                       {"share_b", number(sh.share.p_b)},
                       {"difference", number(sh.share.difference)},
                       {"difference_ci", {number(sh.share.low), number(sh.share.high)}},
                       {"p_value", number(sh.share.p_value)},
                       {"p_adjusted", number(sh.p_adjusted)},
                       {"appeared", sh.appeared()}});
    return arr;
}

}  // namespace

std::string format_diff_text(const DiffResult& d)
{
    std::ostringstream out;
    out << "lockscope diff\n";
    out << "  A  " << truncate_display(d.label_a, kDiffWidth - 5) << '\n';
    out << "  B  " << truncate_display(d.label_b, kDiffWidth - 5) << '\n';
    if (d.by_hosts)
        out << "  hosts: " << d.runs_a << " in A, " << d.runs_b << " in B\n";
    for (const std::string& w : d.warnings)
        out << wrap(w, "warning: ", 9);

    out << "\nwhat differs besides the numbers\n";
    if (d.metadata.empty())
        out << "  nothing: kernel, config, CPU, workload and recorder are the same\n";
    for (const MetaDifference& m : d.metadata) {
        auto shown = [](const std::string& v) { return v.empty() ? std::string("(not recorded)") : v; };
        out << "  " << m.key << '\n';
        out << "    A  " << truncate_display(shown(m.a), kDiffWidth - 7) << '\n';
        out << "    B  " << truncate_display(shown(m.b), kDiffWidth - 7) << '\n';
    }

    out << "\ntotals";
    if (!d.totals.empty())
        out << " (" << samples_of(d.totals.front().test) << ")";
    out << '\n' << table_header(d, "");
    for (const MetricDiff& m : d.totals)
        out << metric_row(m, "");

    // Locks are ordered by their first metric's change: wait, or contentions
    // when waits were not timed.
    const bool by_wait = d.locks.empty() || d.locks.front().metrics.empty() ||
                         d.locks.front().metrics.front().metric.rfind("wait_", 0) == 0;
    out << "\nlocks in both " << (d.by_hosts ? "groups" : "sessions") << ", largest change in "
        << (by_wait ? "wait" : "contentions") << " first\n";
    if (d.locks.empty())
        out << "  none\n";
    else
        out << table_header(d, "");
    for (const LockDiff& l : d.locks) {
        // A kind that changed is a difference worth reading: "mutex → rtmutex".
        std::string title = lock_title(l.name, l.kind_b.empty() ? l.kind : l.kind + " → " + l.kind_b, l.mode);
        if (!l.name_b.empty())
            title += " (A) vs " + l.name_b + " (B)";
        if (!l.metrics.empty())
            title += "  [" + samples_of(l.metrics.front().test) + "]";
        out << truncate_display(title, kDiffWidth) << '\n';
        for (const MetricDiff& m : l.metrics)
            out << metric_row(m, "  ");
    }
    for (const auto& [list, which] : {std::pair{&d.only_a, "A"}, std::pair{&d.only_b, "B"}}) {
        if (list->empty())
            continue;
        out << "\nlocks only in " << which << " (no test possible)\n";
        for (const OneSidedLock& l : *list)
            out << "  " << pad_cell(truncate_display(lock_title(l.name, l.kind, l.mode), 56), 56, false) << " "
                << pad_cell(format_count(l.contentions), 12, true) << " contentions, wait "
                << format_duration(l.wait_per_s, true) << "/s\n";
    }
    if (!d.by_hosts)  // Prometheus has no stacks
        stack_shifts_text(d, out);
    out << "\nnotes\n";
    for (const MetricDiff& m : d.totals)
        if (!m.test.enough_data && !m.test.reason.empty()) {
            const std::string label = label_of(m);
            const std::string what = label.substr(label.find_first_not_of(' '));
            out << wrap(d.by_hosts ? m.test.reason : "not enough data for " + what + ": " + m.test.reason, "  - ", 4);
            break;
        }
    for (const std::string& n : d.notes)
        out << wrap(n, "  - ", 4);
    return out.str();
}

std::string format_diff_json(const DiffResult& d)
{
    nlohmann::json j;
    j["a"] = d.label_a;
    j["b"] = d.label_b;
    j["alpha"] = d.alpha;
    j["min_effect"] = d.min_effect;
    j["hypotheses"] = d.hypotheses;
    j["samples"] = d.by_hosts ? "hosts" : "runs";
    if (d.by_hosts)
        j["hosts"] = {{"a", d.runs_a}, {"b", d.runs_b}};
    j["runs"] = {{"a", d.runs_a}, {"b", d.runs_b}};
    j["intervals"] = {{"a", d.intervals_a}, {"b", d.intervals_b}};
    j["metadata"] = nlohmann::json::array();
    for (const MetaDifference& m : d.metadata)
        j["metadata"].push_back({{"key", m.key}, {"a", m.a}, {"b", m.b}});
    j["warnings"] = d.warnings;
    j["notes"] = d.notes;
    j["totals"] = nlohmann::json::array();
    for (const MetricDiff& m : d.totals)
        j["totals"].push_back(metric_json(m));
    j["locks"] = nlohmann::json::array();
    for (const LockDiff& l : d.locks) {
        nlohmann::json metrics = nlohmann::json::array();
        for (const MetricDiff& m : l.metrics)
            metrics.push_back(metric_json(m));
        nlohmann::json lock = {
            {"name", l.name}, {"kind", l.kind}, {"mode", l.mode}, {"effect", number(l.effect)}, {"metrics", metrics}};
        if (!l.name_b.empty())
            lock["name_b"] = l.name_b;
        if (!l.kind_b.empty())
            lock["kind_b"] = l.kind_b;
        j["locks"].push_back(std::move(lock));
    }
    j["only_a"] = one_sided_json(d.only_a);
    j["only_b"] = one_sided_json(d.only_b);
    j["stack_shifts"] = stack_shifts_json(d);
    j["stack_paths_compared"] = d.stack_paths_compared;
    j["any_worse"] = d.any_worse();
    j["any_change"] = d.any_change();
    // Metadata and lock names come from the files: invalid UTF-8 is shown
    // as U+FFFD, as in report's JSON, instead of failing the whole diff.
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + '\n';
}

}  // namespace lockscope
