// Which futex waits are lock waits, and what a lock is called: from the
// unwound user stack of a sampled wait. A condition variable, a semaphore or
// an event loop sleeps in a futex too; only the locking library's lock
// functions on the stack make a wait lock contention. Recognised: glibc's
// NPTL (pthread mutexes and rwlocks, and the C++ locks built on them).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "unwind/user_frame.h"

namespace lockscope::userlock {

enum class WaitClass {
    lock,       // a mutex or rwlock of the locking library
    condition,  // pthread_cond_*: waiting for an event, not for a lock
    semaphore,  // sem_*
    other,      // a futex wait through none of the functions above
};

std::string_view to_string(WaitClass wait_class);

struct Classification {
    WaitClass wait_class = WaitClass::other;
    // "pthread_mutex", "pthread_rwlock/r", "pthread_rwlock/w"; for PI
    // futexes "pthread_mutex_pi" (glibc's PTHREAD_PRIO_INHERIT mutexes) or
    // "futex_pi"; "futex" when the wait is not through a known lock function.
    std::string kind = "futex";
};

// From the innermost frame out, the first frame of a known library function
// decides: a mutex waited on while a condition variable re-takes it is a
// mutex wait, not a condition wait.
Classification classify(const std::vector<unwind::UserFrame>& frames);

// A wait in FUTEX_LOCK_PI, FUTEX_LOCK_PI2 or FUTEX_WAIT_REQUEUE_PI: a lock
// wait whatever the stack says (the kernel takes the futex as a lock whose
// word holds its owner's TID); glibc's mutex functions on the stack make it
// a pthread_mutex_pi, anything else (a program's own futex lock) a futex_pi.
Classification classify_pi(const Classification& by_stack);

// The first frame outside the locking libraries (libc, libpthread,
// libstdc++, the dynamic loader, and the inlined std:: wrappers around
// them), without its parameter list: "Cache::get". A frame whose module has
// no symbol for it (a stripped binary with no debug file) is named by its
// place, the same on every run of the same build: "stress-ng+0xf55ff"
// (is_offset set). "" when no frame is outside those libraries.
struct Caller {
    std::string name;
    bool is_offset = false;
};
Caller first_caller_of(const std::vector<unwind::UserFrame>& frames);
std::string first_caller(const std::vector<unwind::UserFrame>& frames);

// "Cache::get(int) const" -> "Cache::get"; "(anonymous namespace)::f()" ->
// "(anonymous namespace)::f".
std::string without_parameters(std::string_view function);

// The name of a lock without a symbol (a heap lock): its kind's family and
// the first caller outside the locking library, "pthread_mutex@Cache::get".
std::string caller_lock_name(std::string_view kind, std::string_view caller);

}  // namespace lockscope::userlock
