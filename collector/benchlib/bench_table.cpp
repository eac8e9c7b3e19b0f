#include "benchlib/bench_table.h"

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <sstream>

#include "core/format.h"

namespace lockscope::bench_table {

namespace rb = reflock::harness;

Spread spread_of(std::vector<double> values)
{
    Spread s;
    s.values = values;
    if (values.empty())
        return s;
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    s.median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    s.min = values.front();
    s.max = values.back();
    return s;
}

std::vector<Row> summarize(const std::vector<std::vector<rb::RunResult>>& results, size_t locks_per_group)
{
    std::vector<Row> rows;
    if (locks_per_group == 0)
        return rows;
    for (size_t v = 0; v < results.size(); v++) {
        const auto& runs = results[v];
        const auto& base = results[v - v % locks_per_group];
        if (runs.empty())
            continue;
        Row row;
        row.lock = rb::to_string(runs[0].params.lock);
        row.baseline = rb::to_string(base[0].params.lock);
        row.threads = runs[0].params.threads;
        std::vector<double> ops, ratio, fail, sleeps, handoffs, idle;
        for (size_t r = 0; r < runs.size(); r++) {
            const rb::Sample& t = runs[r].total;
            row.has_counters = row.has_counters || t.counters.acquisitions > 0;
            ops.push_back(t.ops_per_s());
            const double b = r < base.size() ? base[r].total.ops_per_s() : 0;
            ratio.push_back(b > 0 ? t.ops_per_s() / b : 0);
            fail.push_back(t.spin_failure_rate());
            const auto per_kop = [&](uint64_t n) { return t.ops ? 1000.0 * double(n) / double(t.ops) : 0; };
            sleeps.push_back(per_kop(t.counters.sleeps));
            handoffs.push_back(per_kop(t.counters.handoffs));
            idle.push_back(t.idle_fraction);
        }
        row.ops_per_s = spread_of(ops);
        row.ratio = spread_of(ratio);
        row.spin_failure_rate = spread_of(fail);
        row.sleeps_per_kop = spread_of(sleeps);
        row.handoffs_per_kop = spread_of(handoffs);
        row.idle = spread_of(idle);
        rows.push_back(std::move(row));
    }
    return rows;
}

namespace {

std::string fixed(double v, int decimals)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

// Three significant digits, enough for sleeps per 1000 ops.
std::string sig3(double v)
{
    return fixed(v, v < 9.995 ? 2 : v < 99.95 ? 1 : 0);
}

std::string percent(double f)
{
    return fixed(f * 100, f < 0.09995 ? 2 : 1);
}

// "median (min–max)", the spread after the value it qualifies.
template <typename F>
std::string cell(const Spread& s, F fmt, const char* unit = "")
{
    if (s.values.size() < 2)
        return fmt(s.median) + unit;
    return fmt(s.median) + unit + " (" + fmt(s.min) + "–" + fmt(s.max) + unit + ")";
}

const char* const kHeader[] = {"lock", "threads", "ops/s", "ratio", "spin-fail", "sleeps/kop", "handoffs/kop", "idle"};

std::vector<std::string> cells(const Row& r, bool first_of_group)
{
    auto ops = [](double v) { return format_count_short(v); };
    const std::string none = "-";
    return {r.lock,
            std::to_string(r.threads),
            cell(r.ops_per_s, ops),
            first_of_group ? std::string("1") : cell(r.ratio, [](double v) { return fixed(v, 2); }),
            r.has_counters ? cell(r.spin_failure_rate, percent, "%") : none,
            r.has_counters ? cell(r.sleeps_per_kop, sig3) : none,
            r.has_counters ? cell(r.handoffs_per_kop, sig3) : none,
            cell(r.idle, percent, "%")};
}

std::string pad(const std::string& s, size_t width, bool right)
{
    const size_t w = display_width(s);
    const std::string fill(w < width ? width - w : 0, ' ');
    return right ? fill + s : s + fill;
}

const char* kLegend =
    "ops/s and every column: median over repeats (min–max). ratio: ops/s over the first\n"
    "lock's ops/s in the same repeat. spin-fail: spin phases that ended queueing / spin\n"
    "phases begun (per spin phase, not per spin-on-owner call). sleeps/kop: futex sleeps\n"
    "per 1000 ops. handoffs/kop: HANDOFF bits set per 1000 ops (a waiter that waited too\n"
    "long reserving the lock; rwsem 5.3-rc-tip+ and the mutex, no other policy hands off).\n"
    "idle: CPU capacity the bench process did not use (wall × CPUs − its CPU time; other\n"
    "processes' work counts as idle, it is not scheduler idle). '-': the lock has no\n"
    "counters.\n";

}  // namespace

std::string format_text(const std::vector<Row>& rows, const std::string& context)
{
    std::vector<std::vector<std::string>> table;
    table.emplace_back(std::begin(kHeader), std::end(kHeader));
    table[0][3] = "vs " + (rows.empty() ? std::string("first") : rows[0].baseline);
    for (size_t i = 0; i < rows.size(); i++)
        table.push_back(cells(rows[i], rows[i].lock == rows[i].baseline));
    std::vector<size_t> width(table[0].size(), 0);
    for (const auto& line : table)
        for (size_t c = 0; c < line.size(); c++)
            width[c] = std::max(width[c], display_width(line[c]));
    std::ostringstream out;
    out << context << "\n\n";
    for (const auto& line : table) {
        for (size_t c = 0; c < line.size(); c++)
            out << (c ? "  " : "") << pad(line[c], width[c], c > 0);
        out << '\n';
    }
    out << '\n' << kLegend;
    return out.str();
}

std::string format_markdown(const std::vector<Row>& rows, const std::string& context)
{
    std::ostringstream out;
    out << "| lock | threads | ops/s | vs " << (rows.empty() ? "first" : rows[0].baseline)
        << " | spin-fail | sleeps/kop | handoffs/kop | idle |\n|---|--:|--:|--:|--:|--:|--:|--:|\n";
    for (const Row& r : rows) {
        const auto line = cells(r, r.lock == r.baseline);
        out << "| `" << line[0] << '`';
        for (size_t c = 1; c < line.size(); c++)
            out << " | " << line[c];
        out << " |\n";
    }
    out << "\n" << context << "\n\n" << kLegend;
    return out.str();
}

namespace {

// The six significant digits the table has always printed: more would be
// noise from a few runs of a few seconds.
double six_digits(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return std::strtod(buf, nullptr);
}

nlohmann::ordered_json spread_json(const Spread& s)
{
    nlohmann::ordered_json values = nlohmann::ordered_json::array();
    for (double v : s.values)
        values.push_back(six_digits(v));
    return {{"median", six_digits(s.median)},
            {"min", six_digits(s.min)},
            {"max", six_digits(s.max)},
            {"values", std::move(values)}};
}

}  // namespace

nlohmann::ordered_json to_json(const std::vector<Row>& rows, const std::string& context)
{
    nlohmann::ordered_json out_rows = nlohmann::ordered_json::array();
    for (const Row& r : rows)
        out_rows.push_back({{"lock", r.lock},
                            {"threads", r.threads},
                            {"baseline", r.baseline},
                            {"has_counters", r.has_counters},
                            {"ops_per_s", spread_json(r.ops_per_s)},
                            {"ratio", spread_json(r.ratio)},
                            {"spin_failure_rate", spread_json(r.spin_failure_rate)},
                            {"sleeps_per_kop", spread_json(r.sleeps_per_kop)},
                            {"handoffs_per_kop", spread_json(r.handoffs_per_kop)},
                            {"idle", spread_json(r.idle)}});
    return {{"params", context}, {"rows", std::move(out_rows)}};
}

}  // namespace lockscope::bench_table
