// Rolling a session up into a Report. Rendering is in report_format.cpp.
#include "core/report.h"

#include "core/error.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>

namespace lockscope {
namespace {

// A row under construction: its counters plus who contributed the wait, so
// the row can name its dominant caller or kind.
struct Group {
    ReportRow row;
    std::map<std::string, uint64_t> wait_by_caller;
    std::map<std::pair<std::string, std::string>, uint64_t> wait_by_kind;  // (kind, mode)
};

uint64_t sat_add(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

template <typename Key>
const Key& dominant(const std::map<Key, uint64_t>& wait)
{
    // Most wait wins; on a tie the first key in order, so output is stable.
    auto best = wait.begin();
    for (auto it = wait.begin(); it != wait.end(); ++it)
        if (it->second > best->second)
            best = it;
    return best->first;
}

std::string kind_label(const std::string& kind, const std::string& mode)
{
    return mode.empty() ? kind : kind + "/" + mode;
}

}  // namespace

GroupBy parse_group_by(const std::string& text)
{
    for (GroupBy by : {GroupBy::Lock, GroupBy::Caller, GroupBy::Task, GroupBy::Kind})
        if (text == group_by_name(by))
            return by;
    throw UsageError("invalid grouping '" + text + "': use one of lock, caller, task, kind");
}

const char* group_by_name(GroupBy by)
{
    switch (by) {
    case GroupBy::Lock: return "lock";
    case GroupBy::Caller: return "caller";
    case GroupBy::Task: return "task";
    case GroupBy::Kind: return "kind";
    }
    return "lock";
}

Report build_report(const Session& session, const ReportOptions& options)
{
    Report rep;
    rep.session = session.meta;
    rep.by = options.by;
    auto wanted = [&](int64_t run) { return !options.run || *options.run == run; };
    if (options.run &&
        std::none_of(session.runs.begin(), session.runs.end(),
                     [&](const RunInfo& r) { return r.id == *options.run; })) {
        std::string ids;
        for (const auto& r : session.runs)
            ids += (ids.empty() ? "" : ", ") + std::to_string(r.id);
        throw UsageError("no run " + std::to_string(*options.run) + " in this session (runs: " +
                         (ids.empty() ? "none" : ids) + ")");
    }

    ReportTotals& t = rep.totals;
    uint64_t idle_ns = 0, cpu_ns = 0, interval_lost = 0;
    double ops = 0, ops_seconds = 0;
    bool have_interval_ops = false;
    for (const IntervalTotals& in : session.intervals) {
        if (!wanted(in.run))
            continue;
        t.counters.add(in.counters);
        t.duration_s += in.seconds();
        idle_ns = sat_add(idle_ns, in.idle_ns);
        cpu_ns = sat_add(cpu_ns, in.cpu_ns);
        t.events = sat_add(t.events, in.events);
        interval_lost = sat_add(interval_lost, in.lost);
        if (in.ops) {
            have_interval_ops = true;
            ops += *in.ops;
            ops_seconds += in.seconds();
        }
        ++t.intervals;
    }
    t.idle_fraction = cpu_ns ? double(idle_ns) / double(cpu_ns) : 0.0;

    double run_ops = 0, run_seconds = 0;
    bool have_run_ops = false;
    for (const RunInfo& r : session.runs) {
        if (!wanted(r.id))
            continue;
        ++t.runs;
        t.lost_by_cause.add(r.lost);
        if (r.ops && r.end_ns > r.start_ns) {
            have_run_ops = true;
            run_ops += *r.ops;
            run_seconds += double(r.end_ns - r.start_ns) / 1e9;
        }
    }
    // Runs count drops by cause, intervals count them as they happen; they
    // should agree, and if they do not, show the larger so nothing hides.
    t.lost = std::max(interval_lost, t.lost_by_cause.total());
    if (have_interval_ops && ops_seconds > 0)
        t.ops_per_s = ops / ops_seconds;
    else if (have_run_ops && run_seconds > 0)
        t.ops_per_s = run_ops / run_seconds;

    // Keyed by what the user groups on; std::map keeps equal-wait rows in a
    // stable order.
    std::map<std::tuple<std::string, std::string, std::string>, Group> groups;
    auto add = [&](std::tuple<std::string, std::string, std::string> key, const LockInfo* lock,
                   const LockCounters& c) -> Group& {
        Group& g = groups[std::move(key)];
        g.row.counters.add(c);
        if (lock) {
            uint64_t& by_caller = g.wait_by_caller[lock->caller];
            by_caller = sat_add(by_caller, c.wait_ns);
            uint64_t& by_kind = g.wait_by_kind[{lock->kind, lock->mode}];
            by_kind = sat_add(by_kind, c.wait_ns);
        }
        return g;
    };

    if (options.by == GroupBy::Task) {
        for (const TaskStats& task : session.tasks) {
            if (!wanted(task.run))
                continue;
            Group& g = add({std::to_string(task.pid), task.comm, {}}, nullptr, task.counters);
            g.row.name = task.comm + "[" + std::to_string(task.pid) + "]";
        }
    } else {
        std::unordered_map<int64_t, const LockInfo*> locks;
        for (const LockInfo& l : session.locks)
            locks.emplace(l.id, &l);
        for (const LockInterval& li : session.lock_intervals) {
            auto it = locks.find(li.lock_id);
            if (!wanted(li.run) || it == locks.end())
                continue;
            const LockInfo& l = *it->second;
            switch (options.by) {
            case GroupBy::Lock: add({l.name, l.kind, l.mode}, &l, li.counters); break;
            case GroupBy::Caller: add({l.caller, {}, {}}, &l, li.counters); break;
            case GroupBy::Kind: add({l.kind, l.mode, {}}, &l, li.counters); break;
            case GroupBy::Task: break;
            }
        }
    }

    for (auto& [key, g] : groups) {
        ReportRow& row = g.row;
        if (options.by != GroupBy::Task) {
            const auto& [kind, mode] = dominant(g.wait_by_kind);
            row.kind = kind;
            row.mode = mode;
            row.caller = dominant(g.wait_by_caller);
        }
        switch (options.by) {
        case GroupBy::Lock: row.name = std::get<0>(key); break;
        case GroupBy::Caller:
            row.name = row.caller.empty() ? "(unknown caller)" : row.caller;
            break;
        case GroupBy::Kind: row.name = kind_label(row.kind, row.mode); break;
        case GroupBy::Task: break;
        }
        if (t.counters.wait_ns)
            row.share_of_wait = double(row.counters.wait_ns) / double(t.counters.wait_ns);
        rep.rows.push_back(std::move(row));
    }
    std::stable_sort(rep.rows.begin(), rep.rows.end(), [](const ReportRow& a, const ReportRow& b) {
        if (a.counters.wait_ns != b.counters.wait_ns)
            return a.counters.wait_ns > b.counters.wait_ns;
        return a.counters.contentions > b.counters.contentions;
    });
    rep.rows_total = rep.rows.size();
    if (options.top && rep.rows.size() > options.top)
        rep.rows.resize(options.top);
    return rep;
}

}  // namespace lockscope
