// Words a session's writers store and its readers recognise: spelled once
// here, so that a reader cannot drift from what the recorders write.
#pragma once

#include <string_view>

namespace lockscope {

// Meta "scope": what was recorded. The prefixed ones continue with the
// command line, the PID or the bench's locks ("bench rwsem@4.2,mutex").
inline constexpr const char* kScopeKey = "scope";
inline constexpr const char* kScopeSystem = "system";
inline constexpr const char* kScopeCommandPrefix = "command ";
inline constexpr const char* kScopePidPrefix = "pid ";
inline constexpr const char* kScopeBenchPrefix = "bench ";

inline bool is_bench_scope(std::string_view scope)
{
    return scope.starts_with(kScopeBenchPrefix);
}

// Lock kinds of userspace locks (reflock replicas seen through USDT, and
// `lockscope bench` runs).
inline constexpr const char* kKindUserMutex = "user-mutex";
inline constexpr const char* kKindUserRwsem = "user-rwsem";

}  // namespace lockscope
