// Reading stored stack frames ("function+0xoff/0xsize", innermost first):
// the function of a frame, and which frames are tracing or lock plumbing
// rather than the code that waited. Shared by the report, the diff and the
// stack exports, and by lock identity at record time.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lockscope {

// "anon_pipe_read+0x5a/0x3c0" -> "anon_pipe_read".
std::string stack_function(const std::string& frame);
// The tracepoint's own frames, the same on every stack.
bool is_tracepoint_plumbing(const std::string& function);
// Lock, wake-up and tracing code that is not in .spinlock.text/.sched.text
// ("_raw_spin_lock", "mutex_lock", "bpf_trace_run2", ...).
bool is_lock_plumbing(std::string_view function);

// The scheduler's own functions (.sched.text): schedule(), io_schedule(), ...
bool is_schedule_function(std::string_view function);

// The first function of a stored stack that is not lock, scheduler, wake-up
// or tracing plumbing (their addresses are gone: recognised by name).
std::string caller_function(const std::vector<std::string>& frames);

}  // namespace lockscope
