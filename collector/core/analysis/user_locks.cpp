#include "core/analysis/user_locks.h"

#include "core/error.h"
#include "core/lock_key.h"
#include "core/sorted_values.h"

#include <algorithm>
#include <functional>
#include <sstream>
#include <tuple>

namespace lockscope {
namespace {

template <typename T>
void add_words(std::set<T>& out, const std::string& text)
{
    std::istringstream in(text);
    for (T item; in >> item;)
        out.insert(item);
}

void add_counters(UserLockRun& sum, const UserLockRun& r)
{
    sum.samples += r.samples;
    sum.samples_unwound += r.samples_unwound;
    sum.lost_keys += r.lost_keys;
    sum.lost_samples += r.lost_samples;
    sum.lost_inflight += r.lost_inflight;
    sum.rate_limited += r.rate_limited;
    sum.lost_wakers += r.lost_wakers;
    sum.untimed_waits += r.untimed_waits;
    sum.untimed_estimated_ns += r.untimed_estimated_ns;
}

// A user lock's row: its lock key (a user lock has no mode) in its module;
// by instance (report --by instance), in its process and its futex word
// there, or for a word in shared memory its place alone (0 and "" otherwise).
struct RowId {
    LockKey lock;
    std::string module;
    uint32_t pid = 0;
    uint64_t address = 0;
    std::string shared;

