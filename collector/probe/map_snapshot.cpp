// Reading the maps into a RawSnapshot: the lock rows (with the identity
// each was given), stacks, chains, holders, tasks, cgroups and the per-CPU
// counters, summed over CPUs and scaled for sampled timing.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "core/clock.h"
#include "episode.h"
#include "lockscope_abi.h"
#include "lockscope_bpf.skel.h"
#include "pipeline/sampled_timing.h"
#include "bpfmap/map_read.h"
#include "probe/probe.h"
#include "probe/rwsem_spin.h"

namespace lockscope::probe {
namespace {

LockCounters to_counters(const ls_lock_stats& s)
{
    LockCounters c;
#define LOCKSCOPE_X(name, merge, help) c.name = s.name;
    LS_LOCK_COUNTERS(LOCKSCOPE_X)
#undef LOCKSCOPE_X
    for (int i = 0; i < kOwnerStates; i++)
        c.owner[i] = s.owner[i];
    for (int i = 0; i < kHistBuckets; i++)
        c.hist[i] = s.hist[i];
    return c;
}

}  // namespace

std::vector<std::pair<uint32_t, uint32_t>> Probe::traced_processes()
{
    std::vector<std::pair<uint32_t, uint32_t>> out;
    std::set<uint32_t> exited;
    for_each_entry<uint32_t, uint32_t>(skel_->maps.traced_tgids, 1, [&](uint32_t tgid, const uint32_t* parent) {
        out.emplace_back(tgid, *parent & ~LS_TREE_EXITED);
        if (*parent & LS_TREE_EXITED)
            exited.insert(tgid);
    });
    // A process that exited is forgotten by the kernel one read after it was
    // first seen exited: its teardown (mm, files), after sched_process_exit,
    // is still recorded, and the map holds only the living.
    for (uint32_t tgid : exited_seen_) {
        if (!exited.count(tgid))
            continue;  // a new process of the tree took the pid since
        uint32_t parent = 0;
        if (bpf_map__lookup_elem(skel_->maps.traced_tgids, &tgid, sizeof tgid, &parent, sizeof parent, 0) == 0 &&
            (parent & LS_TREE_EXITED))
            bpf_map__delete_elem(skel_->maps.traced_tgids, &tgid, sizeof tgid, 0);
        exited.erase(tgid);
    }
    exited_seen_ = std::move(exited);
    return out;
}

RawSnapshot Probe::snapshot()
{
    RawSnapshot out;
    out.cpus = uint32_t(sysconf(_SC_NPROCESSORS_ONLN));
    read_cpu_state(out);
    // Tasks before locks: a task publishes its totals after its episodes
    // reached their lock rows, so per-task (and per-cgroup) sums never
    // exceed the lock totals read after them.
    read_tasks(out);
    read_locks(out);
    if (rwsem_spin_)
        rwsem_spin_->merge_into(out);
    read_stacks(out);
    read_edges(out);
    read_holder_tasks(out);
    read_holder_times(out);
    read_lock_cgroups(out);
    std::vector<uint64_t> ids;
    for (const RawTask& t : out.tasks)
        ids.push_back(t.cgroup_id);
    for (const RawLockCgroup& c : out.lock_cgroups)
        ids.push_back(c.cgroup_id);
    out.cgroup_paths = cgroup_names_.resolve(ids);
    return out;
}

void Probe::read_cpu_state(RawSnapshot& out)
{
    const uint32_t zero = 0;
    std::vector<ls_cpu_idle> idle(possible_cpus_);
    std::vector<ls_cpu_state> cpu_states(possible_cpus_);
    out.taken_ns = monotonic_ns();
    if (bpf_map__lookup_elem(skel_->maps.cpu_idle, &zero, sizeof zero, idle.data(), idle.size() * sizeof(ls_cpu_idle),
                             0) == 0) {
        for (const ls_cpu_idle& c : idle) {
            out.idle_ns += c.idle_ns;
            if (c.idle_since && c.idle_since < out.taken_ns)
                out.idle_ns += out.taken_ns - c.idle_since;
        }
    }
    if (bpf_map__lookup_elem(skel_->maps.cpu_states, &zero, sizeof zero, cpu_states.data(),
                             cpu_states.size() * sizeof(ls_cpu_state), 0) == 0) {
        RawCounters& r = out.counters;
        for (const ls_cpu_state& cpu_state : cpu_states) {
            const ls_counters& c = cpu_state.cnt;
            r.begins += c.begins;
            r.ends += c.ends;
#define LOCKSCOPE_X(name, version) r.name += c.name;
            LS_RUN_COUNTS(LOCKSCOPE_X)
#undef LOCKSCOPE_X
#define LOCKSCOPE_X(name, label) r.lost.name += c.lost_##name;
            LS_LOST_CAUSES(LOCKSCOPE_X)
#undef LOCKSCOPE_X
        }
    }
}

// lock_index gives each (lock, kind) its row of lock_stats once; the index is
// read first, so a row added meanwhile is read at the next snapshot, whole.
// While the programs run, a row lags by the episodes still pending on a CPU
// (at most one per CPU, added at that CPU's next event): never counted twice,
// never going back. Once they are detached, those are added here.
void Probe::read_locks(RawSnapshot& out)
{
    std::vector<std::pair<ls_lock_key, uint32_t>> keys;
    for_each_entry<ls_lock_key, uint32_t>(
        skel_->maps.lock_index, 1, [&](const ls_lock_key& key, const uint32_t* row) { keys.emplace_back(key, *row); });
    uint32_t rows = 0;
    for (const auto& [key, row] : keys)
        rows = std::max(rows, row + 1);
    std::vector<ls_lock_stats> stats = read_percpu_rows<ls_lock_stats>(skel_->maps.lock_stats, rows, possible_cpus_);
    if (detached_)
        add_pending(stats, rows);
    for (const auto& [key, row] : keys) {
        RawLock lock;
        lock.address = key.lock;
        lock.flags = key.flags;
        for (uint32_t cpu = 0; cpu < possible_cpus_; cpu++)
            lock.counters.add(to_counters(stats[size_t(row) * possible_cpus_ + cpu]));
        scale_timed(lock.counters, time_period_);
        lock.identity = identity_of(row);
        out.locks.push_back(std::move(lock));
    }
}

// Each CPU's episode that ended but is not in its lock's row yet (lockscope_abi.h,
// ls_pending), added as the BPF side would: only once nothing runs, as a
// pending slot read while programs run could be folded between two reads.
void Probe::add_pending(std::vector<ls_lock_stats>& stats, uint32_t rows)
{
    const uint32_t zero = 0;
    std::vector<ls_cpu_state> cpu_states(possible_cpus_);
    if (bpf_map__lookup_elem(skel_->maps.cpu_states, &zero, sizeof zero, cpu_states.data(),
                             cpu_states.size() * sizeof(ls_cpu_state), 0) != 0)
        return;
    for (uint32_t c = 0; c < possible_cpus_; c++) {
        const ls_pending& p = cpu_states[c].pending;
        if (p.row_plus1 == 0 || p.row_plus1 > rows)
            continue;
        ls_account(&stats[size_t(p.row_plus1 - 1) * possible_cpus_ + c], &p.ep, p.end_ns, p.ret, time_period_ > 1);
    }
}

// Written once, before the row was published in lock_index: read once.
const RawIdentity& Probe::identity_of(uint32_t row)
{
    if (row >= identities_.size())
        identities_.resize(row + 1);
    std::optional<RawIdentity>& cached = identities_[row];
    if (cached)
        return *cached;
    ls_lock_identity id{};
    if (bpf_map__lookup_elem(skel_->maps.lock_identity, &row, sizeof row, &id, sizeof id, 0) != 0)
        return cached.emplace();
    return cached.emplace(raw_identity(id));
}

// Samples and wait of a per-CPU ls_stack_stats value, over the CPUs; the
// wait, of timed episodes only under record --sample, scaled as the locks'.
static std::pair<uint64_t, uint64_t> sum_cpus(const ls_stack_stats* per_cpu, uint32_t cpus, uint32_t time_period)
{
    std::pair<uint64_t, uint64_t> sum{0, 0};
    for (uint32_t cpu = 0; cpu < cpus; cpu++) {
        sum.first += per_cpu[cpu].samples;
        sum.second += per_cpu[cpu].wait_ns;
    }
    sum.second *= time_period;
    return sum;
}

void Probe::read_stacks(RawSnapshot& out)
{
    std::vector<ls_stack_key> fresh;  // stacks not yet delivered, fetched after the walk
    for_each_entry<ls_stack_key, ls_stack_stats>(
        skel_->maps.stack_samples, possible_cpus_, [&](const ls_stack_key& key, const ls_stack_stats* per_cpu) {
            const auto [samples, wait_ns] = sum_cpus(per_cpu, possible_cpus_, time_period_);
            out.stacks.push_back({key.lock, key.flags, key.stack_id, key.role, samples, wait_ns});
            if (!delivered_stacks_.count(key.stack_id))
                fresh.push_back(key);
        });
    for (const ls_stack_key& key : fresh) {
        if (delivered_stacks_.count(key.stack_id))
            continue;
        uint64_t ips[LS_MAX_STACK_DEPTH] = {};
        const uint32_t id = uint32_t(key.stack_id);
        bpf_map* frames_map = id & LS_HOLDER_STACK_BIT ? skel_->maps.holder_stacks : skel_->maps.stacks;
        if (bpf_map__lookup_elem(frames_map, &id, sizeof id, ips, sizeof ips, 0) != 0)
            continue;
        std::vector<uint64_t>& frames = out.stack_ips[key.stack_id];
        for (uint64_t ip : ips) {
            if (ip == 0)
                break;
            frames.push_back(ip);
        }
        delivered_stacks_.insert(key.stack_id);
    }
}

void Probe::read_edges(RawSnapshot& out)
{
    for_each_entry<ls_edge_key, ls_stack_stats>(
        skel_->maps.chain_edges, possible_cpus_, [&](const ls_edge_key& key, const ls_stack_stats* per_cpu) {
            const auto [samples, wait_ns] = sum_cpus(per_cpu, possible_cpus_, time_period_);
            out.edges.push_back({key.lock, key.flags, key.holder_lock, key.holder_flags, samples, wait_ns});
        });
}

void Probe::read_holder_tasks(RawSnapshot& out)
{
    for_each_entry<ls_holder_task_key, ls_holder_task>(
        skel_->maps.holder_tasks, 1, [&](const ls_holder_task_key& key, const ls_holder_task* v) {
            out.holder_tasks.push_back({key.lock,
                                        key.flags,
                                        {.tid = key.tid,
                                         .tgid = v->tgid,
                                         .comm = std::string(v->comm, strnlen(v->comm, sizeof v->comm)),
                                         .samples = v->samples}});
        });
}

// Times of timed episodes only, like the locks' (record --sample), so scaled alike.
void Probe::read_holder_times(RawSnapshot& out)
{
    for_each_entry<ls_holder_time_key, ls_holder_time>(
        skel_->maps.holder_times, 1, [&](const ls_holder_time_key& key, const ls_holder_time* v) {
            HolderTime t;
            t.role = key.role == LS_HOLDER_TIME_PREEMPTOR ? "preemptor" : "holder";
            t.tid = key.tid;
            t.tgid = v->tgid;
            t.comm.assign(v->comm, strnlen(v->comm, sizeof v->comm));
            t.running_ns = v->ns[LS_HOLDER_RUNNING] * time_period_;
            t.runnable_ns = v->ns[LS_HOLDER_RUNNABLE] * time_period_;
            t.asleep_ns = v->ns[LS_HOLDER_ASLEEP] * time_period_;
            t.waits = v->waits;
            out.holder_times.push_back({key.lock, key.flags, std::move(t)});
        });
}

void Probe::read_tasks(RawSnapshot& out)
{
    // A task that is gone leaves the map once read: in a long recording,
    // short-lived tasks would otherwise fill it and the newer ones be lost.
    // (The roll-up keeps the removed tasks' rows for the run.) A task is
    // unhashed before its last switch-out publishes its final totals, so a
    // gone task's row is taken again as it is deleted, atomically: a flush
    // between the first read and the delete would otherwise be lost with
    // the entry. A flush after the delete creates the entry again with the
    // task's whole totals, read at the next interval. A zombie leader still
    // answers tgkill(): it goes once reaped.
    auto fill = [this](RawTask& t, uint32_t pid, const ls_task_stats& v) {
        t.task.pid = pid;
        t.task.tgid = v.tgid;
        t.task.comm.assign(v.comm, strnlen(v.comm, sizeof v.comm));
#define LOCKSCOPE_X(name) t.task.counters.name = v.name;
        LS_TASK_COUNTERS(LOCKSCOPE_X)
#undef LOCKSCOPE_X
        scale_timed(t.task.counters, time_period_);
        t.cgroup_id = v.cgroup;
    };
    std::vector<std::pair<uint32_t, size_t>> gone;
    for_each_entry<uint32_t, ls_task_stats>(skel_->maps.task_stats, 1, [&](uint32_t pid, const ls_task_stats* v) {
        RawTask t;
        fill(t, pid, *v);
        out.tasks.push_back(std::move(t));
        if (syscall(SYS_tgkill, pid_t(v->tgid), pid_t(pid), 0) != 0 && errno == ESRCH)
            gone.emplace_back(pid, out.tasks.size() - 1);
    });
    for (const auto& [pid, index] : gone) {
        ls_task_stats last{};
        if (bpf_map__lookup_and_delete_elem(skel_->maps.task_stats, &pid, sizeof pid, &last, sizeof last, 0) == 0)
            fill(out.tasks[index], pid, last);
    }
}

void Probe::read_lock_cgroups(RawSnapshot& out)
{
    for_each_entry<ls_lock_cgroup_key, uint64_t>(
        skel_->maps.lock_cgroups, 1, [&](const ls_lock_cgroup_key& key, const uint64_t* samples) {
            out.lock_cgroups.push_back({key.lock, key.flags, key.cgroup, *samples});
        });
}

}  // namespace lockscope::probe
