#include "pipeline/rollup.h"

#include <algorithm>

#include "identity/ladder.h"
#include "lockscope_abi.h"

namespace lockscope {

Rollup::Rollup(KernelSymbols symbols, std::shared_ptr<const identity::KernelData> data)
    : syms_(std::move(symbols)), data_(std::move(data))
{
}

void Rollup::reset_stacks()
{
    stack_ips_.clear();
    stack_frames_.clear();
}

void Rollup::forget_locks()
{
    reset_stacks();
    locks_.clear();
    next_lock_id_ = 1;
}

void Rollup::baseline(const RawSnapshot& snap)
{
    // Whatever a lock counted before the run must not be charged to it; a
    // lock absent from `snap` has counted nothing in this probe yet.
    for (auto& [key, state] : locks_)
        state.last = LockCounters{};
    for (const RawLock& l : snap.locks)
        locks_[{l.address, l.flags}].last = l.counters;
    for (auto& [id, ips] : snap.stack_ips)
        stack_ips_[id] = ips;
    prev_ = snap;
    run_start_counters_ = snap.counters;
    run_start_tasks_.clear();
    run_tasks_.clear();
    for (const RawTask& t : snap.tasks)
        run_start_tasks_[t.task.pid] = t.task.counters;
    run_start_stacks_.clear();
    for (const RawStack& s : snap.stacks)
        run_start_stacks_[{s.address, s.flags, s.stack_id, s.role}] = {s.samples, s.wait_ns};
    run_start_edges_.clear();
    for (const RawEdge& e : snap.edges)
        run_start_edges_[{e.address, e.flags, e.holder_address, e.holder_flags}] = {e.samples, e.wait_ns};
    run_start_holder_tasks_.clear();
    for (const RawHolderTask& h : snap.holder_tasks)
        run_start_holder_tasks_[{h.address, h.flags, h.task.tid}] = h.task.samples;
    run_start_holder_times_.clear();
    for (const RawHolderTime& h : snap.holder_times)
        run_start_holder_times_[{h.address, h.flags, h.time.role, h.time.tid}] = h.time;
    run_start_lock_cgroups_.clear();
    for (const RawLockCgroup& c : snap.lock_cgroups)
        run_start_lock_cgroups_[{c.address, c.flags, c.cgroup_id}] = c.samples;
    run_ = RunInfo{};
}

const std::vector<std::string>& Rollup::frames(int32_t stack_id)
{
    auto it = stack_frames_.find(stack_id);
    if (it != stack_frames_.end())
        return it->second;
    std::vector<std::string>& out = stack_frames_[stack_id];
    // The innermost frames are the BPF program and its trampoline: their
    // addresses change with every load, so the same kernel path would show
    // as a different stack in every run. Start at the traced kernel code.
    bool in_plumbing = true;
    for (uint64_t ip : stack_ips_[stack_id]) {
        const std::string fn = syms_.function_name(ip);
        if (in_plumbing && (fn.empty() || fn.rfind("bpf_", 0) == 0 || fn.rfind("__bpf_", 0) == 0))
            continue;
        in_plumbing = false;
        out.push_back(syms_.frame(ip));
    }
    return out;
}

std::vector<std::string> Rollup::stack_frames(int32_t stack_id)
{
    if (!stack_frames_.count(stack_id) && !stack_ips_.count(stack_id))
        return {};
    return frames(stack_id);
}

std::vector<uint64_t> Rollup::first_stack_of(const RawSnapshot& snap, const KernelLockKey& key) const
{
    const RawStack* best = nullptr;
    for (const RawStack& s : snap.stacks) {
        if (s.address != key.first || s.flags != key.second || s.role != LS_ROLE_WAITER)
            continue;
        if (!best || s.samples > best->samples)
            best = &s;
    }
    if (!best)
        return {};
    auto it = stack_ips_.find(best->stack_id);
    return it == stack_ips_.end() ? std::vector<uint64_t>{} : it->second;
}

// The session's row of a kernel key, 0 while it has none (its first
// episode has not ended) or when a filter left it out. Stacks and edges are
// cumulative: one of a lock without a row yet waits for a later interval.
int64_t Rollup::kept_row(uint64_t address, uint32_t flags) const
{
    auto it = locks_.find({address, flags});
    return it == locks_.end() || it->second.id == 0 || !it->second.kept ? 0 : it->second.id;
}

// A lock seen for the first time: its identity, named once.
LockInfo Rollup::describe(const RawLock& l, int64_t id, const RawSnapshot& snap) const
{
    const LockIdentity n =
        identify_lock(syms_, l.address, l.flags, l.identity, first_stack_of(snap, {l.address, l.flags}), data_.get());
    LockInfo info;
    info.id = id;
    info.name = n.name;
    info.kind = n.kind.kind;
    info.mode = n.kind.mode;
    info.caller = n.caller;
    info.name_source = name_source_name(n.source);
    info.detail = n.detail;
    info.instance = n.instance;
    info.address = l.address;
    info.flags = l.flags;
    return info;
}

void Rollup::add_totals(const RawSnapshot& snap, IntervalBatch& b) const
{
    b.totals.start_ns = prev_.taken_ns;
    b.totals.end_ns = snap.taken_ns;
    b.totals.cpu_ns = (snap.taken_ns - prev_.taken_ns) * std::max<uint32_t>(snap.cpus, 1);
    b.totals.idle_ns = snap.idle_ns >= prev_.idle_ns ? snap.idle_ns - prev_.idle_ns : 0;
    b.totals.idle_ns = std::min(b.totals.idle_ns, b.totals.cpu_ns);
    b.totals.events = (snap.counters.begins + snap.counters.ends) - (prev_.counters.begins + prev_.counters.ends);
    b.totals.lost = snap.counters.lost.total() - prev_.counters.lost.total();
}

void Rollup::add_locks(const RawSnapshot& snap, IntervalBatch& b)
{
    for (const RawLock& l : snap.locks) {
        auto [it, inserted] = locks_.try_emplace({l.address, l.flags});
        LockState& st = it->second;
        if (st.id == 0) {
            st.id = next_lock_id_++;
            LockInfo info = describe(l, st.id, snap);
            st.kept = filter_.matches(info);
            if (st.kept)
                b.new_locks.push_back(std::move(info));
        }
        LockCounters delta = counter_delta(l.counters, st.last);
        st.last = l.counters;
        if (delta.empty() || !st.kept)
            continue;
        b.totals.counters.add(delta);
        b.locks.push_back({b.totals.run, b.totals.index, st.id, delta});
    }
}

void Rollup::add_stacks(const RawSnapshot& snap, IntervalBatch& b)
{
    for (const RawStack& s : snap.stacks) {
        const int64_t lock_id = kept_row(s.address, s.flags);
        if (!lock_id)
            continue;
        auto base = run_start_stacks_.find({s.address, s.flags, s.stack_id, s.role});
        const uint64_t samples = s.samples - (base == run_start_stacks_.end() ? 0 : base->second.first);
        const uint64_t wait = s.wait_ns - (base == run_start_stacks_.end() ? 0 : base->second.second);
        if (samples == 0)
            continue;
        StackSample out;
        out.run = b.totals.run;
        out.lock_id = lock_id;
        out.role = stack_role_name(s.role);
        out.frames = frames(s.stack_id);
        out.samples = samples;
        out.wait_ns = wait;
        b.stacks.push_back(std::move(out));
    }
}

// The sampled holders: which lock each waited for (edges), which tasks they
// were, and which cgroups the waiters were in; and the followed holders' times.
void Rollup::add_holders(const RawSnapshot& snap, IntervalBatch& b) const
{
    const int64_t run = b.totals.run;
    for (const RawEdge& e : snap.edges) {
        const int64_t from = kept_row(e.address, e.flags), to = kept_row(e.holder_address, e.holder_flags);
        if (!from || !to)
            continue;
        auto base = run_start_edges_.find({e.address, e.flags, e.holder_address, e.holder_flags});
        const uint64_t samples = e.samples - (base == run_start_edges_.end() ? 0 : base->second.first);
        const uint64_t wait = e.wait_ns - (base == run_start_edges_.end() ? 0 : base->second.second);
        if (samples)
            b.edges.push_back({run, from, to, samples, wait});
    }

    for (const RawHolderTask& h : snap.holder_tasks) {
        const int64_t lock_id = kept_row(h.address, h.flags);
        auto base = run_start_holder_tasks_.find({h.address, h.flags, h.task.tid});
        const uint64_t samples = h.task.samples - (base == run_start_holder_tasks_.end() ? 0 : base->second);
        if (lock_id && samples)
            b.holder_tasks.push_back({run, lock_id, h.task.tid, h.task.tgid, h.task.comm, samples});
    }

    for (const RawHolderTime& h : snap.holder_times) {
        const int64_t lock_id = kept_row(h.address, h.flags);
        auto base = run_start_holder_times_.find({h.address, h.flags, h.time.role, h.time.tid});
        HolderTime t = h.time;
        if (base != run_start_holder_times_.end()) {
            t.running_ns -= std::min(t.running_ns, base->second.running_ns);
            t.runnable_ns -= std::min(t.runnable_ns, base->second.runnable_ns);
            t.asleep_ns -= std::min(t.asleep_ns, base->second.asleep_ns);
            t.waits -= std::min(t.waits, base->second.waits);
        }
        t.run = run;
        t.lock_id = lock_id;
        if (lock_id && t.waits)
            b.holder_times.push_back(std::move(t));
    }

    for (const RawLockCgroup& c : snap.lock_cgroups) {
        const int64_t lock_id = kept_row(c.address, c.flags);
        auto base = run_start_lock_cgroups_.find({c.address, c.flags, c.cgroup_id});
        const uint64_t samples = c.samples - (base == run_start_lock_cgroups_.end() ? 0 : base->second);
        auto path = snap.cgroup_paths.find(c.cgroup_id);
        if (lock_id && samples)
            b.lock_cgroups.push_back({run, lock_id, path == snap.cgroup_paths.end() ? "" : path->second, samples});
    }
}

void Rollup::add_tasks(const RawSnapshot& snap, IntervalBatch& b)
{
    for (const RawTask& t : snap.tasks) {
        auto base = run_start_tasks_.find(t.task.pid);
        LockCounters c =
            base == run_start_tasks_.end() ? t.task.counters : counter_delta(t.task.counters, base->second);
        if (c.contentions == 0)
            continue;
        TaskStats& task = run_tasks_[t.task.pid] = t.task;
        task.run = b.totals.run;
        task.counters = c;
        if (auto path = snap.cgroup_paths.find(t.cgroup_id); path != snap.cgroup_paths.end())
            task.cgroup = path->second;
    }
    for (const auto& [pid, row] : run_tasks_)
        b.tasks.push_back(row);
}

IntervalBatch Rollup::next(const RawSnapshot& snap, int64_t run, int64_t index)
{
    for (auto& [id, ips] : snap.stack_ips)
        stack_ips_[id] = ips;

    IntervalBatch b;
    b.totals.run = run;
    b.totals.index = index;
    add_totals(snap, b);
    add_locks(snap, b);
    add_stacks(snap, b);
    add_holders(snap, b);
    add_tasks(snap, b);

    run_.id = run;
    run_.lost = snap.counters.lost.since(run_start_counters_.lost);
#define LOCKSCOPE_X(name, version) run_.name = snap.counters.name - run_start_counters_.name;
    LS_RUN_COUNTS(LOCKSCOPE_X)
#undef LOCKSCOPE_X
    b.run = run_;
    prev_ = snap;
    return b;
}

}  // namespace lockscope
