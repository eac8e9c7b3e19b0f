#include "core/analysis/report_max.h"

#include "core/storage/session_store.h"  // kRunTotalIndex

#include <map>
#include <numeric>
#include <tuple>

namespace lockscope {

std::vector<bool> measured_maxima(const Session& session)
{
    const std::vector<LockInterval>& rows = session.lock_intervals;
    // The loader orders rows by run, interval and lock; a session built in
    // memory may not be.
    std::vector<size_t> order(rows.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return std::tie(rows[a].run, rows[a].index) < std::tie(rows[b].run, rows[b].index);
    });
    std::vector<bool> measured(rows.size(), false);
    std::map<std::pair<int64_t, int64_t>, uint64_t> before;  // (run, lock) -> largest value stored so far
    for (size_t i : order) {
        const LockInterval& li = rows[i];
        const auto [it, first] = before.try_emplace({li.run, li.lock_id}, 0);
        const uint64_t v = li.counters.max_wait_ns;
        measured[i] = li.index == kRunTotalIndex || first || v > it->second;
        it->second = std::max(it->second, v);
    }
    return measured;
}

std::vector<std::optional<uint64_t>> interval_max_waits(const Session& session)
{
    const std::vector<bool> measured = measured_maxima(session);
    std::map<std::pair<int64_t, int64_t>, MaxWait> by_interval;
    for (size_t i = 0; i < session.lock_intervals.size(); ++i) {
        const LockInterval& li = session.lock_intervals[i];
        if (li.index != kRunTotalIndex)
            by_interval[{li.run, li.index}].add(li.counters.max_wait_ns, measured[i]);
    }
    std::vector<std::optional<uint64_t>> out;
    for (const IntervalTotals& in : session.intervals) {
        const auto found = by_interval.find({in.run, in.index});
        if (found != by_interval.end() && found->second.known())
            out.emplace_back(found->second.measured);
        else if (found == by_interval.end() && in.counters.contentions == 0)
            out.emplace_back(0);  // nothing ended in it: no wait to measure
        else
            out.emplace_back(std::nullopt);
    }
    return out;
}

}  // namespace lockscope
