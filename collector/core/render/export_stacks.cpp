#include "core/render/export_stacks.h"

#include "core/analysis/user_code.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

namespace lockscope {
namespace {

// One sampled stack of a lock, as the spreading sees it.
struct Sampled {
    std::vector<std::string> frames;
    uint64_t samples = 0;
    uint64_t wait_ns = 0;
};

// Appends `lock`'s stacks to `out`, each measure's total over `c` spread
// over them; with none, one entry without frames. Nothing when every
// measure is zero.
void spread(const WeightedStack& lock, const LockCounters& c, const std::vector<Sampled>& samples,
            const std::vector<StackMeasure>& measures, std::vector<WeightedStack>& out)
{
    std::vector<uint64_t> values;
    for (const StackMeasure& m : measures)
        values.push_back(m.value(c));
    if (std::all_of(values.begin(), values.end(), [](uint64_t v) { return v == 0; }))
        return;
    if (samples.empty()) {
        out.push_back(lock);
        out.back().values = values;
        return;
    }
    uint64_t sampled_wait = 0;
    for (const Sampled& s : samples)
        sampled_wait += s.wait_ns;
    const size_t first = out.size();
    for (const Sampled& s : samples) {
        out.push_back(lock);
        out.back().frames = s.frames;
        out.back().values.assign(measures.size(), 0);
    }
    for (size_t m = 0; m < measures.size(); ++m) {
        // Sampled wait says where the time went; with none (zero-length
        // waits), or where the measure asks for it, the sample counts do.
        std::vector<uint64_t> shares;
        for (const Sampled& s : samples)
            shares.push_back(measures[m].by_wait && sampled_wait ? s.wait_ns : s.samples);
        const std::vector<uint64_t> parts = apportion(values[m], shares);
        for (size_t i = 0; i < samples.size(); ++i)
            out[first + i].values[m] = parts[i];
    }
}

// A kernel stack's functions, innermost first, without the tracepoint's own.
std::vector<std::string> kernel_functions(const StackSample& s)
{
    std::vector<std::string> out;
    for (const std::string& frame : s.frames) {
        const std::string fn = stack_function(frame);
        if (!is_tracepoint_plumbing(fn))
            out.push_back(fn.empty() ? "[unknown]" : fn);
    }
    return out;
}

void weigh_kernel_locks(const Session& session, const std::vector<StackMeasure>& measures,
                        std::vector<WeightedStack>& out)
{
    // Each run's total per lock; load_session may give per-interval rows or
    // per-run totals, both add up the same.
    std::map<std::pair<int64_t, int64_t>, LockCounters> totals;
    for (const LockInterval& li : session.lock_intervals)
        totals[{li.run, li.lock_id}].add(li.counters);
    // The user code above a kernel stack, where it was sampled: the stack's
    // own samples and wait are shared among its user stacks, in proportion.
    const UserCodeIndex user_code(session);
    std::map<std::pair<int64_t, int64_t>, std::vector<Sampled>> stacks;
    for (const StackSample& s : session.stacks) {
        if (s.role != "waiter")
            continue;
        const std::vector<std::string> kernel = kernel_functions(s);
        for (const UserCodePart& part : user_code.parts(s)) {
            std::vector<std::string> frames = kernel;
            if (part.frames)
                frames.insert(frames.end(), part.frames->begin(), part.frames->end());
            stacks[{s.run, s.lock_id}].push_back({std::move(frames), part.samples, part.wait_ns});
        }
    }
    for (const auto& [key, c] : totals) {
        const LockInfo* lock = session.lock(key.second);
        if (!lock)
            continue;
        WeightedStack w;
        w.name = lock->name;
        w.kind = lock->kind + (lock->mode.empty() ? "" : "/" + lock->mode);
        w.name_source = lock->name_source;
        const auto found = stacks.find(key);
        spread(w, c, found == stacks.end() ? std::vector<Sampled>{} : found->second, measures, out);
    }
}

void weigh_user_locks(const Session& session, const std::vector<StackMeasure>& measures,
                      std::vector<WeightedStack>& out)
{
    using Key = std::tuple<int64_t, uint32_t, std::string, std::string>;  // run, pid, name, kind
    std::map<Key, std::vector<Sampled>> stacks;
    for (const UserLockStack& s : session.user_lock_stacks)
        stacks[{s.run, s.pid, s.name, s.kind}].push_back({s.frames, s.samples, s.wait_ns});
    for (const UserLockRow& row : session.user_locks) {
        WeightedStack w;
        w.name = row.name;
        w.kind = row.kind;
        w.name_source = row.name_source;
        w.user = true;
        const auto found = stacks.find({row.run, row.pid, row.name, row.kind});
        spread(w, row.counters(), found == stacks.end() ? std::vector<Sampled>{} : found->second, measures, out);
    }
}

}  // namespace

std::vector<WeightedStack> weigh_stacks(const Session& session, const std::vector<StackMeasure>& measures)
{
    std::vector<WeightedStack> out;
    weigh_kernel_locks(session, measures, out);
    weigh_user_locks(session, measures, out);
    return out;
}

}  // namespace lockscope
