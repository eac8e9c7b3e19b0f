// Rolling a session up into a Report. Rendering is in report_format.cpp.
#include "core/analysis/report.h"

#include "core/analysis/holder_times.h"
#include "core/analysis/report_max.h"
#include "core/analysis/report_split.h"
#include "core/analysis/stack_frames.h"
#include "core/error.h"
#include "core/sorted_values.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <variant>

namespace lockscope {
namespace {

// A row under construction: its counters plus who contributed the wait, so
// the row can name its dominant caller or kind.
struct Group {
    ReportRow row;
    std::map<std::string, uint64_t> wait_by_caller;
    std::map<std::pair<std::string, std::string>, uint64_t> wait_by_kind;  // (kind, mode)
    std::map<std::string, uint64_t> wait_by_source;
    std::set<uint64_t> objects;     // lock addresses rolled in
    std::set<int64_t> lock_ids;     // lock rows rolled in
    std::set<std::string> callers;  // named after, or in sampled waiter stacks
    // The sampled waiter stacks' callers: (wait, samples) of each.
    std::map<std::string, std::pair<uint64_t, uint64_t>> sampled_callers;
    MaxWait max_wait;
};

// What a row groups on: a lock row's key by lock; by the other groupings
// two names: (kind, mode), (class, instance), (caller, ""), (pid, comm) or
// (cgroup, "").
using Names = std::pair<std::string, std::string>;
using GroupKey = std::variant<LockKey, Names>;
// The rows by what the user groups on.
using GroupMap = std::map<GroupKey, Group>;

// Which row each lock row (lock id) was rolled into.
std::map<int64_t, Group*> group_of_lock(GroupMap& groups)
{
    std::map<int64_t, Group*> group_of;
    for (auto& [key, g] : groups)
        for (int64_t id : g.lock_ids)
            group_of[id] = &g;
    return group_of;
}

constexpr size_t kHoldersPerRow = 3;

// Sets each sampled stack's share (of the wait; of the samples where none
// carries wait), keeps the top ones, and returns the samples of all. Holder
// stacks of one share go by their samples; user code keeps its frames' order.
template <typename Share>
uint64_t share_out(std::vector<Share>& list, bool ties_by_samples)
{
    uint64_t wait = 0, samples = 0;
    for (const Share& h : list) {
        wait = sat_add(wait, h.wait_ns);
        samples = sat_add(samples, h.samples);
    }
    for (Share& h : list)
        h.share = wait ? double(h.wait_ns) / double(wait) : double(h.samples) / double(samples);
    std::stable_sort(list.begin(), list.end(), [&](const Share& a, const Share& b) {
        if (a.share != b.share || !ties_by_samples)
            return a.share > b.share;
        return a.samples > b.samples;
    });
    if (list.size() > kHoldersPerRow)
        list.resize(kHoldersPerRow);
    return samples;
}

// What the sampled stacks say about each lock group: its top holder stacks,
// the holders' tasks, and the cgroups of its sampled waiters; and the tasks
// of its holder split (followed, not sampled).
void attach_samples(const Session& session, const std::function<bool(int64_t)>& wanted, GroupMap& groups)
{
    const std::map<int64_t, Group*> group_of = group_of_lock(groups);
    // The group a sampled row counts in; nullptr for a run not wanted or a
    // lock in no group.
    auto group = [&](int64_t run, int64_t lock_id) -> Group* {
        auto g = group_of.find(lock_id);
        return wanted(run) && g != group_of.end() ? g->second : nullptr;
    };
    // A holder's sleep is its lock's, whichever waiters followed it (the
    // programs file it under the first one's mode): it is shown on each row
    // of that lock (name, kind, instance) whose waiters waited behind an
    // asleep holder, and on its own.
    using Lock = std::tuple<std::string, std::string, std::string>;  // name, kind, instance
    std::map<Lock, std::vector<Group*>> asleep_behind;
    for (auto& [key, g] : groups)
        if (g.row.counters.holder_asleep_ns)
            asleep_behind[{g.row.name, g.row.kind, g.row.instance}].push_back(&g);
    auto sleep_rows = [&asleep_behind](Group* g) {
        std::vector<Group*> rows = asleep_behind[{g->row.name, g->row.kind, g->row.instance}];
        if (std::find(rows.begin(), rows.end(), g) == rows.end())
            rows.push_back(g);
        return rows;
    };
    std::map<Group*, std::map<std::pair<std::string, std::vector<std::string>>, HolderShare>> merged;
    for (const StackSample& st : session.stacks) {
        Group* g = st.holder() ? group(st.run, st.lock_id) : nullptr;
        if (!g)
            continue;
        const std::string state = st.holder_state();
        for (Group* to : state == "asleep" ? sleep_rows(g) : std::vector<Group*>{g}) {
            // A tick lands anywhere in a function: on-CPU stacks merge by
            // function, the first one's offsets shown.
            HolderShare& h = merged[to][{state, state == "on-cpu" ? stack_functions(st.frames) : st.frames}];
            if (h.frames.empty())
                h.frames = st.frames;
            h.state = state;
            h.samples = sat_add(h.samples, st.samples);
            h.wait_ns = sat_add(h.wait_ns, st.wait_ns);
        }
    }
    for (auto& [g, by_stack] : merged) {
        // Three families, each with its own shares and its own top stacks:
        // the queueing samples (of their wait), the on-CPU ticks (of their
        // samples, which carry no wait) and the followed holders' sleeps
        // (of their time asleep, the holder split's).
        std::vector<HolderShare> queued, on_cpu, asleep;
        for (auto& [key, h] : by_stack)
            (h.on_cpu() ? on_cpu : h.asleep() ? asleep : queued).push_back(std::move(h));
        g->row.holder_samples = share_out(queued, true);
        g->row.holder_oncpu_samples = share_out(on_cpu, true);
        for (const HolderShare& h : asleep)
            g->row.holder_sleep_ns = sat_add(g->row.holder_sleep_ns, h.wait_ns);
        share_out(asleep, true);
        g->row.holder_sleeps = std::move(asleep);
        g->row.holders = std::move(queued);
        g->row.holders.insert(g->row.holders.end(), on_cpu.begin(), on_cpu.end());
    }
    std::map<Group*, std::map<std::vector<std::string>, UserCodeShare>> user_code;
    for (const KernelUserStack& u : session.kernel_user_stacks) {
        Group* g = group(u.run, u.lock_id);
        if (!g)
            continue;
        UserCodeShare& c = user_code[g][u.frames];
        c.frames = u.frames;
        c.samples = sat_add(c.samples, u.samples);
        c.wait_ns = sat_add(c.wait_ns, u.wait_ns);
    }
    for (auto& [g, by_frames] : user_code) {
        for (auto& [frames, c] : by_frames)
            g->row.user_code.push_back(std::move(c));
        g->row.user_code_samples = share_out(g->row.user_code, false);
    }
    std::map<Group*, std::map<uint32_t, HolderTaskShare>> tasks;
    for (const HolderTask& h : session.holder_tasks) {
        Group* g = group(h.run, h.lock_id);
        if (!g)
            continue;
        HolderTaskShare& t = tasks[g][h.tid];
        t.tid = h.tid;
        t.tgid = h.tgid;
        t.comm = h.comm;
        t.samples = sat_add(t.samples, h.samples);
    }
    std::map<Group*, std::map<std::string, uint64_t>> cgroups;
    for (const LockCgroup& c : session.lock_cgroups) {
        if (Group* g = group(c.run, c.lock_id)) {
            uint64_t& n = cgroups[g][c.cgroup.empty() ? "(unknown cgroup)" : c.cgroup];
            n = sat_add(n, c.samples);
        }
    }
    for (auto& [g, by_path] : cgroups) {
        g->row.cgroups.assign(by_path.begin(), by_path.end());
        std::stable_sort(g->row.cgroups.begin(), g->row.cgroups.end(),
                         [](const auto& a, const auto& b) { return a.second > b.second; });
    }
    for (auto& [g, by_tid] : tasks) {
        std::vector<HolderTaskShare> list = sorted_values(
            by_tid, [](const HolderTaskShare& a, const HolderTaskShare& b) { return a.samples > b.samples; });
        if (list.size() > kHoldersPerRow)
            list.resize(kHoldersPerRow);
        g->row.holder_tasks = std::move(list);
    }
    for (auto& [key, g] : groups) {
        g.row.holder_times = holder_time_shares(session, wanted, g.lock_ids, "holder", kHoldersPerRow);
        g.row.preemptors = holder_time_shares(session, wanted, g.lock_ids, "preemptor", kHoldersPerRow);
    }
}

// A lock identity names one caller, the first it saw; the waiter stacks
// sampled on the lock show the others, and which of them waited most.
void add_waiter_callers(const Session& session, const std::function<bool(int64_t)>& wanted, GroupMap& groups)
{
    const std::map<int64_t, Group*> group_of = group_of_lock(groups);
    for (const StackSample& st : session.stacks) {
        auto g = group_of.find(st.lock_id);
        if (st.role != "waiter" || !wanted(st.run) || st.samples == 0 || g == group_of.end())
            continue;
        const std::string caller = caller_function(st.frames);
        if (caller.empty())
            continue;
        g->second->callers.insert(caller);
        auto& [wait, samples] = g->second->sampled_callers[caller];
        wait = sat_add(wait, st.wait_ns);
        samples = sat_add(samples, st.samples);
    }
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

// Every grouping by its name, in the order the usage error lists them.
constexpr std::pair<GroupBy, const char*> kGroupByNames[] = {
    {GroupBy::Lock, "lock"}, {GroupBy::Caller, "caller"},     {GroupBy::Task, "task"},
    {GroupBy::Kind, "kind"}, {GroupBy::Instance, "instance"}, {GroupBy::Cgroup, "cgroup"},
};
static_assert(std::size(kGroupByNames) == size_t(GroupBy::Cgroup) + 1, "a grouping without a name");

}  // namespace

GroupBy parse_group_by(const std::string& text)
{
    std::string names;
    for (const auto& [by, name] : kGroupByNames) {
        if (text == name)
            return by;
        names += (names.empty() ? "" : ", ") + std::string(name);
    }
    throw UsageError("invalid grouping '" + text + "': use one of " + names);
}

namespace {

// What a user lock's row (user_lock_rows.h) keeps: what its futex waits
// give, no spin counters, sleeps, preemptions, errors, owner states or cgroups.
bool user_row_keeps(std::string_view field)
{
    static constexpr std::string_view kKept[] = {"contentions", "wait_ns",    "max_wait_ns",  "mean_wait_ns",
                                                 "sleep_ns",    "preempt_ns", "wakeups",      "timed",
                                                 "hist",        "asleep_ns",  "runnable_ns",  "queued_on_cpu_ns",
                                                 "offcpu_ns",   "queued_ns",  "share_of_wait"};
    return std::find(std::begin(kKept), std::end(kKept), field) != std::end(kKept);
}

}  // namespace

bool ReportRow::keeps(std::string_view field) const
{
    if (field == "max_wait_ns")
        return max_wait_known;
    if (scope == LockScope::User)
        return user_row_keeps(field) || (holder_split_kept && field.starts_with("holder_"));
    if (!per_task)
        return true;
    if (field == "hist" || field == "owner_at_queueing" || field == "max_wait_bound_ns")
        return false;
    for (const CounterField& f : kCounterFields)
        if (field == f.name)
            return f.per_task;
    return true;  // computed from counters a task keeps
}

const char* group_by_name(GroupBy by)
{
    for (const auto& [value, name] : kGroupByNames)
        if (value == by)
            return name;
    return "lock";
}

namespace {

using RunFilter = std::function<bool(int64_t)>;

void check_run_exists(const Session& session, const ReportOptions& options)
{
    if (!options.run ||
        std::any_of(session.runs.begin(), session.runs.end(), [&](const RunInfo& r) { return r.id == *options.run; }))
        return;
    std::string ids;
    for (const auto& r : session.runs)
        ids += (ids.empty() ? "" : ", ") + std::to_string(r.id);
    throw UsageError("no run " + std::to_string(*options.run) +
                     " in this session (runs: " + (ids.empty() ? "none" : ids) + ")");
}

// The totals over the wanted runs: counters, time and idle from the
// intervals; losses by cause and throughput from the runs.
ReportTotals session_totals(const Session& session, const RunFilter& wanted)
{
    ReportTotals t;
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
    return t;
}

// The rows being built, keyed by what the user groups on; std::map keeps
// equal-wait rows in a stable order.
class Grouping {
public:
    using Key = GroupMap::key_type;

