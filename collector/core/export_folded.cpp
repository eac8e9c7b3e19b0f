// `lockscope export --format folded`: sampled waiter stacks weighted so that
// they add up to the exact per-lock totals.
#include "core/export.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <vector>

namespace lockscope {
namespace {

// "anon_pipe_read+0x5a/0x3c0" -> "anon_pipe_read": offsets would keep apart
// lines that a flame graph should merge.
std::string function_of(const std::string& frame)
{
    const size_t plus = frame.find('+');
    std::string fn = plus == std::string::npos ? frame : frame.substr(0, plus);
    // ';' separates frames (the weight follows the line's last space).
    std::replace(fn.begin(), fn.end(), ';', ':');
    std::replace(fn.begin(), fn.end(), '\n', ' ');
    return fn.empty() ? "[unknown]" : fn;
}

// The tracepoint's own frames: the same on every stack, they say nothing.
bool is_plumbing(const std::string& fn)
{
    return fn.rfind("__traceiter_", 0) == 0 || fn.rfind("__bpf_trace_", 0) == 0;
}

std::string root_frame(const LockInfo& lock)
{
    std::string label = lock.kind + (lock.mode.empty() ? "" : "/" + lock.mode);
    std::string frame = lock.name + " [" + label + "]";
    std::replace(frame.begin(), frame.end(), ';', ':');
    std::replace(frame.begin(), frame.end(), '\n', ' ');
    return frame;
}

std::string folded_line(const LockInfo& lock, const StackSample& s)
{
    std::string line = root_frame(lock);
    // Frames are stored innermost first; folded stacks go root first.
    for (auto it = s.frames.rbegin(); it != s.frames.rend(); ++it) {
        const std::string fn = function_of(*it);
        if (!is_plumbing(fn))
            line += ';' + fn;
    }
    return line;
}

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

void export_folded(const Session& session, FoldedWeight weight, std::ostream& out)
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

    std::map<std::string, uint64_t> lines;  // sorted output, equal stacks merged
    for (const auto& [key, c] : totals) {
        const LockInfo* lock = session.lock(key.second);
        if (!lock)
            continue;
        const uint64_t total = weight == FoldedWeight::WaitNs ? c.wait_ns : c.contentions;
        if (total == 0)
            continue;
        const auto found = stacks.find(key);
        if (found == stacks.end()) {
            lines[root_frame(*lock) + ";[no stack sampled]"] += total;
            continue;
        }
        const std::vector<const StackSample*>& samples = found->second;
        std::vector<uint64_t> shares;
        uint64_t sampled_wait = 0;
        for (const StackSample* s : samples)
            sampled_wait += s->wait_ns;
        // Sampled wait says where the time went; with none (zero-length waits),
        // or for contentions, the sample counts do.
        for (const StackSample* s : samples)
            shares.push_back(weight == FoldedWeight::WaitNs && sampled_wait ? s->wait_ns : s->samples);
        const std::vector<uint64_t> parts = apportion(total, shares);
        for (size_t i = 0; i < samples.size(); ++i)
            if (parts[i])
                lines[folded_line(*lock, *samples[i])] += parts[i];
    }
    for (const auto& [line, w] : lines)
        out << line << ' ' << w << '\n';
}

}  // namespace lockscope
