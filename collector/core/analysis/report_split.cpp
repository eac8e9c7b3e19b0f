#include "core/analysis/report_split.h"

#include "core/analysis/user_code.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <tuple>

namespace lockscope {
namespace {

// A time (shared by sampled wait), not a count (shared by samples).
bool is_time(const CounterField& f)
{
    const std::string_view name = f.name;
    return name.ends_with("_ns") || name.ends_with("_us2");
}

bool any(const std::vector<uint64_t>& v)
{
    return std::any_of(v.begin(), v.end(), [](uint64_t x) { return x != 0; });
}

// The lock's parts add up to its wait (a session that splits the wait, and
// no part larger than the wait leaves room for).
bool parts_add_up(const LockCounters& c)
{
    return c.spin_offcpu_ns <= c.spin_ns && sat_add(c.spinning_ns(), c.offcpu_ns()) <= c.wait_ns;
}

}  // namespace

std::vector<LockCounters> split_counters(const LockCounters& c, const std::vector<StackWeight>& stacks)
{
    std::vector<uint64_t> samples, waits;
    for (const StackWeight& s : stacks) {
        samples.push_back(s.samples);
        waits.push_back(s.wait_ns);
    }
    const std::vector<uint64_t>& counts = any(samples) ? samples : waits;
    const std::vector<uint64_t>& times = any(waits) ? waits : samples;
    std::vector<LockCounters> parts(stacks.size());
    auto share = [&](uint64_t total, const std::vector<uint64_t>& weights, auto&& field) {
        const std::vector<uint64_t> got = apportion(total, weights);
        for (size_t i = 0; i < parts.size(); ++i)
            field(parts[i]) = got[i];
    };
    for (const CounterField& f : kCounterFields) {
        const auto member = f.member;
        if (f.merge == Merge::max)
            for (LockCounters& p : parts)
                p.*member = c.*member;
        else
            share(c.*member, is_time(f) ? times : counts, [member](LockCounters& p) -> uint64_t& { return p.*member; });
    }
    for (size_t k = 0; k < c.owner.size(); ++k)
        share(c.owner[k], counts, [k](LockCounters& p) -> uint64_t& { return p.owner[k]; });
    for (size_t k = 0; k < c.hist.size(); ++k)
        share(c.hist[k], counts, [k](LockCounters& p) -> uint64_t& { return p.hist[k]; });
    if (!parts_add_up(c))
        return parts;  // each time on its own, as above: there are no parts to keep whole
    // The wait's parts, each shared on its own; the wait and the spin phases'
    // time are then made of them, so each share's parts add up to its wait.
    const std::vector<uint64_t> spinning = apportion(c.spinning_ns(), times);
    const std::vector<uint64_t> queued = apportion(c.queued_on_cpu_ns(), times);
    const std::vector<uint64_t> spin_offcpu = apportion(c.spin_offcpu_ns, times);
    for (size_t i = 0; i < parts.size(); ++i) {
        LockCounters& p = parts[i];
        p.spin_offcpu_ns = spin_offcpu[i];
        p.spin_ns = spinning[i] + spin_offcpu[i];
        p.wait_ns = spinning[i] + queued[i] + p.sleep_ns + p.preempt_ns;
    }
    return parts;
}

std::vector<StackShare> kernel_stack_shares(const Session& session, const std::function<bool(int64_t)>& wanted)
{
    using Key = std::pair<int64_t, int64_t>;  // run, lock
    std::map<Key, LockCounters> totals;
    for (const LockInterval& li : session.lock_intervals)
        if (wanted(li.run))
            totals[{li.run, li.lock_id}].add(li.counters);
    // Each waiter stack, split among the user stacks sampled above it.
    const UserCodeIndex user_code(session);
    std::map<Key, std::vector<std::pair<StackShare, StackWeight>>> stacks;
    for (const StackSample& s : session.stacks) {
        if (s.role != "waiter" || s.samples == 0 || !totals.count({s.run, s.lock_id}))
            continue;
        for (const UserCodePart& part : user_code.parts(s)) {
            StackShare share;
            share.run = s.run;
            share.lock_id = s.lock_id;
            share.kernel = &s;
            share.user = part.frames;
            stacks[{s.run, s.lock_id}].push_back({share, {part.samples, part.wait_ns}});
        }
    }
    std::vector<StackShare> out;
    for (const auto& [key, c] : totals) {
        const auto found = stacks.find(key);
        if (found == stacks.end()) {
            out.push_back({key.first, key.second, nullptr, nullptr, c});
            continue;
        }
        std::vector<StackWeight> weights;
        for (const auto& [share, weight] : found->second)
            weights.push_back(weight);
        const std::vector<LockCounters> parts = split_counters(c, weights);
        for (size_t i = 0; i < parts.size(); ++i) {
            out.push_back(found->second[i].first);
            out.back().counters = parts[i];
        }
    }
    return out;
}

std::vector<UserStackShare> user_stack_shares(const Session& session, const std::function<bool(int64_t)>& wanted)
{
    using Key = std::tuple<int64_t, uint32_t, std::string, std::string>;  // run, pid, name, kind
    std::map<Key, std::vector<const UserLockStack*>> stacks;
    for (const UserLockStack& s : session.user_lock_stacks)
        if (wanted(s.run))
            stacks[{s.run, s.pid, s.name, s.kind}].push_back(&s);
    std::vector<UserStackShare> out;
    for (const UserLockRow& row : session.user_locks) {
        if (!wanted(row.run))
            continue;
        const auto found = stacks.find({row.run, row.pid, row.name, row.kind});
        if (found == stacks.end()) {
            out.push_back({&row, nullptr, row.counters()});
            continue;
        }
        std::vector<StackWeight> weights;
        for (const UserLockStack* s : found->second)
            weights.push_back({s->samples, s->wait_ns});
        const std::vector<LockCounters> parts = split_counters(row.counters(), weights);
        for (size_t i = 0; i < parts.size(); ++i)
            out.push_back({&row, found->second[i], parts[i]});
    }
    return out;
}

}  // namespace lockscope
