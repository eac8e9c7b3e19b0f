#include "core/render/export_stacks.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace lockscope {
namespace {

// Splits `total` over `shares` in proportion, largest remainders first, so
// the parts are integers that add up to `total` exactly.
std::vector<uint64_t> apportion(uint64_t total, const std::vector<uint64_t>& shares)
{
    std::vector<uint64_t> parts(shares.size(), 0);
    const long double sum = std::accumulate(shares.begin(), shares.end(), 0.0L);
    if (shares.empty())
        return parts;
    if (sum <= 0) {
        parts[0] = total;
        return parts;
    }
    std::vector<std::pair<long double, size_t>> remainders;
    uint64_t given = 0;
    for (size_t i = 0; i < shares.size(); ++i) {
        const long double exact = (long double)total * (long double)shares[i] / sum;
        parts[i] = uint64_t(exact);
        given += parts[i];
        remainders.push_back({exact - (long double)parts[i], i});
    }
    std::stable_sort(remainders.begin(), remainders.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (size_t k = 0; given < total; k = (k + 1) % remainders.size(), ++given)
        parts[remainders[k].second]++;
    return parts;
}

}  // namespace

std::vector<WeightedStack> weigh_stacks(const Session& session, const std::vector<StackMeasure>& measures)
{
    // Each run's total per lock; load_session may give per-interval rows or
    // per-run totals, both add up the same.
    std::map<std::pair<int64_t, int64_t>, LockCounters> totals;
    for (const LockInterval& li : session.lock_intervals)
        totals[{li.run, li.lock_id}].add(li.counters);
    std::map<std::pair<int64_t, int64_t>, std::vector<const StackSample*>> stacks;
    for (const StackSample& s : session.stacks)
        if (s.role == "waiter")
            stacks[{s.run, s.lock_id}].push_back(&s);

    std::vector<WeightedStack> out;
    for (const auto& [key, c] : totals) {
        const LockInfo* lock = session.lock(key.second);
        if (!lock)
            continue;
        std::vector<uint64_t> values;
        for (const StackMeasure& m : measures)
            values.push_back(m.value(c));
        if (std::all_of(values.begin(), values.end(), [](uint64_t v) { return v == 0; }))
            continue;
        const auto found = stacks.find(key);
        if (found == stacks.end()) {
            out.push_back({lock, nullptr, values});
            continue;
        }
        const std::vector<const StackSample*>& samples = found->second;
        uint64_t sampled_wait = 0;
        for (const StackSample* s : samples)
            sampled_wait += s->wait_ns;
        const size_t first = out.size();
        for (const StackSample* s : samples)
            out.push_back({lock, s, std::vector<uint64_t>(measures.size(), 0)});
        for (size_t m = 0; m < measures.size(); ++m) {
            // Sampled wait says where the time went; with none (zero-length
            // waits), or where the measure asks for it, the sample counts do.
            std::vector<uint64_t> shares;
            for (const StackSample* s : samples)
                shares.push_back(measures[m].by_wait && sampled_wait ? s->wait_ns : s->samples);
            const std::vector<uint64_t> parts = apportion(values[m], shares);
            for (size_t i = 0; i < samples.size(); ++i)
                out[first + i].values[m] = parts[i];
        }
    }
    return out;
}

}  // namespace lockscope
