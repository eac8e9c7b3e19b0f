// `lockscope export --format folded`: sampled waiter stacks weighted so that
// they add up to the exact per-lock totals (export_stacks.h).
#include "core/render/export.h"
#include "core/render/export_stacks.h"

#include <algorithm>
#include <map>
#include <vector>

namespace lockscope {
namespace {

// Frame text for a folded line: ';' separates frames (the weight follows the
// line's last space).
std::string folded_text(std::string s)
{
    std::replace(s.begin(), s.end(), ';', ':');
    std::replace(s.begin(), s.end(), '\n', ' ');
    return s;
}

// Root first, as folded stacks go.
std::string folded_line(const WeightedStack& w)
{
    std::string line = folded_text(w.root());
    if (w.frames.empty())
        return line + ";[no stack sampled]";
    for (auto it = w.frames.rbegin(); it != w.frames.rend(); ++it)
        line += ';' + folded_text(*it);
    return line;
}

}  // namespace

void export_folded(const Session& session, FoldedWeight weight, std::ostream& out)
{
    const StackMeasure measure = weight == FoldedWeight::WaitNs
                                     ? StackMeasure([](const LockCounters& c) { return c.wait_ns; })
                                     : StackMeasure([](const LockCounters& c) { return c.contentions; });
    std::map<std::string, uint64_t> lines;  // sorted output, equal stacks merged
    for (const WeightedStack& w : weigh_stacks(session, {measure})) {
        if (!w.values[0])
            continue;
        lines[folded_line(w)] += w.values[0];
    }
    for (const auto& [line, w] : lines)
        out << line << ' ' << w << '\n';
}

}  // namespace lockscope
