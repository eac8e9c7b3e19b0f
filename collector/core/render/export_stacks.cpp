#include "core/render/export_stacks.h"

#include "core/analysis/report_split.h"
#include "core/lock_key.h"

#include <algorithm>

namespace lockscope {
namespace {

// A kernel stack's functions, innermost first, without the tracepoint's own.
std::vector<std::string> kernel_functions(const StackSample& s)
{
    std::vector<std::string> out = traced_functions(s.frames);
    for (std::string& fn : out)
        if (fn.empty())
            fn = "[unknown]";
    return out;
}

// `w` weighed by every measure of `c`; false when all are zero.
bool weigh(WeightedStack& w, const LockCounters& c, const std::vector<StackMeasure>& measures)
{
    for (const StackMeasure& m : measures)
        w.values.push_back(m(c));
    return std::any_of(w.values.begin(), w.values.end(), [](uint64_t v) { return v != 0; });
}

}  // namespace

std::vector<WeightedStack> weigh_stacks(const Session& session, const std::vector<StackMeasure>& measures)
{
    const auto every_run = [](int64_t) { return true; };
    std::vector<WeightedStack> out;
    for (const StackShare& s : kernel_stack_shares(session, every_run)) {
        const LockInfo* lock = session.lock(s.lock_id);
        if (!lock)
            continue;
        WeightedStack w;
        w.name = lock->name;
        w.kind = kind_text(lock->kind, lock->mode);
        w.name_source = lock->name_source;
        if (s.kernel)
            w.frames = kernel_functions(*s.kernel);
        if (s.user)
            w.frames.insert(w.frames.end(), s.user->begin(), s.user->end());
        if (weigh(w, s.counters, measures))
            out.push_back(std::move(w));
    }
    for (const UserStackShare& s : user_stack_shares(session, every_run)) {
        WeightedStack w;
        w.name = s.row->name;
        w.kind = s.row->kind;
        w.name_source = s.row->name_source;
        w.user = true;
        if (s.stack)
            w.frames = s.stack->frames;
        if (weigh(w, s.counters, measures))
            out.push_back(std::move(w));
    }
    return out;
}

}  // namespace lockscope
