#include "benchlib/bench_session.h"

#include <cmath>

#include "core/storage/policy_labels.h"
#include "core/session_vocabulary.h"
#include "reflock/harness/harness_locks.h"

namespace lockscope::bench_session {

namespace rb = reflock::harness;

std::string run_label(const rb::Params& params, unsigned repeat)
{
    return rb::to_string(params.lock) + " t=" + std::to_string(params.threads) + " #" + std::to_string(repeat + 1);
}

LockInfo lock_info(const rb::Params& params)
{
    LockInfo info;
    info.name = rb::to_string(params.lock);
    // Ask the lock itself rather than list kinds here, so a new lock kind
    // in the harness is classified without touching this file.
    const bool shared = rb::make_lock(params.lock)->has_shared();
    info.kind = shared ? kKindUserRwsem : kKindUserMutex;
    info.mode = params.read_percent == 0 ? "write" : params.read_percent == 100 ? "read" : "";
    return info;
}

LockCounters lock_counters(const reflock::Counters& c)
{
    LockCounters out;
    out.contentions = c.contended;  // acquisitions that missed the fast path
    out.spin_attempts = c.spin_attempts;
    out.spin_failures = c.spin_failures;
    out.spin_successes = c.spin_successes;
    out.sleeps = c.sleeps;
    out.sleep_ns = c.sleep_ns;
    // futex wakes issued by releasers: each wakes one queued waiter, the
    // session's "waiters woken by another task".
    out.wakeups = c.wakeups;
    return out;
}

std::string append_handoffs(std::string list, const std::string& label, uint64_t handoffs)
{
    return list + (list.empty() ? "" : "; ") + label + "=" + std::to_string(handoffs);
}

int64_t LockTable::id_for(const rb::Params& params, std::vector<LockInfo>& new_locks)
{
    LockInfo info = lock_info(params);
    // Same name in a different mode (a second sweep at another read share)
    // is a different row, as kernel read and write sides are.
    const std::string key = info.name + '\0' + info.mode;
    auto it = ids_.find(key);
    if (it != ids_.end())
        return it->second;
    info.id = int64_t(ids_.size()) + 1;
    ids_.emplace(key, info.id);
    new_locks.push_back(info);
    return info.id;
}

IntervalBatch interval_batch(const rb::Sample& sample, const rb::Params& params, unsigned cpus, int64_t run,
                             int64_t index, uint64_t end_ns, uint64_t ops_so_far, LockTable& locks)
{
    IntervalBatch batch;
    IntervalTotals& t = batch.totals;
    t.run = run;
    t.index = index;
    const auto wall_ns = uint64_t(std::llround(sample.wall_s * 1e9));
    t.end_ns = end_ns;
    t.start_ns = end_ns > wall_ns ? end_ns - wall_ns : 0;
    t.cpu_ns = wall_ns * cpus;
    // The harness's idle is CPU capacity this process left unused; other
    // processes' load counts as idle here, unlike a kernel recording's.
    t.idle_ns = uint64_t(std::llround(sample.idle_fraction * double(t.cpu_ns)));
    t.counters = lock_counters(sample.counters);
    t.ops = double(sample.ops);

    LockInterval row;
    row.run = run;
    row.index = index;
    row.lock_id = locks.id_for(params, batch.new_locks);
    row.counters = t.counters;  // one lock per run: its row is the run's total
    batch.locks.push_back(row);

    batch.run.id = run;
    batch.run.ops = double(ops_so_far + sample.ops);
    return batch;
}

std::map<std::string, std::string> sweep_meta(const SweepInfo& s)
{
    std::map<std::string, std::string> meta;
    std::string locks;
    for (const std::string& l : s.locks)
        locks += (locks.empty() ? "" : ",") + l;
    meta["recorder"] = "bench";
    meta["workload"] = "bench";
    meta["workload.threads"] = s.threads;
    meta[kScopeKey] = kScopeBenchPrefix + locks;
    meta["interval_ms"] = std::to_string(s.interval_ms);
    meta["repeat"] = std::to_string(s.repeat);
    meta["bench.locks"] = locks;
    meta["bench.threads"] = s.threads;
    meta["bench.critical_ns"] = std::to_string(s.critical_ns);
    meta["bench.outside_ns"] = std::to_string(s.outside_ns);
    meta["bench.read_percent"] = std::to_string(s.read_percent);
    meta["bench.release_window_ns"] = std::to_string(s.release_window_ns);
    meta["bench.duration_ms"] = std::to_string(s.duration_ms);
    meta["bench.interval_ms"] = std::to_string(s.interval_ms);
    meta["bench.repeat"] = std::to_string(s.repeat);
    meta[kPolicyLabelsKey] = kPolicyLabelsVersion;  // labels are current: no renaming on opening
    return meta;
}

}  // namespace lockscope::bench_session