    // max_measured: whether c's max_wait_ns is a measurement (report_max.h).
    Group& add(Key key, const LockInfo* lock, const LockCounters& c, bool max_measured = true)
    {
        Group& g = groups_[std::move(key)];
        g.row.counters.add(c);
        g.max_wait.add(c.max_wait_ns, max_measured);
        if (lock) {
            uint64_t& by_caller = g.wait_by_caller[lock->caller];
            by_caller = sat_add(by_caller, c.wait_ns);
            uint64_t& by_kind = g.wait_by_kind[{lock->kind, lock->mode}];
            by_kind = sat_add(by_kind, c.wait_ns);
            uint64_t& by_source = g.wait_by_source[lock->name_source];
            by_source = sat_add(by_source, c.wait_ns);
            if (!lock->caller.empty())
                g.callers.insert(lock->caller);
            g.objects.insert(lock->address);
            g.lock_ids.insert(lock->id);
            if (g.row.detail.empty())
                g.row.detail = lock->detail;
            if (g.row.instance.empty())
                g.row.instance = lock->instance;
        }
        return g;
    }

    GroupMap& groups() { return groups_; }

private:
    GroupMap groups_;
};

// --by task and --by cgroup: the tasks' own totals.
void group_tasks(const Session& session, const RunFilter& wanted, GroupBy by, Grouping& grouping, Report& rep)
{
    if (by == GroupBy::Task) {
        for (const TaskStats& task : session.tasks) {
            if (!wanted(task.run))
                continue;
            Group& g = grouping.add(Names{std::to_string(task.pid), task.comm}, nullptr, task.counters);
            g.row.name = task.comm + "[" + std::to_string(task.pid) + "]";
        }
        return;
    }
    LockCounters attributed;
    for (const TaskStats& task : session.tasks) {
        if (!wanted(task.run))
            continue;
        const std::string name = task.cgroup.empty() ? "(cgroup unknown)" : task.cgroup;
        grouping.add(Names{name, {}}, nullptr, task.counters).row.name = name;
        attributed.add(task.counters);
    }
    // Tasks publish their totals when switched out: what a task did since
    // its last switch-out, or beyond the task map, is in the totals but in
    // no task. Shown as a row, so the rows add up.
    const LockCounters& all = rep.totals.counters;
    if (session.tasks.empty() || (all.contentions <= attributed.contentions && all.wait_ns <= attributed.wait_ns))
        return;
    LockCounters rest;
    for (const CounterField& f : kCounterFields)
        if (f.per_task)
            rest.*f.member = all.*f.member > attributed.*f.member ? all.*f.member - attributed.*f.member : 0;
    grouping.add(Names{"(not attributed)", {}}, nullptr, rest).row.name = "(not attributed)";
    rep.notes.push_back(
        "(not attributed): contention of tasks not switched out since their last "
        "episodes when the recording stopped, or beyond the task map");
}

// --by caller: each lock's totals per run shared among its sampled waiter
// stacks (report_split.h), each share under the stack's caller; a lock
// without a sampled stack under its identity's caller. A lock whose shares
// go to several callers leaves each of them its maximum as a bound only.
void group_callers(const Session& session, const RunFilter& wanted,
                   const std::unordered_map<int64_t, const LockInfo*>& locks, Grouping& grouping, Report& rep)
{
    const std::vector<StackShare> shares = kernel_stack_shares(session, wanted);
    std::map<int64_t, std::set<std::string>> callers_of;
    auto caller_of = [&](const StackShare& s, const LockInfo& l) {
        return s.kernel ? caller_function(s.kernel->frames) : l.caller;
    };
    for (const StackShare& s : shares)
        if (auto l = locks.find(s.lock_id); l != locks.end())
            callers_of[s.lock_id].insert(caller_of(s, *l->second));
    bool split = false;
    for (const StackShare& s : shares) {
        auto l = locks.find(s.lock_id);
        if (l == locks.end())
            continue;
        const std::set<std::string>& callers = callers_of[s.lock_id];
        const bool whole = callers.size() == 1;
        split |= !whole || *callers.begin() != l->second->caller;
        grouping.add(Names{caller_of(s, *l->second), {}}, l->second, s.counters, whole);
    }
    if (split)
        rep.notes.push_back(
            "a lock taken from several callers is split among them by its sampled waiter stacks: counts "
            "in proportion to their samples, times to their sampled wait; those rows are estimates, and "
            "their max is unknown (-) where a lock's waits went to several callers");
}

// --by lock, caller, kind or instance: the lock rows' totals, and the shares
// of the wait by name source.
void group_locks(const Session& session, const RunFilter& wanted, GroupBy by, Grouping& grouping, Report& rep)
{
    std::unordered_map<int64_t, const LockInfo*> locks;
    for (const LockInfo& l : session.locks)
        locks.emplace(l.id, &l);
    // Instances: a lock object (its read and write rows are one) numbered in
    // order of first sight within its class; addresses never shown.
    std::map<std::pair<std::string, uint64_t>, size_t> instance_number;
    std::map<std::string, size_t> instances_of_class;
    for (const LockInfo& l : session.locks)
        if (!instance_number.count({l.name, l.address}))
            instance_number[{l.name, l.address}] = ++instances_of_class[l.name];
    auto instance_label = [&](const LockInfo& l) { return "#" + std::to_string(instance_number[{l.name, l.address}]); };
    std::set<uint64_t> sources_seen;
    if (by == GroupBy::Caller)
        group_callers(session, wanted, locks, grouping, rep);
    const std::vector<bool> measured = measured_maxima(session);
    for (size_t i = 0; i < session.lock_intervals.size(); ++i) {
        const LockInterval& li = session.lock_intervals[i];
        auto it = locks.find(li.lock_id);
        if (!wanted(li.run) || it == locks.end())
            continue;
        const LockInfo& l = *it->second;
        switch (by) {
            case GroupBy::Lock:
                grouping.add(key_of(l), &l, li.counters, measured[i]);
                break;
            case GroupBy::Kind:
                grouping.add(Names{l.kind, l.mode}, &l, li.counters, measured[i]);
                break;
            case GroupBy::Instance:
                grouping.add(Names{l.name, instance_label(l)}, &l, li.counters, measured[i]);
                break;
            case GroupBy::Caller:
            case GroupBy::Task:
            case GroupBy::Cgroup:
                break;
        }
        // Shares of the wait by name source, over the wanted runs.
        if (!l.name_source.empty()) {
            ReportTotals::SourceShare& share = rep.totals.by_name_source[l.name_source];
            share.wait_ns = sat_add(share.wait_ns, li.counters.wait_ns);
            if (sources_seen.insert(l.address).second)
                share.locks++;
        }
    }
}

// Each group's row: its name for the grouping, the dominant kind, caller
// and name source of its wait, its share of the total.
ReportRow finish_row(const Grouping::Key& key, Group& g, GroupBy by, const ReportTotals& t)
{
    ReportRow& row = g.row;
    if (!groups_tasks(by)) {
        const auto& [kind, mode] = dominant(g.wait_by_kind);
        row.kind = kind;
        row.mode = mode;
        row.caller = dominant(g.wait_by_caller);
        if (!g.sampled_callers.empty()) {
            // All of a lock object's wait is its identity's caller's; the
            // sampled stacks split it among the callers that waited.
            std::map<std::string, uint64_t> sampled;
            bool any_wait = false;
            for (const auto& [caller, ws] : g.sampled_callers)
                any_wait |= ws.first > 0;
            for (const auto& [caller, ws] : g.sampled_callers)
                sampled[caller] = any_wait ? ws.first : ws.second;
            row.caller = dominant(sampled);
        }
        row.callers = by == GroupBy::Caller ? 0 : g.callers.size();
        row.name_source = dominant(g.wait_by_source);
        row.instances = g.objects.size();
        row.lock_ids.assign(g.lock_ids.begin(), g.lock_ids.end());
    }
    if (by != GroupBy::Instance) {
        row.detail.clear();
        row.instance.clear();
    }
    switch (by) {
        case GroupBy::Lock:
            row.name = std::get<LockKey>(key).name;
            break;
        case GroupBy::Caller:
            row.caller = std::get<Names>(key).first;
            row.name = row.caller.empty() ? "(unknown caller)" : row.caller;
            break;
        case GroupBy::Kind:
            row.name = kind_text(row.kind, row.mode);
            break;
        case GroupBy::Instance:
            row.name = std::get<Names>(key).first + " " + std::get<Names>(key).second;
            break;
        case GroupBy::Task:
        case GroupBy::Cgroup:
            break;
    }
    // A task keeps only the counters the kernel keeps per task: no maximum.
    row.per_task = groups_tasks(by);
    row.max_wait_known = !row.per_task && g.max_wait.known();
    if (t.counters.wait_ns)
        row.share_of_wait = double(row.counters.wait_ns) / double(t.counters.wait_ns);
    return std::move(row);
}

}  // namespace

namespace {

struct RowSortName {
    RowSort sort;
    const char* name;
};
// perf's keys first: row_sort_name() gives the first of each.
constexpr RowSortName kRowSortNames[] = {
    {RowSort::Wait, "wait_total"},         {RowSort::Contentions, "contended"}, {RowSort::WaitMax, "wait_max"},
    {RowSort::AvgWait, "avg_wait"},        {RowSort::SpinFailures, "spinfail"}, {RowSort::Wait, "wait"},
    {RowSort::Contentions, "contentions"},
};

double sort_value(const ReportRow& r, RowSort sort)
{
    const LockCounters& c = r.counters;
    switch (sort) {
        case RowSort::Wait:
            return double(c.wait_ns);
        case RowSort::Contentions:
            return double(c.contentions);
        case RowSort::WaitMax:
            return double(c.max_wait_ns);
        case RowSort::AvgWait:
            return c.contentions ? double(c.wait_ns) / double(c.contentions) : 0.0;
        case RowSort::SpinFailures:
            return double(c.spin_failures);
    }
    return 0;
}

}  // namespace

RowSort parse_row_sort(const std::string& text)
{
    for (const RowSortName& n : kRowSortNames)
        if (text == n.name)
            return n.sort;
    if (text == "wait_min")
        throw UsageError(
            "sort key 'wait_min': lockscope keeps no shortest wait; use wait_total, contended, "
            "wait_max, avg_wait or spinfail");
    throw UsageError("unknown sort key '" + text + "': use wait_total, contended, wait_max, avg_wait or spinfail");
}

const char* row_sort_name(RowSort sort)
{
    for (const RowSortName& n : kRowSortNames)
        if (n.sort == sort)
            return n.name;
    return "wait_total";
}

void sort_rows(std::vector<ReportRow>& rows, RowSort sort)
{
    if (sort == RowSort::Wait)
        return;
    std::stable_sort(rows.begin(), rows.end(),
                     [&](const ReportRow& a, const ReportRow& b) { return sort_value(a, sort) > sort_value(b, sort); });
}

Report build_report(const Session& session, const ReportOptions& options)
{
    check_run_exists(session, options);
    Report rep;
    rep.session = session.meta;
    rep.by = options.by;
    rep.wait_parts_split = wait_parts_split(session.schema_version);
    const RunFilter wanted = [&](int64_t run) { return !options.run || *options.run == run; };
    rep.holder_split = {holder_split_kept(session.schema_version), holder_times_by_task(session, wanted)};
    rep.totals = session_totals(session, wanted);

    Grouping grouping;
    if (groups_tasks(options.by) && session.tasks.empty() && session.meta.count("filters"))
        rep.notes.push_back(std::string("per-task totals cover every lock, so a filtered report has no rows by ") +
                            group_by_name(options.by));
    if (groups_tasks(options.by))
        group_tasks(session, wanted, options.by, grouping, rep);
    else
        group_locks(session, wanted, options.by, grouping, rep);
    if (options.by == GroupBy::Lock || options.by == GroupBy::Instance)
        attach_samples(session, wanted, grouping.groups());
    if (!groups_tasks(options.by) && options.by != GroupBy::Caller)
        add_waiter_callers(session, wanted, grouping.groups());

    for (const RunInfo& r : session.runs)
        if (wanted(r.id))
            rep.runs.push_back({r.id, r.label, {}});
    for (const IntervalTotals& in : session.intervals) {
        if (!wanted(in.run))
            continue;
        rep.intervals.push_back(in);
        for (Report::RunTotals& r : rep.runs)
            if (r.id == in.run)
                r.counters.add(in.counters);
    }

    rep.chains = session_chains(session, options.run);
    rep.show_chains = options.chains;
    for (const RunInfo& r : session.runs) {
        if (wanted(r.id)) {
            rep.holder_samples = sat_add(rep.holder_samples, r.holder_samples);
            rep.holder_changed = sat_add(rep.holder_changed, r.holder_changed);
            rep.holder_oncpu_samples = sat_add(rep.holder_oncpu_samples, r.holder_oncpu_samples);
            rep.holder_oncpu_dropped = sat_add(rep.holder_oncpu_dropped, r.holder_oncpu_dropped);
        }
    }
    for (auto& [key, g] : grouping.groups())
        rep.rows.push_back(finish_row(key, g, options.by, rep.totals));
    std::stable_sort(rep.rows.begin(), rep.rows.end(), [](const ReportRow& a, const ReportRow& b) {
        if (a.counters.wait_ns != b.counters.wait_ns)
            return a.counters.wait_ns > b.counters.wait_ns;
        return a.counters.contentions > b.counters.contentions;
    });
    rep.sort = options.sort;
    sort_rows(rep.rows, options.sort);
    rep.rows_total = rep.rows.size();
    if (options.top && rep.rows.size() > options.top)
        rep.rows.resize(options.top);
    rep.scope = options.scope;
    if (options.scope != LockScope::Kernel)
        rep.user_locks = user_lock_report(session, options.run, options.top, options.by == GroupBy::Instance);
    if (options.scope == LockScope::User) {
        rep.rows.clear();
        rep.rows_total = 0;
    }
    // A chain belongs to the scope of its waiters' lock: a user lock's chain
    // goes on into kernel locks.
    if (options.scope != LockScope::All)
        std::erase_if(rep.chains, [&](const Chain& c) { return c.from_user != (options.scope == LockScope::User); });
    return rep;
}

}  // namespace lockscope
