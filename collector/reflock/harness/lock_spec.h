// The locks `lockscope bench` can drive, by the names its --lock takes.
#pragma once

#include "reflock/rwsem.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace reflock::harness {

enum class LockKind : std::uint8_t { Mutex, Mutex46, RwSem, PthreadMutex, PthreadRwlock, StdSharedMutex };

struct LockSpec {
    LockKind kind = LockKind::Mutex;
    Policy policy = Policy::V5_19;  // RwSem only
    // RwSem and Mutex46: ns between clearing the owner and releasing the count
    // in unlock (RwSemOptions::release_window_ns).
    std::uint64_t release_window_ns = 0;
};

// "mutex", "mutex@4.6", "rwsem@4.2", "pthread_mutex", "pthread_rwlock", "std_shared_mutex".
// Throws std::invalid_argument naming the valid lock kinds or policies.
LockSpec parse_lock(std::string_view text);
std::string to_string(const LockSpec& lock);
std::string lock_names();  // "mutex, rwsem@POLICY, pthread_mutex, ..."
// Every valid --lock, each rwsem policy spelled out (for shell completion).
std::vector<std::string> every_lock_name();

}  // namespace reflock::harness
