#include "cli/bench_table.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "core/format.h"

namespace lockscope::bench_table {

namespace rb = reflock::bench;

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
        std::vector<double> ops, ratio, fail, sleeps, idle;
        for (size_t r = 0; r < runs.size(); r++) {
            const rb::Sample& t = runs[r].total;
            row.has_counters = row.has_counters || t.counters.acquisitions > 0;
            ops.push_back(t.ops_per_s());
            const double b = r < base.size() ? base[r].total.ops_per_s() : 0;
            ratio.push_back(b > 0 ? t.ops_per_s() / b : 0);
            fail.push_back(t.spin_failure_rate());
            sleeps.push_back(t.ops ? 1000.0 * double(t.counters.sleeps) / double(t.ops) : 0);
            idle.push_back(t.idle_fraction);
        }
        row.ops_per_s = spread_of(ops);
        row.ratio = spread_of(ratio);
        row.spin_failure_rate = spread_of(fail);
        row.sleeps_per_kop = spread_of(sleeps);
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

const char* const kHeader[] = {"lock", "threads", "ops/s", "ratio", "spin-fail", "sleeps/kop", "idle"};

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
    "per 1000 ops. idle: CPU capacity the bench process did not use (wall × CPUs − its\n"
    "CPU time; other processes' work counts as idle, it is not scheduler idle). '-': the\n"
    "lock has no counters.\n";

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
        << " | spin-fail | sleeps/kop | idle |\n|---|--:|--:|--:|--:|--:|--:|\n";
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

std::string json_string(const std::string& s)
{
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += char(c);
        } else if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += char(c);
        }
    }
    return out + '"';
}

std::string json_number(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

std::string json_spread(const Spread& s)
{
    std::string out = "{\"median\": " + json_number(s.median) + ", \"min\": " + json_number(s.min) +
                      ", \"max\": " + json_number(s.max) + ", \"values\": [";
    for (size_t i = 0; i < s.values.size(); i++)
        out += (i ? ", " : "") + json_number(s.values[i]);
    return out + "]}";
}

}  // namespace

std::string format_json(const std::vector<Row>& rows, const std::string& context, const std::string& extra_fields)
{
    std::ostringstream out;
    out << "{\n  \"params\": " << json_string(context) << ",\n  \"rows\": [";
    for (size_t i = 0; i < rows.size(); i++) {
        const Row& r = rows[i];
        out << (i ? "," : "") << "\n    {\"lock\": " << json_string(r.lock) << ", \"threads\": " << r.threads
            << ", \"baseline\": " << json_string(r.baseline)
            << ", \"has_counters\": " << (r.has_counters ? "true" : "false")
            << ",\n     \"ops_per_s\": " << json_spread(r.ops_per_s)
            << ",\n     \"ratio\": " << json_spread(r.ratio)
            << ",\n     \"spin_failure_rate\": " << json_spread(r.spin_failure_rate)
            << ",\n     \"sleeps_per_kop\": " << json_spread(r.sleeps_per_kop)
            << ",\n     \"idle\": " << json_spread(r.idle) << "}";
    }
    out << "\n  ]" << extra_fields << "\n}\n";
    return out.str();
}

}  // namespace lockscope::bench_table
