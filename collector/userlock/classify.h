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
    // "pthread_mutex", "pthread_rwlock/r", "pthread_rwlock/w"; "futex" when
    // the wait is not through a known lock function.
    std::string kind = "futex";
};

// From the innermost frame out, the first frame of a known library function
// decides: a mutex waited on while a condition variable re-takes it is a
// mutex wait, not a condition wait.
Classification classify(const std::vector<unwind::UserFrame>& frames);

// The first frame outside the locking libraries (libc, libpthread,
// libstdc++, the dynamic loader, and the inlined std:: wrappers around
// them), without its parameter list: "Cache::get". "" when none is named.
std::string first_caller(const std::vector<unwind::UserFrame>& frames);

// "Cache::get(int) const" -> "Cache::get"; "(anonymous namespace)::f()" ->
// "(anonymous namespace)::f".
std::string without_parameters(std::string_view function);

// The name of a lock without a symbol (a heap lock): its kind's family and
// the first caller outside the locking library, "pthread_mutex@Cache::get".
std::string caller_lock_name(std::string_view kind, std::string_view caller);

}  // namespace lockscope::userlock
