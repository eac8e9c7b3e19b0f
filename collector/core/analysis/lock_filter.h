// Filters in `perf lock contention`'s vocabulary, for record, top, report
// and export: --kind (lockscope's kinds and perf's spellings: mutex,
// rwsem:R, rwsem:W, spinlock, rwlock:R, rwlock:W, pcpu-sem, rt-mutex, ...),
// --lock NAME|GLOB and --caller FUNC|GLOB.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/model.h"

namespace lockscope {

struct LockFilter {
    std::vector<std::pair<std::string, std::string>> kinds;  // (kind, mode); mode "" matches any
    std::vector<std::string> locks;                          // shell patterns on the lock's name
    std::vector<std::string> callers;                        // shell patterns on its caller

    bool empty() const { return kinds.empty() && locks.empty() && callers.empty(); }
    bool matches_kind(const std::string& kind, const std::string& mode) const;
    bool matches(const LockInfo& lock) const;
    // "kind mutex, rwsem/write; lock pipe*; caller anon_pipe_*", "" when empty.
    std::string describe() const;
    // For the kernel (record --kind): 1 << ls_kind_bit() of each kept kind; 0: all.
    uint32_t kind_bits() const;
};

// Adds "mutex,rwsem:W,rt-mutex" (commas or repeated options); an unknown name
// is a UsageError that lists the names.
void add_kind_filter(LockFilter& filter, const std::string& list);
// Adds a pattern for `option` ("--lock"); an empty one or an unbalanced '['
// is a UsageError.
void add_pattern_filter(std::vector<std::string>& patterns, const std::string& pattern, const char* option);

// The session with only the matching locks (their interval rows and stacks),
// each interval's lock counters recomputed from them (CPU idle, events and
// losses stay the whole machine's); meta "filters" says which applied.
Session filter_session(const Session& session, const LockFilter& filter);

}  // namespace lockscope
