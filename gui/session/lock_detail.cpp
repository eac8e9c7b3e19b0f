#include "session/lock_detail.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_set>

namespace lockscope::gui {
namespace {

// Splits n in proportion to shares; integers that add up to n (the
// remainder to the largest share).
std::vector<uint64_t> split(uint64_t n, const std::vector<uint64_t>& shares)
{
    std::vector<uint64_t> out(shares.size(), 0);
    long double sum = 0;
    for (uint64_t v : shares)
        sum += (long double)v;
    uint64_t given = 0;
    size_t largest = 0;
    for (size_t i = 0; i < shares.size(); ++i) {
        out[i] = sum > 0 ? uint64_t((long double)n * (long double)shares[i] / sum) : 0;
        given += out[i];
        if (shares[i] > shares[largest])
            largest = i;
    }
    if (!out.empty())
        out[largest] += n - given;
    return out;
}

std::vector<StackEntry> merge_stacks(const Session& s, const std::unordered_set<int64_t>& ids, const std::string& role)
{
    // The waiters' user stacks above each sampled kernel stack.
    std::map<std::tuple<int64_t, int64_t, std::vector<std::string>>, std::vector<const KernelUserStack*>> above;
    if (role == "waiter")
        for (const KernelUserStack& u : s.kernel_user_stacks)
            if (ids.count(u.lock_id))
                above[{u.run, u.lock_id, u.kernel_frames}].push_back(&u);
    std::map<std::pair<std::vector<std::string>, std::vector<std::string>>, StackEntry> merged;
    for (const StackSample& st : s.stacks) {
        if (!ids.count(st.lock_id))
            continue;
        std::vector<std::string> frames = st.frames;
        if (role == "holder" && st.holder()) {
            // What the holder was doing comes first; a running holder's
            // stack cannot be read from another CPU.
            frames.insert(frames.begin(), st.frames.empty() && st.holder_state() == "running"
                                              ? "(running on another CPU)"
                                              : "(" + st.holder_state() + ")");
        } else if (st.role != role) {
            continue;
        }
        const auto users = above.find({st.run, st.lock_id, st.frames});
        if (users == above.end()) {
            StackEntry& e = merged[{frames, {}}];
            e.frames = frames;
            e.samples += st.samples;
            e.wait_ns += st.wait_ns;
            continue;
        }
        std::vector<uint64_t> by_samples, by_wait;
        for (const KernelUserStack* u : users->second) {
            by_samples.push_back(u->samples);
            by_wait.push_back(u->wait_ns);
        }
        const std::vector<uint64_t> samples = split(st.samples, by_samples), waits = split(st.wait_ns, by_wait);
        for (size_t i = 0; i < users->second.size(); ++i) {
            StackEntry& e = merged[{frames, users->second[i]->frames}];
            e.frames = frames;
            e.user_frames = users->second[i]->frames;
            e.samples += samples[i];
            e.wait_ns += waits[i];
        }
    }
    std::vector<StackEntry> out;
    for (auto& [frames, e] : merged)
        out.push_back(std::move(e));
    std::stable_sort(out.begin(), out.end(), [](const StackEntry& a, const StackEntry& b) {
        return a.samples != b.samples ? a.samples > b.samples : a.wait_ns > b.wait_ns;
    });
    return out;
}

}  // namespace

LockDetail build_lock_detail(const SessionSnapshot& snap, size_t group)
{
    LockDetail d;
    if (group >= snap.groups.size())
        return d;
    const LockGroup& g = snap.groups[group];
    const Session& s = *snap.session;
    d.name = g.row.name + " (" + (g.row.mode.empty() ? g.row.kind : g.row.kind + "/" + g.row.mode) + ")";
    d.counters = g.row.counters;

    const size_t n = snap.timeline.x_s.size();
    d.contentions_per_s = {"contentions/s", std::vector<double>(n)};
    d.spin_failures_per_s = {"spin failures/s", std::vector<double>(n)};
    d.sleeps_per_s = {"sleeps/s", std::vector<double>(n)};
    for (int64_t id : g.lock_ids) {
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
        if (l.name == g.row.name && !number.count(l.address))
            number.emplace(l.address, number.size() + 1);
    std::map<uint64_t, InstanceEntry> objects;
    for (int64_t id : g.lock_ids) {
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
    for (auto& [address, e] : objects)
        d.instances.push_back(std::move(e));
    std::stable_sort(d.instances.begin(), d.instances.end(),
                     [](const InstanceEntry& a, const InstanceEntry& b) { return a.wait_ns > b.wait_ns; });

    std::unordered_set<int64_t> ids(g.lock_ids.begin(), g.lock_ids.end());
    d.waiters = merge_stacks(s, ids, "waiter");
    d.wakers = merge_stacks(s, ids, "waker");
    d.holders = merge_stacks(s, ids, "holder");
    return d;
}

}  // namespace lockscope::gui
