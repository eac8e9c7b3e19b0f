// Reading stored stack frames ("function+0xoff/0xsize", innermost first):
// the function of a frame, and which frames are tracing or lock plumbing
// rather than the code that waited. Shared by the report, the diff and the
// stack exports, and by lock identity at record time.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lockscope {

// A stored stack's functions, innermost first: "f+0x1a/0x40" -> "f".
std::vector<std::string> stack_functions(const std::vector<std::string>& frames);
// The same without the tracepoint's own frames.
std::vector<std::string> traced_functions(const std::vector<std::string>& frames);
// The tracepoint's own frames, the same on every stack.
bool is_tracepoint_plumbing(const std::string& function);
// Lock, wake-up and tracing code that is not in .spinlock.text/.sched.text
// ("_raw_spin_lock", "mutex_lock", "bpf_trace_run2", ...).
bool is_lock_plumbing(std::string_view function);

// The scheduler's own functions (.sched.text): schedule(), io_schedule(), ...
bool is_schedule_function(std::string_view function);
// Where a task slept: the first `count` functions of its stack past the
// scheduler's own frames ("handle_userfault", "__handle_mm_fault", ...).
std::vector<std::string> sleep_functions(const std::vector<std::string>& frames, size_t count);

// The first function of a stored stack that is not lock, scheduler, wake-up
// or tracing plumbing (their addresses are gone: recognised by name).
std::string caller_function(const std::vector<std::string>& frames);

}  // namespace lockscope