    auto operator<=>(const RowId&) const = default;
};

// The row that a (name, kind, module, pid)'s stacks and wakers belong to:
// its own, or by instance its one word's; none when its words are several
// rows (stacks and wakers are not kept per word).
UserLockReportRow* row_of(std::map<RowId, UserLockReportRow>& rows, const RowId& id)
{
    const auto same = [&](std::map<RowId, UserLockReportRow>::iterator it) {
        return it != rows.end() && it->first.lock == id.lock && it->first.module == id.module &&
               it->first.pid == id.pid;
    };
    const auto first = rows.lower_bound(id);
    return same(first) && !same(std::next(first)) ? &first->second : nullptr;
}

// Wakers and stacks name their lock by (run, process, name, kind): its
// module is that lock row's.
using ModuleOf = std::map<std::tuple<int64_t, uint32_t, std::string, std::string>, std::string>;

ModuleOf modules_of(const Session& session)
{
    ModuleOf module_of;
    for (const UserLockRow& l : session.user_locks)
        module_of[{l.run, l.pid, l.name, l.kind}] = l.module;
    return module_of;
}

// By instance: each user lock row's futex words, (run, pid, name, kind) -> its words.
using InstancesOf =
    std::map<std::tuple<int64_t, uint32_t, std::string, std::string>, std::vector<const UserLockInstance*>>;

InstancesOf instances_of(const Session& session, const std::function<bool(int64_t)>& wanted)
{
    InstancesOf out;
    for (const UserLockInstance& w : session.user_lock_instances)
        if (wanted(w.run))
            out[{w.run, w.pid, w.name, w.kind}].push_back(&w);
    return out;
}

// Each row's wakers, over the runs wanted, by wakes, most first.
void add_wakers(const Session& session, const std::function<bool(int64_t)>& wanted, const ModuleOf& module_of,
                bool by_process, std::map<RowId, UserLockReportRow>& rows)
{
    std::map<RowId, std::map<std::pair<uint32_t, uint32_t>, UserLockReportWaker>> wakers;
    for (const UserLockWaker& w : session.user_lock_wakers) {
        const auto module = module_of.find({w.run, w.pid, w.name, w.kind});
        if (!wanted(w.run) || module == module_of.end())
            continue;
        UserLockReportWaker& into =
            wakers[RowId{{w.name, w.kind, {}}, module->second, by_process ? w.pid : 0}][{w.waker_pid, w.waker_tid}];
        into.tid = w.waker_tid;
        into.pid = w.waker_pid;
        into.comm = w.waker_comm;
        into.wakes += w.wakes;
    }
    for (auto& [id, by_thread] : wakers)
        if (UserLockReportRow* row = row_of(rows, id))
            row->wakers = sorted_values(by_thread, [](const UserLockReportWaker& a, const UserLockReportWaker& b) {
                return a.wakes > b.wakes;
            });
}

// Each row's sampled stacks, over the runs wanted, by sampled wait.
void add_stacks(const Session& session, const std::function<bool(int64_t)>& wanted, const ModuleOf& module_of,
                bool by_process, std::map<RowId, UserLockReportRow>& rows)
{
    std::map<RowId, std::map<std::vector<std::string>, UserLockReportStack>> stacks;
    for (const UserLockStack& s : session.user_lock_stacks) {
        const auto module = module_of.find({s.run, s.pid, s.name, s.kind});
        if (!wanted(s.run) || module == module_of.end())
            continue;
        UserLockReportStack& into =
            stacks[RowId{{s.name, s.kind, {}}, module->second, by_process ? s.pid : 0}][s.frames];
        into.frames = s.frames;
        into.samples += s.samples;
        into.wait_ns += s.wait_ns;
    }
    for (auto& [id, by_frames] : stacks)
        if (UserLockReportRow* row = row_of(rows, id))
            row->stacks = sorted_values(by_frames, [](const UserLockReportStack& a, const UserLockReportStack& b) {
                return std::tie(a.wait_ns, a.samples) > std::tie(b.wait_ns, b.samples);
            });
}

// Each row's followed owners and their preemptors, over the runs wanted, by
// the wait behind them, most first.
void add_holders(const Session& session, const std::function<bool(int64_t)>& wanted, const ModuleOf& module_of,
                 std::map<RowId, UserLockReportRow>& rows)
{
    using Task = std::tuple<std::string, uint32_t, uint32_t>;  // role, tgid, tid
    std::map<RowId, std::map<Task, HolderTime>> holders;
    for (const UserLockHolder& h : session.user_lock_holders) {
        const auto module = module_of.find({h.run, h.pid, h.name, h.kind});
        if (!wanted(h.run) || module == module_of.end())
            continue;
        HolderTime& into = holders[RowId{{h.name, h.kind, {}}, module->second}][{h.role, h.tgid, h.tid}];
        if (into.comm.empty())
            into = HolderTime{.role = h.role, .tid = h.tid, .tgid = h.tgid, .comm = h.comm};
        into.running_ns = sat_add(into.running_ns, h.running_ns);
        into.runnable_ns = sat_add(into.runnable_ns, h.runnable_ns);
        into.asleep_ns = sat_add(into.asleep_ns, h.asleep_ns);
        into.waits = sat_add(into.waits, h.waits);
    }
    for (auto& [id, by_task] : holders) {
        UserLockReportRow* row = row_of(rows, id);
        if (row == nullptr)
            continue;
        for (HolderTime& h :
             sorted_values(by_task, [](const HolderTime&a, const HolderTime&b) { return a.total_ns() > b.total_ns(); }))
            (h.role == "preemptor" ? row->preemptors : row->holders).push_back(std::move(h));
    }
}

}  // namespace

LockScope parse_lock_scope(const std::string& text)
{
    if (text == "all")
        return LockScope::All;
    if (text == "kernel")
        return LockScope::Kernel;
    if (text == "user")
        return LockScope::User;
    throw UsageError("--scope must be all, kernel or user, not '" + text + "'");
}

bool named_by_symbol(const std::string& name_source)
{
    return name_source == "user-symbol" || name_source == "user-caller";
}

const char* lock_scope_name(LockScope scope)
{
    return scope == LockScope::Kernel ? "kernel" : scope == LockScope::User ? "user" : "all";
}

UserLockReport user_lock_report(const Session& session, std::optional<int64_t> run, size_t top, bool by_process)
{
    const auto wanted = [&](int64_t id) { return !run || *run == id; };
    UserLockReport rep;
    rep.by_process = by_process;
    rep.split = session.schema_version == 0 || session.schema_version >= 6;
    rep.holder_split = user_holder_split_kept(session.schema_version) && !by_process;
    for (const UserLockRun& r : session.user_lock_runs) {
        if (!wanted(r.run))
            continue;
        rep.tried = true;
        rep.all_processes = rep.all_processes || r.pids == "all";
        if (r.status != "recorded")
            rep.unavailable.push_back(r.status);
        add_counters(rep.counters, r);
    }
    for (const UserLockLeftOut& l : session.user_lock_left_out) {
        if (!wanted(l.run))
            continue;
        UserLockLeftOut& sum = rep.left_out[l.reason];
        sum.reason = l.reason;
        sum.addresses += l.addresses;
        sum.waits += l.waits;
    }
    std::map<RowId, UserLockReportRow> rows;
    std::map<RowId, uint64_t> caller_wait;
    // Adds `waits` (the row's, or one of its words') to the row `key`, named as `l`.
    const auto add = [&](const RowId& key, const UserLockRow& l, const UserLockWaits& waits) {
        UserLockReportRow& row = rows[key];
        row.name = l.name;
        row.kind = l.kind;
        row.module = l.module;
        row.address = key.address;
        row.shared = key.shared;
        if (row.name_source.empty() || waits.wait_ns >= caller_wait[key]) {
            row.name_source = l.name_source;
            row.caller = l.caller;
            caller_wait[key] = waits.wait_ns;
        }
        row.pids.insert(l.pid);
        row.add_waits(waits);
        add_words(row.owner_tids, l.owner_tids);
        add_words(row.ops, l.ops);
    };
    const InstancesOf instances = by_process ? instances_of(session, wanted) : InstancesOf{};
    for (const UserLockRow& l : session.user_locks) {
        if (!wanted(l.run))
            continue;
        const RowId key{{l.name, l.kind, {}}, l.module, by_process ? l.pid : 0};
        const auto words = instances.find({l.run, l.pid, l.name, l.kind});
        if (words == instances.end()) {
            add(key, l, l);
        } else {
            for (const UserLockInstance* w : words->second)
                add(w->shared.empty() ? RowId{key.lock, key.module, key.pid, w->address, {}}
                                      : RowId{key.lock, key.module, 0, 0, w->shared},
                    l, *w);
        }
        rep.waits += l.waits;
        rep.wait_ns += l.wait_ns;
        if (named_by_symbol(l.name_source))
            rep.symbol_named_wait_ns += l.wait_ns;
    }
    const ModuleOf module_of = modules_of(session);
    add_wakers(session, wanted, module_of, by_process, rows);
    add_stacks(session, wanted, module_of, by_process, rows);
    if (rep.holder_split)
        add_holders(session, wanted, module_of, rows);
    for (auto& [key, row] : rows) {
        row.share_of_wait = rep.wait_ns ? double(row.wait_ns) / double(rep.wait_ns) : 0.0;
        rep.rows.push_back(std::move(row));
    }
    std::stable_sort(rep.rows.begin(), rep.rows.end(), [](const UserLockReportRow& a, const UserLockReportRow& b) {
        return std::tie(a.wait_ns, a.waits) > std::tie(b.wait_ns, b.waits);
    });
    rep.rows_total = rep.rows.size();
    if (top && rep.rows.size() > top)
        rep.rows.resize(top);
    return rep;
}

}  // namespace lockscope
