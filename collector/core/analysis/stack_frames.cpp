#include "core/analysis/stack_frames.h"

#include "core/format.h"

#include <algorithm>
#include <array>

namespace lockscope {
namespace {

// Lock and wake-up plumbing that is not in .spinlock.text/.sched.text.
constexpr std::array kPlumbingPrefixes = {
    "bpf_",        "__bpf_",      "__traceiter_", "trace_",       "_raw_",          "queued_",        "native_queued_",
    "__pv_queued", "pv_",         "osq_",         "mutex_",       "__mutex_",       "rwsem_",         "__rwsem_",
    "down_",       "__down_",     "up_",          "__up_",        "wake_up_",       "try_to_wake_up", "__wake_up",
    "rt_mutex_",   "__rt_mutex_", "rtlock_",      "percpu_down_", "__percpu_down_", "percpu_up_",
};

}  // namespace

std::vector<std::string> stack_functions(const std::vector<std::string>& frames)
{
    std::vector<std::string> out;
    for (const std::string& frame : frames)
        out.push_back(function_of(frame));
    return out;
}

std::vector<std::string> traced_functions(const std::vector<std::string>& frames)
{
    std::vector<std::string> out = stack_functions(frames);
    std::erase_if(out, [](const std::string& fn) { return is_tracepoint_plumbing(fn); });
    return out;
}

bool is_tracepoint_plumbing(const std::string& fn)
{
    return fn.rfind("__traceiter_", 0) == 0 || fn.rfind("__bpf_trace_", 0) == 0;
}

bool is_lock_plumbing(std::string_view fn)
{
    for (std::string_view p : kPlumbingPrefixes)
        if (fn.starts_with(p))
            return true;
    return false;
}

bool is_schedule_function(std::string_view fn)
{
    // .sched.text functions that the plumbing prefixes miss.
    static constexpr std::array kSchedText = {"schedule",    "__schedule",     "preempt_schedule",
                                              "io_schedule", "__cond_resched", "_cond_resched"};
    const std::string_view base = fn.substr(0, fn.find('.'));  // "f.constprop.0" is f
    return std::find(kSchedText.begin(), kSchedText.end(), base) != kSchedText.end() || base.starts_with("schedule_");
}

std::vector<std::string> sleep_functions(const std::vector<std::string>& frames, size_t count)
{
    size_t first = 0;
    while (first + 1 < frames.size() && is_schedule_function(function_of(frames[first])))
        first++;
    std::vector<std::string> out;
    for (size_t i = first; i < frames.size() && out.size() < count; i++)
        out.push_back(function_of(frames[i]));
    return out;
}

std::string caller_function(const std::vector<std::string>& frames)
{
    for (const std::string& frame : frames) {
        const std::string_view fn = std::string_view(frame).substr(0, frame.find('+'));
        if (fn.empty() || is_lock_plumbing(fn) || is_schedule_function(fn))
            continue;
        return std::string(fn);
    }
    return {};
}

}  // namespace lockscope
