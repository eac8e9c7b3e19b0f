#include "session/lock_detail.h"

#include "core/analysis/user_code.h"
#include "core/lock_key.h"
#include "core/sorted_values.h"

#include <algorithm>
#include <map>
#include <unordered_set>

namespace lockscope::gui {
namespace {

// user_code: the waiters' user stacks above each sampled kernel stack (waiters only).
std::vector<StackEntry> merge_stacks(const Session& s, const std::unordered_set<int64_t>& ids, const std::string& role,
                                     const UserCodeIndex* user_code = nullptr)
{
    std::map<std::pair<std::vector<std::string>, std::vector<std::string>>, StackEntry> merged;
    for (const StackSample& st : s.stacks) {
        if (!ids.count(st.lock_id))
            continue;
        std::vector<std::string> frames = st.frames;
        if (role == "holder" && st.holder_state() == "asleep") {
            continue;  // every sleep, not samples: the Holders tab's summary has them
        } else if (role == "holder" && st.holder()) {
            // What the holder was doing comes first; a running holder's
            // stack cannot be read from another CPU.
            frames.insert(frames.begin(), st.frames.empty() && st.holder_state() == "running"
                                              ? "(running on another CPU)"
                                              : "(" + st.holder_state() + ")");
        } else if (st.role != role) {
            continue;
        }
        const std::vector<UserCodePart> parts =
            user_code ? user_code->parts(st) : std::vector<UserCodePart>{{nullptr, st.samples, st.wait_ns}};
        for (const UserCodePart& part : parts) {
            const std::vector<std::string> user = part.frames ? *part.frames : std::vector<std::string>{};
            StackEntry& e = merged[{frames, user}];
            e.frames = frames;
            e.user_frames = user;
            e.samples += part.samples;
            e.wait_ns += part.wait_ns;
        }
    }
    return sorted_values(merged, [](const StackEntry& a, const StackEntry& b) {
        return a.samples != b.samples ? a.samples > b.samples : a.wait_ns > b.wait_ns;
    });
}

// Each run's waits per second over the run's intervals: what a lock kept
// per run gives on the session's timeline.
// The instances that waited most, first.
bool heavier(const InstanceEntry& a, const InstanceEntry& b)
{
    return a.wait_ns > b.wait_ns;
}

Series per_run_rate(const SessionSnapshot& snap, const std::map<int64_t, uint64_t>& waits_by_run)
{
    const Session& s = *snap.session;
    std::map<int64_t, double> seconds;
    for (const IntervalTotals& in : s.intervals)
        seconds[in.run] += in.seconds();
    Series out{"waits/s (mean of each run)", std::vector<double>(snap.timeline.x_s.size())};
    for (size_t i = 0; i < s.intervals.size() && i < out.y.size(); ++i) {
        auto waits = waits_by_run.find(s.intervals[i].run);
        const double secs = seconds[s.intervals[i].run];
        out.y[i] = waits == waits_by_run.end() || secs <= 0 ? 0.0 : double(waits->second) / secs;
    }
    return out;
}

// The panes of a user-space lock's row, from what the session keeps of it.
LockDetail user_lock_detail(const SessionSnapshot& snap, const ReportRow& row, const UserLockReportRow& u)
{
    const Session& s = *snap.session;
    LockDetail d;
    d.user = true;
    d.name = row.name + " (" + row.kind + ", user space)";
    d.counters = row.counters;
    std::map<int64_t, uint64_t> waits_by_run;
    std::map<uint32_t, InstanceEntry> processes;
    for (const UserLockRow& l : s.user_locks) {
        if (l.name != u.name || l.kind != u.kind || l.module != u.module)
            continue;
        waits_by_run[l.run] += l.waits;
        InstanceEntry& e = processes[l.pid];
        e.label = "process " + std::to_string(l.pid);
        e.detail = l.module.empty() ? l.name_source : l.name_source + " in " + l.module;
        e.contentions += l.waits;
        e.wait_ns += l.wait_ns;
    }
    d.contentions_per_s = per_run_rate(snap, waits_by_run);
    d.instances = sorted_values(processes, heavier);
    for (const UserLockReportStack& st : u.stacks)
        d.waiters.push_back({{}, st.frames, st.samples, st.wait_ns});
    for (const UserLockReportWaker& w : u.wakers)
        d.wakers.push_back({{"thread " + std::to_string(w.tid) + " " + (w.comm.empty() ? "?" : w.comm) + " (process " +
                             std::to_string(w.pid) + ")"},
                            {},
                            w.wakes,
                            0});
    for (uint32_t tid : u.owner_tids)
        d.holders.push_back(
            {{"thread " + std::to_string(tid) + " (an owner waiters saw; its stack is not recorded)"}, {}, 0, 0});
    return d;
}

}  // namespace

LockDetail build_lock_detail(const SessionSnapshot& snap, size_t group)
{
    LockDetail d;
    if (group >= snap.report.rows.size())
        return d;
    const ReportRow& row = snap.report.rows[group];
    if (const UserLockReportRow* u = snap.user_lock(group))
        return user_lock_detail(snap, row, *u);
    const Session& s = *snap.session;
    d.name = row.name + " (" + kind_text(row.kind, row.mode) + ")";
    d.counters = row.counters;

    const size_t n = snap.timeline.x_s.size();
    d.contentions_per_s = {"contentions/s", std::vector<double>(n)};
    d.spin_failures_per_s = {"spin failures/s", std::vector<double>(n)};
    d.sleeps_per_s = {"sleeps/s", std::vector<double>(n)};
    for (int64_t id : row.lock_ids) {
        auto rows = snap.lock_rows.find(id);
        if (rows == snap.lock_rows.end())
            continue;
        for (size_t r : rows->second) {
            const LockInterval& li = s.lock_intervals[r];
            auto slot = snap.slot_of.find(SessionSnapshot::slot_key(li.run, li.index));
            if (slot == snap.slot_of.end())
                continue;
            d.contentions_per_s.y[slot->second] += double(li.counters.contentions);
            d.spin_failures_per_s.y[slot->second] += double(li.counters.spin_failures);
            d.sleeps_per_s.y[slot->second] += double(li.counters.sleeps);
        }
    }
    for (size_t i = 0; i < n; ++i) {
        double secs = s.intervals[i].seconds();
        for (Series* ser : {&d.contentions_per_s, &d.spin_failures_per_s, &d.sleeps_per_s})
            ser->y[i] = secs > 0 ? ser->y[i] / secs : 0.0;
    }

    // The objects: one per address, numbered as `report --by instance` does.
    std::map<uint64_t, size_t> number;
    for (const LockInfo& l : s.locks)
        if (l.name == row.name && !number.count(l.address))
            number.emplace(l.address, number.size() + 1);
    std::map<uint64_t, InstanceEntry> objects;
    for (int64_t id : row.lock_ids) {
        const LockInfo* l = s.lock(id);
        if (!l)
            continue;
        InstanceEntry& e = objects[l->address];
        if (e.label.empty()) {
            e.label = "#" + std::to_string(number.count(l->address) ? number[l->address] : 0) +
                      (l->instance.empty() ? "" : " " + l->instance);
            e.detail = l->detail;
        }
        auto rows = snap.lock_rows.find(id);
        if (rows == snap.lock_rows.end())
            continue;
        for (size_t r : rows->second) {
            e.contentions += s.lock_intervals[r].counters.contentions;
            e.wait_ns += s.lock_intervals[r].counters.wait_ns;
        }
    }
    d.instances = sorted_values(objects, heavier);

    std::unordered_set<int64_t> ids(row.lock_ids.begin(), row.lock_ids.end());
    const UserCodeIndex user_code(s);
    d.waiters = merge_stacks(s, ids, "waiter", &user_code);
    d.wakers = merge_stacks(s, ids, "waker");
    d.holders = merge_stacks(s, ids, "holder");
    return d;
}

}  // namespace lockscope::gui
