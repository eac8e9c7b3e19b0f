// `lockscope export --format folded`: sampled waiter stacks weighted so that
// they add up to the exact per-lock totals.
#include "core/render/export.h"
#include "core/render/export_stacks.h"

#include <algorithm>
#include <map>
#include <numeric>
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

std::string root_frame(const LockInfo& lock)
{
    const std::string label = lock.kind + (lock.mode.empty() ? "" : "/" + lock.mode);
    return folded_text(lock.name + " [" + label + "]");
}

std::string folded_line(const LockInfo& lock, const StackSample& s)
{
    std::string line = root_frame(lock);
    // Frames are stored innermost first; folded stacks go root first.
    for (auto it = s.frames.rbegin(); it != s.frames.rend(); ++it) {
        const std::string fn = stack_function(*it);
        if (!is_tracepoint_plumbing(fn))
            line += ';' + (fn.empty() ? std::string("[unknown]") : folded_text(fn));
    }
    return line;
}

}  // namespace

void export_folded(const Session& session, FoldedWeight weight, std::ostream& out)
{
    const StackMeasure measure = weight == FoldedWeight::WaitNs
                                     ? StackMeasure{[](const LockCounters& c) { return c.wait_ns; }, true}
                                     : StackMeasure{[](const LockCounters& c) { return c.contentions; }, false};
    std::map<std::string, uint64_t> lines;  // sorted output, equal stacks merged
    for (const WeightedStack& w : weigh_stacks(session, {measure})) {
        if (!w.values[0])
            continue;
        lines[w.stack ? folded_line(*w.lock, *w.stack) : root_frame(*w.lock) + ";[no stack sampled]"] += w.values[0];
    }
    for (const auto& [line, w] : lines)
        out << line << ' ' << w << '\n';
}

}  // namespace lockscope
