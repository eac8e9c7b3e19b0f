#include "identity/user_classify.h"
#include "core/enum_names.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <utility>

namespace lockscope::userlock {
namespace {

struct KnownFunction {
    std::string_view name;
    WaitClass wait_class;
    std::string_view kind;
};

// glibc 2.34+ (libpthread merged into libc) and earlier, with and without
// debuginfo: the exported names are always there, the internal ones only
// with libc6-dbg.
constexpr std::array kKnown = {
    KnownFunction{"__lll_lock_wait", WaitClass::lock, "pthread_mutex"},
    KnownFunction{"__lll_lock_wait_private", WaitClass::lock, "pthread_mutex"},
    KnownFunction{"pthread_mutex_lock", WaitClass::lock, "pthread_mutex"},
    KnownFunction{"__pthread_mutex_lock", WaitClass::lock, "pthread_mutex"},
    KnownFunction{"___pthread_mutex_lock", WaitClass::lock, "pthread_mutex"},
    KnownFunction{"__pthread_mutex_lock_full", WaitClass::lock, "pthread_mutex"},
    KnownFunction{"__pthread_mutex_cond_lock", WaitClass::lock, "pthread_mutex"},
    KnownFunction{"__pthread_mutex_cond_lock_full", WaitClass::lock, "pthread_mutex"},
    KnownFunction{"pthread_mutex_timedlock", WaitClass::lock, "pthread_mutex"},
    KnownFunction{"__pthread_mutex_timedlock", WaitClass::lock, "pthread_mutex"},
    KnownFunction{"pthread_mutex_clocklock", WaitClass::lock, "pthread_mutex"},
    KnownFunction{"__pthread_mutex_clocklock_common", WaitClass::lock, "pthread_mutex"},
    KnownFunction{"pthread_rwlock_rdlock", WaitClass::lock, "pthread_rwlock/r"},
    KnownFunction{"__pthread_rwlock_rdlock", WaitClass::lock, "pthread_rwlock/r"},
    KnownFunction{"__pthread_rwlock_rdlock_full", WaitClass::lock, "pthread_rwlock/r"},
    KnownFunction{"__pthread_rwlock_rdlock_full64", WaitClass::lock, "pthread_rwlock/r"},
    KnownFunction{"pthread_rwlock_timedrdlock", WaitClass::lock, "pthread_rwlock/r"},
    KnownFunction{"__pthread_rwlock_timedrdlock64", WaitClass::lock, "pthread_rwlock/r"},
    KnownFunction{"pthread_rwlock_clockrdlock", WaitClass::lock, "pthread_rwlock/r"},
    KnownFunction{"__pthread_rwlock_clockrdlock64", WaitClass::lock, "pthread_rwlock/r"},
    KnownFunction{"pthread_rwlock_wrlock", WaitClass::lock, "pthread_rwlock/w"},
    KnownFunction{"__pthread_rwlock_wrlock", WaitClass::lock, "pthread_rwlock/w"},
    KnownFunction{"__pthread_rwlock_wrlock_full", WaitClass::lock, "pthread_rwlock/w"},
    KnownFunction{"__pthread_rwlock_wrlock_full64", WaitClass::lock, "pthread_rwlock/w"},
    KnownFunction{"pthread_rwlock_timedwrlock", WaitClass::lock, "pthread_rwlock/w"},
    KnownFunction{"__pthread_rwlock_timedwrlock64", WaitClass::lock, "pthread_rwlock/w"},
    KnownFunction{"pthread_rwlock_clockwrlock", WaitClass::lock, "pthread_rwlock/w"},
    KnownFunction{"__pthread_rwlock_clockwrlock64", WaitClass::lock, "pthread_rwlock/w"},
};

constexpr std::array<std::pair<std::string_view, WaitClass>, 6> kEventPrefixes = {{
    {"pthread_cond_", WaitClass::condition},
    {"__pthread_cond_", WaitClass::condition},
    {"___pthread_cond_", WaitClass::condition},
    {"__condvar_", WaitClass::condition},
    {"sem_", WaitClass::semaphore},
    {"__new_sem_", WaitClass::semaphore},
}};

bool starts_with(std::string_view s, std::string_view prefix)
{
    return s.substr(0, prefix.size()) == prefix;
}

// The file name of a module path.
std::string_view base_name(std::string_view path)
{
    const auto slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool in_c_library(const unwind::UserFrame& frame)
{
    const std::string_view file = base_name(frame.module);
    return starts_with(file, "libc.so") || starts_with(file, "libc-") || starts_with(file, "libpthread");
}

bool in_locking_library(const unwind::UserFrame& frame)
{
    const std::string_view file = base_name(frame.module);
    for (std::string_view lib : {"libc.so", "libc-", "libpthread", "libstdc++", "ld-linux", "ld-musl", "libgcc_s"}) {
        if (starts_with(file, lib)) {
            return true;
        }
    }
    // The C++ wrappers (std::mutex::lock, std::shared_mutex::lock_shared,
    // __gthread_*) are inline: when a compiler keeps one out of line it
    // lands in the program, yet it is still the locking library's code.
    const std::string_view function = frame.function;
    return starts_with(function, "std::") || starts_with(function, "__gthread") || starts_with(function, "__gnu_cxx::");
}

}  // namespace

std::string_view to_string(WaitClass wait_class)
{
    static constexpr std::array kNames{"lock", "condition", "semaphore", "other"};
    return enum_name<WaitClass::other>(kNames, wait_class);
}

Classification classify(const std::vector<unwind::UserFrame>& frames)
{
    for (const auto& frame : frames) {
        const std::string_view function = frame.function;
        if (function.empty()) {
            continue;
        }
        for (const auto& known : kKnown) {
            if (function == known.name) {
                return {known.wait_class, std::string(known.kind)};
            }
        }
        // Prefixes, unlike whole names, would catch a program's own
        // functions (sem_refill): only the C library's count.
        for (const auto& [prefix, wait_class] : kEventPrefixes) {
            if (starts_with(function, prefix) && in_c_library(frame)) {
                return {wait_class, "futex"};
            }
        }
    }
    return {};
}

Classification classify_pi(const Classification& by_stack)
{
    const bool glibc_mutex = by_stack.wait_class == WaitClass::lock && by_stack.kind == "pthread_mutex";
    return {WaitClass::lock, glibc_mutex ? "pthread_mutex_pi" : "futex_pi"};
}

std::string without_parameters(std::string_view function)
{
    // Drop trailing qualifiers (" const", " &&") after the parameter list,
    // then the parameter list: the last balanced "(...)" at the end.
    std::size_t end = function.size();
    const auto close = function.rfind(')');
    if (close == std::string_view::npos) {
        return std::string(function);
    }
    int depth = 0;
    for (std::size_t i = close + 1; i-- > 0;) {
        if (function[i] == ')') {
            ++depth;
        } else if (function[i] == '(' && --depth == 0) {
            end = i;
            break;
        }
    }
    if (end == 0 || end == function.size()) {
        return std::string(function);  // "(anonymous namespace)" alone, or unbalanced
    }
    return std::string(function.substr(0, end));
}

namespace {

Caller caller_of(const unwind::UserFrame& frame)
{
    if (!frame.function.empty()) {
        return {without_parameters(frame.function), false};
    }
    char offset[32];
    std::snprintf(offset, sizeof(offset), "+0x%llx", static_cast<unsigned long long>(frame.module_offset));
    return {std::string(base_name(frame.module)) + offset, true};
}

bool is_known(std::string_view function)
{
    return std::any_of(kKnown.begin(), kKnown.end(), [&](const KnownFunction& k) { return k.name == function; });
}

}  // namespace

Caller first_caller_of(const std::vector<unwind::UserFrame>& frames)
{
    for (const auto& frame : frames) {
        if (!frame.module.empty() && !in_locking_library(frame)) {
            return caller_of(frame);
        }
    }
    // A lock of the C library's own (a new thread waits in start_thread for
    // its creator to release it): the C library's function that took it,
    // where the walk reached the thread's outermost frame.
    if (frames.empty() || frames.back().module.empty() || !in_c_library(frames.back())) {
        return {};
    }
    for (const auto& frame : frames) {
        if (!frame.module.empty() && in_c_library(frame) && !frame.function.empty() && !is_known(frame.function)) {
            return caller_of(frame);
        }
    }
    return {};
}

std::string first_caller(const std::vector<unwind::UserFrame>& frames)
{
    return first_caller_of(frames).name;
}

std::string caller_lock_name(std::string_view kind, std::string_view caller)
{
    const auto slash = kind.find('/');
    return std::string(kind.substr(0, slash)) + "@" + std::string(caller);
}

}  // namespace lockscope::userlock
