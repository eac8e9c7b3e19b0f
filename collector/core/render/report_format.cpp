// Text, JSON and CSV renderings of a Report.
#include "core/analysis/estimate.h"
#include "core/analysis/lock_vocabulary.h"
#include "core/analysis/report.h"
#include "core/format.h"
#include "core/render/counter_columns.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <sstream>

namespace lockscope {
namespace {

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

// record --sample N's N (core/analysis/estimate.h); 1 with full timing (and for
// malformed timing keys: the stored totals are read as they are).
uint32_t report_period(const Report& rep)
{
    return timing_period(rep.session).value_or(1);
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

// How much of the wait and of the distinct locks kernel data named; locks in
// the kernel image's own data that nothing can name are counted apart.
struct NamingShares {
    uint64_t data_wait = 0, other_wait = 0, image_wait = 0;
    size_t data_locks = 0, other_locks = 0, image_locks = 0;
    double wait_share() const { return ratio(data_wait, data_wait + other_wait); }
    double lock_share() const
    {
        return data_locks + other_locks ? double(data_locks) / double(data_locks + other_locks) : 0.0;
    }
};

NamingShares naming_shares(const ReportTotals& t)
{
    NamingShares n;
    for (const auto& [source, share] : t.by_name_source) {
        if (named_from_data(source)) {
            n.data_wait += share.wait_ns;
            n.data_locks += share.locks;
        } else if (source == "kernel-data") {
            n.image_wait += share.wait_ns;
            n.image_locks += share.locks;
        } else {
            n.other_wait += share.wait_ns;
            n.other_locks += share.locks;
        }
    }
    return n;
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
    const std::string runnable = "switched out runnable, " + format_count(c.preemptions) + " times";
    std::string spinning = "on CPU, in spin phases";
    if (c.spin_offcpu_ns)
        spinning += " (which also held " + format_duration(double(c.spin_offcpu_ns)) + " off CPU)";
    const std::string asleep = "switched out blocked, " + format_count(c.sleeps) + " sleeps";
    if (timed && split) {
        const std::vector<int> p =
            whole_percents({c.spinning_ns(), c.queued_on_cpu_ns(), c.asleep_ns(), c.runnable_ns()});
        part("spinning", c.spinning_ns(), p[0], spinning);
        part("queued on CPU", c.queued_on_cpu_ns(), p[1], "on CPU, after queueing");
        part("asleep", c.asleep_ns(), p[2], asleep);
        part("runnable", c.runnable_ns(), p[3], runnable);
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

struct Column {
    const char* header;
    size_t width;
    bool right;
};

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
    const std::vector<int> p = whole_percents({c.spinning_ns(), c.queued_on_cpu_ns(), c.asleep_ns(), c.runnable_ns()});
    return {cell(p[0]), cell(p[1]), cell(p[2]), cell(p[3])};
}

// "rwsem/write": the spelling --by kind, diff and the lock filter use.
std::string kind_text(const ReportRow& r)
{
    return r.mode.empty() ? r.kind : r.kind + "/" + r.mode;
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

void table_block(std::ostringstream& out, const Report& rep, const TextOptions& options)
{
    out << '\n';
    if (rep.rows.empty()) {
        out << "no contention recorded\n";
        return;
    }
    // Text columns that would repeat the name, or hold nothing, are dropped.
    bool show_kind = rep.by != GroupBy::Kind && !groups_tasks(rep.by);
    bool show_caller = rep.by == GroupBy::Lock || rep.by == GroupBy::Kind || rep.by == GroupBy::Instance;
    const bool instances = rep.by == GroupBy::Instance;
    auto third_text = [&](const ReportRow& r) {
        return instances ? (r.instance.empty() ? "-" : r.instance) : caller_text(r);
    };

    const uint32_t period = report_period(rep);
    // an estimate carries its standard error: "1.23s±0.05"
    std::vector<Column> numeric = {{"contend", 7, true}, {"fail%", 5, true}, {"wait", period > 1 ? 12u : 7u, true},
                                   {"mean", 7, true},    {"max", 7, true},   {"spin%", 5, true},
                                   {"que%", 4, true},    {"slp%", 4, true},  {"run%", 4, true},
                                   {"sleeps", 6, true}};
    size_t numeric_width = 0;
    for (const auto& col : numeric)
        numeric_width += col.width + 1;
    const std::string name_header = rep.by == GroupBy::Task     ? "task"
                                    : rep.by == GroupBy::Caller ? "caller"
                                    : rep.by == GroupBy::Cgroup ? "cgroup"
                                                                : "name";
    std::vector<std::string> names, kinds;
    size_t name_w = name_header.size(), kind_w = show_kind ? 4 : 0, caller_w = show_caller ? 6 : 0;
    for (const auto& r : rep.rows) {
        names.push_back(r.name);
        name_w = std::max(name_w, display_width(r.name));
        if (show_kind)
            kinds.push_back(kind_text(r));
        if (show_caller)
            caller_w = std::max(caller_w, display_width(third_text(r)));
    }
    // Kinds fit 14 columns: "percpu-…/write".
    const std::vector<std::string> printed_kinds = fit_apart(kinds, kind_w, options.full_names ? SIZE_MAX : 14);
    for (const std::string& kind : printed_kinds)
        kind_w = std::max(kind_w, display_width(kind));
    size_t separators = (show_kind ? 2 : 0) + (show_caller ? 2 : 0);
    // The estimate's wider wait column does not take the name's room.
    const size_t wait_extra = numeric[2].width - 7;
    const size_t fixed = numeric_width + separators + kind_w;
    const size_t budget = std::max<size_t>(kTextWidth + wait_extra, fixed + 16) - fixed;
    if (!options.full_names && name_w + caller_w > budget) {
        // Share the room; the name (a class such as "pipe_inode_info.mutex")
        // comes first, up to two thirds of it; each gets all it needs if less.
        const size_t name_share = budget * 2 / 3;
        if (!show_caller)
            name_w = budget;
        else if (name_w <= name_share)
            caller_w = budget - name_w;
        else if (caller_w <= budget - name_share)
            name_w = budget - caller_w;
        else
            name_w = name_share, caller_w = budget - name_share;
    }
    // Any room a cut that keeps the names apart needs beyond the share is
    // the caller's, as far as it has some to give.
    const std::vector<std::string> printed = fit_apart(names, name_header.size(), name_w);
    for (const std::string& name : printed)
        if (display_width(name) > name_w) {
            const size_t more = display_width(name) - name_w;
            name_w += more;
            caller_w -= std::min(more, caller_w > 6 ? caller_w - 6 : 0);
        }

    auto row_line = [&](const std::string& name, const std::string& kind, const std::string& caller,
                        const std::vector<std::string>& cells) {
        std::string s = pad(name, name_w, false);
        if (show_kind)
            s += "  " + pad(kind, kind_w, false);
        if (show_caller)
            s += "  " + pad(cut_caller(caller, caller_w), caller_w, false);
        for (size_t i = 0; i < numeric.size(); ++i)
            s += " " + pad(cells[i], numeric[i].width, true);
        while (!s.empty() && s.back() == ' ')
            s.pop_back();
        out << s << '\n';
    };
    std::vector<std::string> headers;
    for (const auto& col : numeric)
        headers.push_back(col.header);
    row_line(name_header, "kind", instances ? "object" : "caller", headers);
    for (size_t i = 0; i < rep.rows.size(); ++i) {
        const ReportRow& r = rep.rows[i];
        const LockCounters& c = r.counters;
        // Counts and times as the totals print them, where they fit the cell.
        const std::string contend =
            c.contentions < 1'000'000 ? format_count(c.contentions) : format_count_short(double(c.contentions));
        const bool timed = times_measured(c, period);
        auto time_cell = [&](double ns) { return timed ? format_duration(ns) : std::string("n/t"); };
        const std::vector<std::string> parts = part_cells(c, timed, rep.wait_parts_split);
        row_line(printed[i], show_kind ? printed_kinds[i] : "", third_text(r),
                 {contend, c.spin_attempts ? format_percent_cell(c.spin_failure_rate()) : "-",
                  period > 1 ? format_wait_estimate(c, period, true) : time_cell(double(c.wait_ns)),
                  time_cell(c.contentions ? double(c.wait_ns) / double(c.contentions) : 0),
                  // per-task totals keep no maximum
                  groups_tasks(rep.by) ? std::string("-") : time_cell(double(c.max_wait_ns)), parts[0], parts[1],
                  parts[2], parts[3], format_count_short(double(c.sleeps))});
    }
    if (rep.rows_total > rep.rows.size())
        out << "(top " << rep.rows.size() << " of " << rep.rows_total << " rows by wait)\n";
    out << "fail% = spin failures / spin attempts; the wait's parts, adding up to 100%: spin% spinning on\n"
           "CPU, que% queued on CPU, slp% asleep, run% runnable (switched out, not running); mean and max\n"
           "are per contention.\n";
    if (!rep.wait_parts_split)
        out << "This session's format keeps no off-CPU time of spin phases: spin% holds it too, que% is\n"
               "unknown (?), and the parts need not add up to 100%.\n";
    if (period > 1)
        out << "wait = estimate ± standard error (record --sample " << period
            << "); n/t: none of the row's episodes was timed; max: the longest timed wait.\n";
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

// "func" of "func+0x1a"
std::string function_of(const std::string& frame)
{
    return frame.substr(0, frame.find('+'));
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
        out << wrap_text(rep.holder_samples ? "none: no sampled holder was itself waiting for a lock"
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
        out << "  " << pad(format_duration(double(c.wait_ns), true), 7, true) << "  " << c.samples
            << (c.samples == 1 ? " sample   " : " samples  ") << path << "\n"
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

// What the holders were running when waiters queued, for the rows that have
// holder samples (by lock or instance).
void holders_block(std::ostringstream& out, const Report& rep)
{
    constexpr size_t kRows = 5, kFrames = 4;
    size_t shown = 0;
    for (const ReportRow& r : rep.rows) {
        if (r.holders.empty() || shown == kRows)
            continue;
        if (shown++ == 0) {
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
                    std::to_string(rep.holder_oncpu_samples) +
                    (rep.holder_oncpu_samples == 1 ? " sample" : " samples") +
                    (rep.holder_oncpu_dropped ? "; " + std::to_string(rep.holder_oncpu_dropped) +
                                                    " ticks took none: over budget or unreadable"
                                              : std::string()) +
                    "); no waiter's wait belongs to a tick: their shares are of the on-cpu samples";
            out << "\n" << wrap_text(text, "held while: ", 4, 100);
        }
        out << "  " << r.name << " " << kind_text(r) << "\n";
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
    }
}

constexpr std::initializer_list<DerivedCounter> kJsonDerived = {
    kSpinFailureRate, kQueuedNs, kOffcpuNs, kMeanWaitNs, kSpinningNs, kQueuedOnCpuNs, kAsleepNs, kRunnableNs};

// Under record --sample N, the times (is_timed_field) of a row none of whose
// episodes was timed are unknown: null, never 0. wait_ns_stderr is the
// standard error of the wait_ns estimate (0 with full timing; null where
// unknown: per-task rows keep no variance).
// Where the session cannot split the wait (`split` false), the parts that
// need the off-CPU time of spin phases are null too.
nlohmann::ordered_json counters_json(const LockCounters& c, uint32_t period, bool split)
{
    nlohmann::ordered_json j;
    const bool timed = times_measured(c, period);
    auto put = [&](const char* name, auto value) {
        const std::string_view field = name;
        const bool unsplit = !split && (field == "spinning_ns" || field == "queued_on_cpu_ns" ||
                                        field == "spin_offcpu_ns" || field == "spin_yields");
        if ((timed || !is_timed_field(name)) && !unsplit)
            j[name] = value;
        else
            j[name] = nullptr;
        if (std::string_view(name) == "wait_ns")
            j["wait_ns_stderr"] =
                timed && stderr_known(c, period) ? nlohmann::ordered_json(wait_stderr_ns(c)) : nullptr;
    };
    for_each_counter_column(c, kJsonDerived, put, put);
    nlohmann::ordered_json owner;
    for (int i = 0; i < kOwnerStates; ++i)
        owner[owner_state_name(i)] = c.owner[size_t(i)];
    j["owner_at_queueing"] = owner;
    j["hist"] = timed ? nlohmann::ordered_json(c.hist)
                      : nullptr;  // bucket i: waits of [2^i, 2^(i+1)) ns; the last is open-ended
    return j;
}

std::string csv_field(const std::string& s)
{
    if (s.find_first_of(",\"\r\n") == std::string::npos)
        return s;
    std::string out = "\"";
    for (char ch : s) {
        if (ch == '"')
            out += '"';
        out += ch;
    }
    return out + "\"";
}

}  // namespace

std::string format_text(const Report& rep, const TextOptions& options)
{
    std::ostringstream out;
    header_block(out, rep);
    totals_block(out, rep);
    table_block(out, rep, options);
    holders_block(out, rep);
    if (rep.show_chains)
        chains_block(out, rep);
    return out.str();
}

std::string format_json(const Report& rep)
{
    nlohmann::ordered_json j;
    j["session"] = rep.session;
    j["group_by"] = group_by_name(rep.by);
    j["notes"] = rep.notes;
    const ReportTotals& t = rep.totals;
    const uint32_t period = report_period(rep);
    j["timing"] = {{"mode", period > 1 ? "sampled" : "full"}, {"period", period}};
    nlohmann::ordered_json totals = counters_json(t.counters, period, rep.wait_parts_split);
    totals["idle_fraction"] = t.idle_fraction;
    totals["lost"] = t.lost;
    nlohmann::ordered_json by_cause = nlohmann::ordered_json::object();
    for (const LostField& f : kLostFields)
        by_cause[f.name] = t.lost_by_cause.*f.member;
    totals["lost_by_cause"] = by_cause;
    totals["events"] = t.events;
    totals["duration_s"] = t.duration_s;
    totals["contentions_per_s"] = t.duration_s > 0 ? double(t.counters.contentions) / t.duration_s : 0.0;
    totals["ops_per_s"] = t.ops_per_s ? nlohmann::ordered_json(*t.ops_per_s) : nullptr;
    totals["runs"] = t.runs;
    totals["intervals"] = t.intervals;
    totals["holder_samples"] = rep.holder_samples;
    totals["holder_changed"] = rep.holder_changed;
    totals["holder_oncpu_samples"] = rep.holder_oncpu_samples;
    totals["holder_oncpu_dropped"] = rep.holder_oncpu_dropped;
    if (!t.by_name_source.empty()) {
        nlohmann::ordered_json sources = nlohmann::ordered_json::object();
        for (const auto& [source, share] : t.by_name_source)
            sources[source] = {{"wait_ns", share.wait_ns}, {"locks", share.locks}};
        totals["name_sources"] = sources;
        const NamingShares n = naming_shares(t);
        // Shares of the wait and of the locks named from kernel data, not
        // counting unnamed locks in the kernel image's data (kernel-data).
        totals["named_from_data"] = {{"wait_share", n.wait_share()}, {"lock_share", n.lock_share()}};
    }
    j["totals"] = totals;
    auto locks = nlohmann::ordered_json::array();
    for (const ReportRow& r : rep.rows) {
        nlohmann::ordered_json row;
        row["name"] = r.name;
        row["kind"] = r.kind;
        row["mode"] = r.mode;
        row["caller"] = r.caller;
        row["name_source"] = r.name_source;
        row["instances"] = r.instances;
        if (rep.by == GroupBy::Instance) {
            row["instance"] = r.instance;
            row["detail"] = r.detail;
        }
        row.update(counters_json(r.counters, period, rep.wait_parts_split));
        row["share_of_wait"] = r.share_of_wait;
        if (rep.by == GroupBy::Lock || rep.by == GroupBy::Instance) {
            auto holders = nlohmann::ordered_json::array();
            for (const HolderShare& h : r.holders)
                holders.push_back({{"stack", h.frames},
                                   {"state", h.state},
                                   {"samples", h.samples},
                                   {"wait_ns", h.wait_ns},
                                   {"share", h.share},
                                   {"share_of", h.on_cpu() ? "on_cpu_samples" : "wait"}});
            row["holders"] = std::move(holders);
            row["holder_samples"] = r.holder_samples;
            row["holder_oncpu_samples"] = r.holder_oncpu_samples;
            auto tasks = nlohmann::ordered_json::array();
            for (const HolderTaskShare& ht : r.holder_tasks)
                tasks.push_back({{"tid", ht.tid}, {"tgid", ht.tgid}, {"comm", ht.comm}, {"samples", ht.samples}});
            row["holder_tasks"] = std::move(tasks);
            auto cgroups = nlohmann::ordered_json::array();
            for (const auto& [path, samples] : r.cgroups)
                cgroups.push_back({{"cgroup", path}, {"samples", samples}});
            row["cgroups"] = std::move(cgroups);
        }
        locks.push_back(std::move(row));
    }
    j["locks"] = std::move(locks);
    j["rows_total"] = rep.rows_total;
    auto chains = nlohmann::ordered_json::array();
    for (const Chain& c : rep.chains) {
        nlohmann::ordered_json chain;
        chain["locks"] = c.locks;
        chain["count"] = c.samples;
        chain["wait_ns"] = c.wait_ns;
        chain["cycle"] = c.cycle;
        chain["truncated"] = c.truncated;
        chain["root"] = {
            {"lock", c.root.lock}, {"state", c.root.state}, {"stack", c.root.frames}, {"task", c.root.task}};
        chains.push_back(std::move(chain));
    }
    j["chains"] = std::move(chains);
    j["wait_parts_split"] = rep.wait_parts_split;
    // Per run and per interval, the wait and its parts (all locks).
    auto parts = [&](const LockCounters& c) {
        nlohmann::ordered_json p = counters_json(c, period, rep.wait_parts_split), out;
        for (const char* key :
             {"contentions", "wait_ns", "spinning_ns", "queued_on_cpu_ns", "asleep_ns", "runnable_ns", "spin_yields"})
            out[key] = p[key];
        return out;
    };
    auto runs = nlohmann::ordered_json::array();
    for (const Report::RunTotals& r : rep.runs) {
        nlohmann::ordered_json run = {{"id", r.id}, {"label", r.label}};
        run.update(parts(r.counters));
        runs.push_back(std::move(run));
    }
    j["runs"] = std::move(runs);
    auto intervals = nlohmann::ordered_json::array();
    for (const IntervalTotals& in : rep.intervals) {
        nlohmann::ordered_json interval = {
            {"run", in.run}, {"index", in.index}, {"seconds", in.seconds()}, {"idle_fraction", in.idle_fraction()}};
        interval.update(parts(in.counters));
        intervals.push_back(std::move(interval));
    }
    j["intervals"] = std::move(intervals);
    // Replace rather than throw on invalid UTF-8 from a foreign session.
    return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

// The per-lock CSV's computed columns (the JSON adds queued_ns).
constexpr std::initializer_list<DerivedCounter> kReportCsvDerived = {
    kSpinFailureRate, kOffcpuNs, kMeanWaitNs, kSpinningNs, kQueuedOnCpuNs, kAsleepNs, kRunnableNs};

std::string format_csv(const Report& rep)
{
    std::string out =
        "name,kind,mode,caller," + counter_csv_header(kReportCsvDerived) + ",share_of_wait,name_source,instance\n";
    for (const ReportRow& r : rep.rows) {
        out += csv_field(r.name) + ',' + csv_field(r.kind) + ',' + csv_field(r.mode) + ',' + csv_field(r.caller);
        for_each_counter_column(
            r.counters, kReportCsvDerived, [&](const char*, uint64_t v) { out += ',' + std::to_string(v); },
            [&](const char*, double v) { out += ',' + format_decimal(v); });
        out +=
            ',' + format_decimal(r.share_of_wait) + ',' + csv_field(r.name_source) + ',' + csv_field(r.instance) + '\n';
    }
    return out;
}

}  // namespace lockscope
