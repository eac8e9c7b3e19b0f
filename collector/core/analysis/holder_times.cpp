#include "core/analysis/holder_times.h"

#include <algorithm>
#include <map>
#include <utility>

#include "core/sorted_values.h"

namespace lockscope {
namespace {

std::vector<HolderTime> merged_by_task(const Session& session, const std::function<bool(int64_t)>& wanted,
                                       const std::function<bool(const HolderTime&)>& keep, size_t top,
                                       bool with_user_locks)
{
    std::map<std::pair<uint32_t, uint32_t>, HolderTime> by_task;  // (tgid, tid): a tid may be reused
    std::vector<const HolderTime*> all;
    for (const HolderTime& h : session.holder_times)
        all.push_back(&h);
    if (with_user_locks)
        for (const UserLockHolder& h : session.user_lock_holders)
            all.push_back(&h);
    for (const HolderTime* each : all) {
        const HolderTime& h = *each;
        if (!wanted(h.run) || !keep(h))
            continue;
        HolderTime& t = by_task[{h.tgid, h.tid}];
        t.tid = h.tid;
        t.tgid = h.tgid;
        if (t.comm.empty())
            t.comm = h.comm;
        t.running_ns = sat_add(t.running_ns, h.running_ns);
        t.runnable_ns = sat_add(t.runnable_ns, h.runnable_ns);
        t.asleep_ns = sat_add(t.asleep_ns, h.asleep_ns);
        t.waits = sat_add(t.waits, h.waits);
    }
    std::vector<HolderTime> out =
        sorted_values(by_task, [](const HolderTime& a, const HolderTime& b) { return a.total_ns() > b.total_ns(); });
    if (top && out.size() > top)
        out.resize(top);
    return out;
}

}  // namespace

std::vector<HolderTime> holder_time_shares(const Session& session, const std::function<bool(int64_t)>& wanted,
                                           const std::set<int64_t>& locks, const std::string& role, size_t top)
{
    return merged_by_task(
        session, wanted, [&](const HolderTime& h) { return h.role == role && locks.count(h.lock_id); }, top, false);
}

std::vector<HolderTime> holder_times_by_task(const Session& session, const std::function<bool(int64_t)>& wanted)
{
    return merged_by_task(
        session, wanted, [](const HolderTime& h) { return h.role == "holder"; }, 0, true);
}

}  // namespace lockscope
