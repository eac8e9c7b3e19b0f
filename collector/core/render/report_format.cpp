// Text and CSV renderings of a Report (report_json.cpp: the JSON).
#include "core/analysis/estimate.h"
#include "core/analysis/lock_vocabulary.h"
#include "core/analysis/report.h"
#include "core/analysis/report_parts.h"
#include "core/analysis/holder_parts.h"
#include "core/analysis/user_code.h"
#include "core/format.h"
#include "core/render/counter_columns.h"
#include "core/render/report_holders.h"
#include "core/render/report_shares.h"
#include "core/render/report_user_locks.h"
#include "core/lock_key.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <sstream>

namespace lockscope {
namespace {

using report_shares::naming_shares;
using report_shares::NamingShares;
using report_shares::report_period;

constexpr size_t kTextWidth = 100;

double ratio(uint64_t part, uint64_t whole)
{
    return whole ? double(part) / double(whole) : 0.0;
}

std::string pad(const std::string& s, size_t width, bool right)
{
    size_t w = display_width(s);
    std::string fill(w < width ? width - w : 0, ' ');
    return right ? fill + s : s + fill;
}

void header_block(std::ostringstream& out, const Report& rep)
{
    auto meta = [&](const char* key) {
        auto it = rep.session.find(key);
        return it == rep.session.end() ? std::string() : it->second;
    };
    auto line = [&](const char* label, const std::string& value) {
        if (!value.empty())
            out << pad(label, 19, false) << value << '\n';
    };
    const ReportTotals& t = rep.totals;
    out << "lockscope report, by " << group_by_name(rep.by) << '\n';
    line("host", meta("host"));
    std::string kernel = meta("kernel_release");
    if (!meta("kernel_version").empty())
        kernel += (kernel.empty() ? "" : " ") + meta("kernel_version");
    line("kernel", truncate_display(kernel, kTextWidth - 19));
    std::string cpus = meta("cpu_model");
    if (!meta("online_cpus").empty())
        cpus += (cpus.empty() ? "" : ", ") + meta("online_cpus") + " online CPUs";
    line("CPUs", truncate_display(cpus, kTextWidth - 19));
    char dur[128];
    std::snprintf(dur, sizeof dur, "%.1f s in %zu run%s, %zu interval%s", t.duration_s, t.runs, t.runs == 1 ? "" : "s",
                  t.intervals, t.intervals == 1 ? "" : "s");
    std::string started = meta("start_time");
    line("duration", dur + (started.empty() ? "" : ", started " + started));
    line("scope", meta("scope"));
    line("filters", meta("filters"));
    line("cgroups", truncate_display(meta("cgroups"), kTextWidth - 19));
    line("command", truncate_display(meta("command"), kTextWidth - 19));
    std::string workload = meta("workload");
    if (!workload.empty()) {
        if (!meta("workload.threads").empty())
            workload += ", " + meta("workload.threads") + " threads";
        if (t.ops_per_s)
            workload += ": " + format_rate(*t.ops_per_s, "ops");
        line("workload", workload);
    } else if (t.ops_per_s) {
        line("throughput", format_rate(*t.ops_per_s, "ops"));
    }
    if (const uint32_t period = report_period(rep); period > 1)
        line("timing", "sampled: one episode in " + std::to_string(period) +
                           " per CPU timed; counts exact, times estimated (± standard error)");
}

void names_block(std::ostringstream& out, const ReportTotals& t)
{
    if (t.by_name_source.empty())
        return;  // recorded before lock identity
    const NamingShares n = naming_shares(t);
    const uint64_t outside = n.data_wait + n.other_wait;
    auto list = [&](bool data) {
        std::vector<std::pair<uint64_t, std::string>> parts;
        for (const auto& [source, share] : t.by_name_source)
            if (named_from_data(source) == data && source != "kernel-data" && share.locks)
                parts.emplace_back(share.wait_ns, source);
        std::sort(parts.rbegin(), parts.rend());
        std::string s;
        for (const auto& [wait, source] : parts)
            s += (s.empty() ? "" : ", ") + source + " " + format_percent(ratio(wait, outside));
        return s;
    };
    const std::string data = list(true), other = list(false);
    out << pad("named from data", 19, false) << format_percent(n.wait_share()) << " of the wait, " << n.data_locks
        << " of " << (n.data_locks + n.other_locks) << " locks" << (data.empty() ? "" : " (" + data + ")") << '\n';
    if (!other.empty())
        out << pad("", 19, false) << "by caller: " << other << '\n';
    if (n.image_locks)
        out << pad("", 19, false) << "not counted: " << n.image_locks << " in kernel image data, unnamed here ("
            << format_duration(double(n.image_wait)) << " of wait)\n";
}

// The wait's four parts, one line each, with whole percentages that add up
// to 100. Off CPU (asleep, runnable) is measured in every episode; the parts
// on CPU only where times were (`timed`). A session that cannot split its
// spin phases (`split` false) shows them whole and says why.
void wait_parts_block(std::ostringstream& out, const LockCounters& c, bool timed, bool split)
{
    auto part = [&](const char* label, uint64_t ns, int percent, const std::string& what) {
        std::string share = percent < 0 ? "" : std::to_string(percent) + "%";
        out << pad(std::string("  ") + label, 19, false) << pad(format_duration(double(ns)), 8, true)
            << pad(share, 6, true) << "  " << what << '\n';
    };
    const std::string runnable =
        "switched out runnable, " + (c.preemptions == 1 ? std::string("once") : format_count(c.preemptions) + " times");
    std::string spinning = "on CPU, in spin phases";
    if (c.spin_offcpu_ns)
        spinning += " (which also held " + format_duration(double(c.spin_offcpu_ns)) + " off CPU)";
    const std::string asleep =
        "switched out blocked, " + format_count(c.sleeps) + (c.sleeps == 1 ? " sleep" : " sleeps");
    if (timed && split) {
        const auto ns = wait_parts(c);
        const std::vector<int> p = whole_percents({ns.begin(), ns.end()});
        const std::string what[kWaitPartCount] = {spinning, "on CPU, after queueing", asleep, runnable};
        for (size_t i = 0; i < kWaitPartCount; ++i)
            part(kWaitParts[i].label, ns[i], p[i], what[i]);
        return;
    }
    if (timed)
        part("spin phases", c.spin_ns, -1, "with their off-CPU time (not split in this session's format)");
    part("asleep", c.asleep_ns(), -1, asleep);
    part("runnable", c.runnable_ns(), -1, runnable);
}

void totals_block(std::ostringstream& out, const Report& rep)
{
    const ReportTotals& t = rep.totals;
    const LockCounters& c = t.counters;
    auto line = [&](const char* label, const std::string& value) { out << pad(label, 19, false) << value << '\n'; };
    out << '\n';
    double per_s = t.duration_s > 0 ? double(c.contentions) / t.duration_s : 0.0;
    line("contentions", format_count(c.contentions) + "  (" + format_rate(per_s) + ")");
    line("spin attempts", format_count(c.spin_attempts));
    line("spin failures", format_count(c.spin_failures) + "  (successes " + format_count(c.spin_successes) +
                              (rep.wait_parts_split && c.spin_yields
                                   ? "; " + format_count(c.spin_yields) + " spin phases gave up the CPU"
                                   : std::string()) +
                              ")");
    line("spin-failure rate", (c.spin_attempts ? format_percent(c.spin_failure_rate()) : std::string("-")) +
                                  "  failures / attempts: spin phases that ended with the task queueing");
    const uint32_t period = report_period(rep);
    if (!times_measured(c, period)) {
        line("wait", "not timed: none of these episodes was timed (record --sample)");
    } else {
        line("wait", format_wait_estimate(c, period) + " in total, max " + format_duration(double(c.max_wait_ns)) +
                         (period > 1 ? " (timed), mean " : ", mean ") +
                         format_duration(c.contentions ? double(c.wait_ns) / double(c.contentions) : 0.0));
    }
    wait_parts_block(out, c, times_measured(c, period), rep.wait_parts_split);
    report_holders::totals_line(out, rep, times_measured(c, period));
    uint64_t owner_total = 0;
    for (uint64_t n : c.owner)
        owner_total += n;
    if (owner_total) {
        std::string s;
        for (int i = 0; i < kOwnerStates; ++i)
            s += (i ? ", " : "") + std::string(owner_state_name(i)) + " " + format_count(c.owner[size_t(i)]);
        line("owner at queueing", s);
    }
    if (c.errors || c.wakeups)
        line("wakeups, errors", format_count(c.wakeups) + ", " + format_count(c.errors));
    line("CPU idle", format_percent(t.idle_fraction));
    line("events", format_count(t.events));
    line("lost", format_count(t.lost) + (t.lost ? "  (results undercount)" : ""));
    // Only the causes that lost something.
    std::string causes;
    for (const LostField& f : kLostFields)
        if (const uint64_t n = t.lost_by_cause.*f.member)
            causes += (causes.empty() ? "" : ", ") + std::string(f.label) + " " + format_count(n);
    if (!causes.empty())
        line("", causes);
    names_block(out, t);
}

// The table's four part cells: whole percentages adding up to 100 ("-" for
// a row with no wait, "n/t" for a row none of whose episodes was timed).
std::vector<std::string> part_cells(const LockCounters& c, bool timed, bool split)
{
    auto cell = [](int percent) { return std::to_string(percent) + "%"; };
    if (!split) {
        const auto share = [&](uint64_t ns) { return format_percent_cell(ratio(ns, c.wait_ns)); };
        return {timed ? share(c.spin_ns) : "n/t", timed ? "?" : "n/t", share(c.asleep_ns()), share(c.runnable_ns())};
    }
    if (!timed)
        return {"n/t", "n/t", "n/t", "n/t"};
    if (!c.wait_ns)
        return {"-", "-", "-", "-"};
    const auto ns = wait_parts(c);
    const std::vector<int> p = whole_percents({ns.begin(), ns.end()});
    return {cell(p[0]), cell(p[1]), cell(p[2]), cell(p[3])};
}

// "anon_pipe_read +1": the lock's top caller and how many others it has.
std::string caller_text(const ReportRow& r)
{
    if (r.caller.empty())
        return "-";
    return r.callers > 1 ? r.caller + " +" + std::to_string(r.callers - 1) : r.caller;
}

// A caller cut to `width`: the function loses its end, the " +N" stays.
std::string cut_caller(const std::string& caller, size_t width)
{
    const size_t others = caller.rfind(" +");
    if (display_width(caller) <= width || others == std::string::npos)
        return truncate_display(caller, width);
    const std::string rest = caller.substr(others);
    const size_t rest_w = display_width(rest);
    return rest_w < width ? truncate_display(caller.substr(0, others), width - rest_w) + rest
                          : truncate_display(caller, width);
}

// `values` cut to at most `width` columns, but never so that two that
// differ print alike: where no cut keeps them apart, as much wider as it
// takes. Each at least `min_width` wide.
std::vector<std::string> fit_apart(const std::vector<std::string>& values, size_t min_width, size_t width)
{
    size_t widest = min_width;
    for (const std::string& v : values)
        widest = std::max(widest, display_width(v));
    for (width = std::max(width, min_width); width < widest; ++width)
        if (std::optional<std::vector<std::string>> cut = cut_apart(values, width))
            return *cut;
    return values;
}

// The table's number columns. Fitted to a terminal, the cells are compact
// ("12.3ms", "45.6k") and the sleeps column is left to --wide and JSON, so
// that names keep room at 100 columns.
struct Column {
    const char* header;
    size_t width;
};

std::vector<Column> number_columns(bool fitted, uint32_t period)
{
    const size_t time = fitted ? 6 : 7;
    // an estimate carries its standard error: "1.23s±0.05"
    std::vector<Column> columns = {{fitted ? "cont" : "contend", fitted ? 6u : 7u},
                                   {"fail%", 5},
                                   {"wait", period > 1 ? 12 : time},
                                   {"mean", time},
                                   {"max", time},
                                   {"spin%", 5},
                                   {"que%", 4},
                                   {"slp%", 4},
                                   {"run%", 4}};
    if (!fitted)
        columns.push_back({"sleeps", 6});
    return columns;
}

std::vector<std::string> number_cells(const Report& rep, const ReportRow& r, uint32_t period, bool fitted)
{
    const LockCounters& c = r.counters;
    // Counts and times as the totals print them, where they fit the cell.
    const uint64_t exact_below = fitted ? 100'000 : 1'000'000;
    const std::string contend =
        c.contentions < exact_below ? format_count(c.contentions) : format_count_short(double(c.contentions));
    const bool timed = times_measured(c, period);
    auto time_cell = [&](double ns) { return timed ? format_duration(ns, fitted) : std::string("n/t"); };
    // A user lock's wait has no spin phase (spin% "-"), and is not split
    // at all in a format that splits the kernel's only.
    std::vector<std::string> parts = r.scope == LockScope::User && !rep.wait_parts_split
                                         ? std::vector<std::string>(4, "-")
                                         : part_cells(c, timed, rep.wait_parts_split);
    if (!r.keeps("spinning_ns"))
        parts[0] = "-";
    std::vector<std::string> cells = {contend, c.spin_attempts ? format_percent_cell(c.spin_failure_rate()) : "-",
                                      period > 1 ? format_wait_estimate(c, period, true) : time_cell(double(c.wait_ns)),
                                      time_cell(c.contentions ? double(c.wait_ns) / double(c.contentions) : 0),
                                      // per-task totals keep no maximum, a split row no measured one
                                      r.keeps("max_wait_ns") ? time_cell(double(c.max_wait_ns)) : std::string("-"),
                                      parts[0], parts[1], parts[2], parts[3]};
    if (!fitted)
        cells.push_back(r.keeps("sleeps") ? format_count_short(double(c.sleeps)) : std::string("-"));
    return cells;
}

// The text columns (name, kind, caller or object) and their widths.
struct TextColumns {
    bool show_kind = false, show_caller = false, instances = false;
    std::string name_header;
    std::vector<std::string> names, kinds, thirds;  // as printed, one per row
    size_t name_w = 0, kind_w = 0, caller_w = 0;
};

TextColumns text_columns(const Report& rep)
{
    TextColumns t;
    // Text columns that would repeat the name, or hold nothing, are dropped.
    t.show_kind = rep.by != GroupBy::Kind && !groups_tasks(rep.by);
    t.show_caller = rep.by == GroupBy::Lock || rep.by == GroupBy::Kind || rep.by == GroupBy::Instance;
    t.instances = rep.by == GroupBy::Instance;
    t.name_header = rep.by == GroupBy::Task     ? "task"
                    : rep.by == GroupBy::Caller ? "caller"
                    : rep.by == GroupBy::Cgroup ? "cgroup"
                                                : "name";
    t.name_w = t.name_header.size();
    t.kind_w = t.show_kind ? 4 : 0;
    t.caller_w = t.show_caller ? 6 : 0;
    for (const auto& r : rep.rows) {
        t.names.push_back(r.name);
        t.name_w = std::max(t.name_w, display_width(r.name));
        if (t.show_kind) {
            t.kinds.push_back(kind_text(r.kind, r.mode));
            t.kind_w = std::max(t.kind_w, display_width(t.kinds.back()));
        }
        t.thirds.push_back(t.instances ? (r.instance.empty() ? "-" : r.instance) : caller_text(r));
        if (t.show_caller)
            t.caller_w = std::max(t.caller_w, display_width(t.thirds.back()));
    }
    return t;
}

// Cuts the kinds, names and callers to share what the number columns leave
// of kTextWidth (wider only where a cut would make two rows look alike).
void fit_text_columns(TextColumns& t, size_t numbers_width, size_t wait_extra)
{
    // Kinds fit 14 columns: "percpu-…/write".
    t.kinds = fit_apart(t.kinds, t.show_kind ? 4 : 0, 14);
    t.kind_w = t.show_kind ? 4 : 0;
    for (const std::string& kind : t.kinds)
        t.kind_w = std::max(t.kind_w, display_width(kind));
    const size_t separators = (t.show_kind ? 2 : 0) + (t.show_caller ? 2 : 0);
    // The estimate's wider wait column does not take the name's room.
    const size_t fixed = numbers_width + separators + t.kind_w;
    const size_t budget = std::max<size_t>(kTextWidth + wait_extra, fixed + 16) - fixed;
    if (t.name_w + t.caller_w > budget) {
        // Share the room; the name (a class such as "pipe_inode_info.mutex")
        // comes first, up to two thirds of it; each gets all it needs if less.
        const size_t name_share = budget * 2 / 3;
        if (!t.show_caller)
            t.name_w = budget;
        else if (t.name_w <= name_share)
            t.caller_w = budget - t.name_w;
        else if (t.caller_w <= budget - name_share)
            t.name_w = budget - t.caller_w;
        else
            t.name_w = name_share, t.caller_w = budget - name_share;
    }
    // Any room a cut that keeps the names apart needs beyond the share is
    // the caller's, as far as it has some to give.
    t.names = fit_apart(t.names, t.name_header.size(), t.name_w);
    for (const std::string& name : t.names)
        if (display_width(name) > t.name_w) {
            const size_t more = display_width(name) - t.name_w;
            t.name_w += more;
            t.caller_w -= std::min(more, t.caller_w > 6 ? t.caller_w - 6 : 0);
        }
    for (std::string& third : t.thirds)
        third = cut_caller(third, t.caller_w);
}

void table_legend(std::ostringstream& out, const Report& rep, uint32_t period, bool fitted)
{
    if (rep.rows_total > rep.rows.size())
        out << "(top " << rep.rows.size() << " of " << rep.rows_total << " rows by " << row_sort_name(rep.sort)
            << ")\n";
    out << wrap_text(std::string("fail% = spin failures / spin attempts; ") + (fitted ? "cont: contentions; " : "") +
                         "the wait's parts, adding up to 100%: spin% spinning on CPU, que% queued on CPU, slp% "
                         "asleep, run% runnable (switched out, not running); mean and max are per contention" +
                         (fitted ? "; sleeps: --wide or --format json." : "."),
                     "", 0, kTextWidth);
    if (!rep.wait_parts_split)
        out << "This session's format keeps no off-CPU time of spin phases: spin% holds it too, que% is\n"
               "unknown (?), and the parts need not add up to 100%.\n";
    if (period > 1)
        out << "wait = estimate ± standard error (record --sample " << period
            << "); n/t: none of the row's episodes was timed; max: the longest timed wait.\n";
}

// Why the table has no rows: a filter that matched nothing says so.
std::string no_rows_text(const Report& rep)
{
    const auto filters = rep.session.find("filters");
    if (filters != rep.session.end() && !filters->second.empty())
        return "no lock matched the filters (" + filters->second + ")";
    return "no contention recorded";
}

}  // namespace

namespace report_table {

void rows(std::ostringstream& out, const Report& rep, const TextOptions& options)
{
    const uint32_t period = report_period(rep);
    const bool fitted = !options.full_names;
    const std::vector<Column> numbers = number_columns(fitted, period);
    size_t numbers_width = 0;
    for (const auto& col : numbers)
        numbers_width += col.width + 1;
    TextColumns t = text_columns(rep);
    if (fitted)
        fit_text_columns(t, numbers_width, numbers[2].width - 6);

    auto row_line = [&](const std::string& name, const std::string& kind, const std::string& caller,
                        const std::vector<std::string>& cells) {
        std::string s = pad(name, t.name_w, false);
        if (t.show_kind)
            s += "  " + pad(kind, t.kind_w, false);
        if (t.show_caller)
            s += "  " + pad(caller, t.caller_w, false);
        for (size_t i = 0; i < numbers.size(); ++i)
            s += " " + pad(cells[i], numbers[i].width, true);
        while (!s.empty() && s.back() == ' ')
            s.pop_back();
        out << s << '\n';
    };
    std::vector<std::string> headers;
    for (const auto& col : numbers)
        headers.push_back(col.header);
    if (!options.rows_only)
        row_line(t.name_header, "kind", t.instances ? "object" : "caller", headers);
    for (size_t i = 0; i < rep.rows.size(); ++i)
        row_line(t.names[i], t.show_kind ? t.kinds[i] : "", t.thirds[i],
                 number_cells(rep, rep.rows[i], period, fitted));
}

}  // namespace report_table

namespace {

// `options.rows_only`: the rows alone, no header line, legend or notes.
void table_block(std::ostringstream& out, const Report& rep, const TextOptions& options)
{
    if (!options.rows_only)
        out << '\n';
    if (rep.rows.empty()) {
        if (!options.rows_only)
            out << no_rows_text(rep) << '\n';
        return;
    }
    report_table::rows(out, rep, options);
    if (options.rows_only)
        return;
    const uint32_t period = report_period(rep);
    const bool fitted = !options.full_names;
    table_legend(out, rep, period, fitted);
    const bool instances = rep.by == GroupBy::Instance;
    if (instances) {
        out << "\nwhere each name comes from:\n";
        for (const auto& r : rep.rows)
            if (!r.detail.empty() || !r.instance.empty())
                out << wrap_text((r.instance.empty() ? "" : r.instance + "; ") + r.detail, "  " + r.name + ": ", 4,
                                 100);
    }
    for (const std::string& note : rep.notes)
        out << wrap_text(note, "note: ", 6, 100);
}

std::string root_text(const ChainRoot& root)
{
    if (root.state == "cycle")
        return "a cycle: back to " + root.lock;
    if (root.state.empty())
        return "no holder of " + root.lock + " sampled";
    if (root.state == "reader-owned")
        return root.lock + " held by readers (no single holder)";
    std::string text = root.lock + "'s holder " + root.state;
    if (!root.frames.empty())
        text += " in " + function_of(root.frames[0]);
    else if (root.state == "running")
        text += " on another CPU";
    if (!root.task.empty())
        text += " (" + root.task + ")";
    return text;
}

// Waiters behind holders that themselves waited, heaviest first.
void chains_block(std::ostringstream& out, const Report& rep)
{
    constexpr size_t kChains = 8;
    out << "\nwait chains: a waiter of the first lock queued behind a holder waiting for the next, and so on\n";
    if (rep.chains.empty()) {
        out << wrap_text(rep.scope == LockScope::User ? "none: no user lock's owner was seen waiting for a kernel lock"
                         : rep.holder_samples         ? "none: no sampled holder was itself waiting for a lock"
                                                      : "none: no holder was sampled (see --holder-period)",
                         "  ", 2, 100);
        return;
    }
    for (size_t i = 0; i < rep.chains.size() && i < kChains; i++) {
        const Chain& c = rep.chains[i];
        std::string path;
        for (const std::string& lock : c.locks)
            path += (path.empty() ? "" : " -> ") + lock;
        if (c.truncated)
            path += " -> ...";
        // A user lock's chain counts its waits (every one is followed), a kernel lock's its samples.
        const char* unit = c.from_user ? (c.samples == 1 ? " wait     " : " waits    ")
                                       : (c.samples == 1 ? " sample   " : " samples  ");
        out << "  " << pad(format_duration(double(c.wait_ns), true), 7, true) << "  " << c.samples << unit << path
            << "\n"
            << "           root: " << root_text(c.root) << "\n";
    }
    if (rep.chains.size() > kChains)
        out << "  (top " << kChains << " of " << rep.chains.size() << " chains by the wait behind them)\n";
}

// "a 99 Hz " (the session's rate, where its metadata says) or "a ".
std::string oncpu_rate(const Report& rep)
{
    auto hz = rep.session.find("running_holder_hz");
    return hz == rep.session.end() ? std::string("a ") : "a " + hz->second + " Hz ";
}

// The first five rows that have something for a block (has), each shown by
// row, with the block's heading before the first; a block without such a
// row prints nothing.
template <typename Has, typename Heading, typename Row>
void first_rows(const Report& rep, Has has, Heading heading, Row row)
{
    constexpr size_t kRows = 5;
    size_t shown = 0;
    for (const ReportRow& r : rep.rows) {
        if (!has(r) || shown == kRows)
            continue;
        if (shown++ == 0)
            heading();
        row(r);
    }
}

// What the holders were running when waiters queued, for the rows that have
// holder samples (by lock or instance).
void holders_block(std::ostringstream& out, const Report& rep)
{
    constexpr size_t kFrames = 4;
    auto has = [](const ReportRow& r) { return !r.holders.empty(); };
    auto heading = [&] {
        auto period = rep.session.find("holder_period");
        std::string text = "the lock holder's kernel stack when a waiter queued, sampled at one queueing in " +
                           (period == rep.session.end() ? std::string("N") : period->second) + " per CPU (" +
                           std::to_string(rep.holder_samples) + (rep.holder_samples == 1 ? " sample" : " samples");
        if (rep.holder_changed)
            text += "; " + std::to_string(rep.holder_changed) + " dropped: the lock changed hands while sampled";
        text += "); shares are of the sampled waiters' wait";
        if (rep.holder_oncpu_samples || rep.holder_oncpu_dropped)
            text +=
                ". on-cpu: running, sampled on its CPU: a holder a waiter found running elsewhere, its stack "
                "taken on its own CPU by " +
                oncpu_rate(rep) + "timer tick while it still held the lock (" +
                std::to_string(rep.holder_oncpu_samples) + (rep.holder_oncpu_samples == 1 ? " sample" : " samples") +
                (rep.holder_oncpu_dropped
                     ? "; " + std::to_string(rep.holder_oncpu_dropped) + " ticks took none: over budget or unreadable"
                     : std::string()) +
                "); no waiter's wait belongs to a tick: their shares are of the on-cpu samples";
        out << "\n" << wrap_text(text, "held while: ", 4, 100);
    };
    first_rows(rep, has, heading, [&](const ReportRow& r) {
        out << "  " << r.name << " " << kind_text(r.kind, r.mode) << "\n";
        for (const HolderShare& h : r.holders) {
            std::string where;
            for (size_t i = 0; i < h.frames.size() && i < kFrames; i++)
                where += (i ? " <- " : "") + function_of(h.frames[i]);
            if (h.frames.empty())
                where = h.state == "running" ? "(running on another CPU: its stack cannot be read)" : "(no frames)";
            out << "  " << pad(format_percent_cell(h.share), 6, true) << "  " << pad(h.state, 9, false) << " " << where
                << "\n";
        }
        if (!r.holder_tasks.empty()) {
            std::string who;
            for (const HolderTaskShare& t : r.holder_tasks)
                who += (who.empty() ? "" : ", ") + t.comm + "[" + std::to_string(t.tid) + "] " +
                       std::to_string(t.samples) + (t.samples == 1 ? " sample" : " samples");
            out << wrap_text(who, "    held by ", 12, 100);
        }
    });
}

// The waiters' own code above the kernel, for the rows whose waiters' user
// stacks were sampled (by lock or instance).
void user_code_block(std::ostringstream& out, const Report& rep)
{
    constexpr size_t kFrames = 4;
    auto has = [](const ReportRow& r) { return !r.user_code.empty(); };
    auto heading = [&] {
        out << "\n"
            << wrap_text(
                   "the waiters' own code above the kernel: user stacks sampled with their kernel "
                   "stacks, for sleeping locks (innermost first; shares are of the sampled wait)",
                   "user code: ", 4, 100);
    };
    first_rows(rep, has, heading, [&](const ReportRow& r) {
        out << "  " << r.name << " " << kind_text(r.kind, r.mode) << " (" << r.user_code_samples
            << (r.user_code_samples == 1 ? " sample" : " samples") << ")\n";
        for (const UserCodeShare& c : r.user_code) {
            std::string where;
            for (size_t i = 0; i < c.frames.size() && i < kFrames; i++)
                where += (i ? " <- " : "") + short_user_frame(c.frames[i]);
            if (c.frames.size() > kFrames)
                where += " <- ...";
            out << wrap_text(where, "  " + pad(format_percent_cell(c.share), 6, true) + "  ", 12, 100);
        }
    });
}

}  // namespace

std::string format_text(const Report& rep, const TextOptions& options)
{
    std::ostringstream out;
    if (options.rows_only) {
        if (rep.scope == LockScope::User)
            report_user_locks::rows_block(out, rep, options);
        else
            table_block(out, rep, options);
        return out.str();
    }
    header_block(out, rep);
    if (rep.scope != LockScope::User) {
        totals_block(out, rep);
        table_block(out, rep, options);
        report_holders::text_block(out, rep, options.full_names);
        holders_block(out, rep);
        user_code_block(out, rep);
        if (rep.show_chains)
            chains_block(out, rep);
    }
    report_user_locks::text_block(out, rep, options);
    if (rep.scope == LockScope::User && !rep.user_locks.tried)
        out << "\nno user-space locks in this session (record -p PID or -- COMMAND records them)\n";
    else if (rep.scope == LockScope::User && rep.show_chains)
        chains_block(out, rep);  // the user locks' chains into the kernel
    return out.str();
}

// The per-lock CSV's computed columns (the JSON adds queued_ns).
constexpr std::initializer_list<DerivedCounter> kReportCsvDerived = {
    kSpinFailureRate, kOffcpuNs, kMeanWaitNs, kSpinningNs, kQueuedOnCpuNs, kAsleepNs, kRunnableNs};

// A cell the JSON has null is empty (report_shares::counter_known); max_wait_bound_ns
// is the upper bound of a maximum not measured (empty for a task's row).
std::string format_csv(const Report& rep)
{
    std::string out = "name,kind,mode,caller," + counter_csv_header(kReportCsvDerived) +
                      ",share_of_wait,name_source,instance,max_wait_bound_ns";
    for (const HolderPart& part : kHolderParts)
        out += std::string(",") + part.key;
    out += '\n';
    const uint32_t period = report_period(rep);
    auto known = [&](const ReportRow& r, const char* field) {
        return report_shares::counter_known(r.counters, period, rep.wait_parts_split, &r, field, rep.holder_split.kept);
    };
    for (const ReportRow& r : rep.rows) {
        out += csv_field(r.name) + ',' + csv_field(r.kind) + ',' + csv_field(r.mode) + ',' + csv_field(r.caller);
        for_each_counter_column(
            r.counters, kReportCsvDerived,
            [&](const char* name, uint64_t v) {
                if (!csv_appended(name))
                    out += ',' + (known(r, name) ? std::to_string(v) : std::string());
            },
            [&](const char* name, double v) { out += ',' + (known(r, name) ? format_decimal(v) : std::string()); });
        out += ',' + format_decimal(r.share_of_wait) + ',' + csv_field(r.name_source) + ',' + csv_field(r.instance) +
               ',' + (known(r, "max_wait_bound_ns") ? std::to_string(r.counters.max_wait_ns) : std::string());
        for (const HolderPart& part : kHolderParts)
            out += ',' + (known(r, part.key) ? std::to_string(part.ns(r.counters)) : std::string());
        out += '\n';
    }
    return out;
}

}  // namespace lockscope
