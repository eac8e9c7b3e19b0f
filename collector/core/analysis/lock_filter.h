// Filters in `perf lock contention`'s vocabulary, for record, top, report
// and export: --kind/-Y (lockscope's kinds and perf's spellings: mutex,
// mutex:spin, rwsem:R, rwsem:W, spinlock, rwlock:R, rwlock:W, pcpu-sem,
// rt-mutex, ...; the user-space locks' pthread_mutex, pthread_rwlock, futex), --lock NAME|GLOB and -L NAME,...,
// --caller FUNC|GLOB and -S TEXT (a sampled stack of the lock has a frame containing TEXT).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/model.h"

namespace lockscope {

// The mode of perf's mutex:spin: a mutex's optimistic spin phases only.
inline constexpr const char* kSpinPhases = "spin";

struct LockFilter {
    // (kind, mode); mode "" matches any, kSpinPhases a mutex's spin phases
    std::vector<std::pair<std::string, std::string>> kinds;
    std::vector<std::string> locks;       // shell patterns on the lock's name
    std::vector<std::string> callers;     // shell patterns on its caller
    std::vector<std::string> callstacks;  // text in its caller or a frame of a sampled stack of it

    bool empty() const { return kinds.empty() && locks.empty() && callers.empty() && callstacks.empty(); }
    bool matches_kind(const std::string& kind, const std::string& mode) const;
    // A lock of this kind is kept for its spin phases only (mutex:spin
    // without a plain mutex).
    bool spin_phases_only(const std::string& kind, const std::string& mode) const;
    bool matches(const LockInfo& lock) const;  // kind, name and caller (not callstacks)
    // A user-space lock's row, by the same kind, name and caller (its kind
    // as the user-lock table prints it: pthread_mutex, pthread_rwlock/r, ...).
    bool matches(const UserLockWaits& lock) const;
    // "kind mutex, rwsem/write; lock pipe*; caller anon_pipe_*", "" when empty.
    std::string describe() const;
    // For the kernel (record --kind): 1 << ls_kind_bit() of each kept kind; 0: all.
    uint32_t kind_bits() const;
};

// Adds "mutex,rwsem:W,rt-mutex" (commas or repeated options); an unknown name
// is a UsageError that lists the names. `option` names it in errors.
void add_kind_filter(LockFilter& filter, const std::string& list, const char* option = "--kind");
// Adds a pattern for `option` ("--lock"); an empty one or an unbalanced '['
// is a UsageError.
void add_pattern_filter(std::vector<std::string>& patterns, const std::string& pattern, const char* option);
// perf's -L/--lock-filter: names (or patterns), comma-separated; a lock
// address is a UsageError: sessions keep no addresses.
void add_lock_list_filter(LockFilter& filter, const std::string& list);
// perf's -S/--callstack-filter: a substring of a frame's function.
void add_callstack_filter(LockFilter& filter, const std::string& text);

// The counters of a mutex's spin phases only: a spin attempt is a
// contention, the spin time the wait; its time switched out counts as
// runnable (a spinner gives up the CPU still runnable). The longest wait and
// the wait histogram are those of whole waits, unknown here: zero.
LockCounters spin_phase_counters(const LockCounters& c);

// The session with only the matching locks (their interval rows and stacks),
// each interval's lock counters recomputed from them (CPU idle, events and
// losses stay the whole machine's); meta "filters" says which applied. The
// user-space locks' rows are filtered alike (-S: their caller or a frame
// of their sampled stacks).
// Under mutex:spin alone, mutex rows hold their spin phases only.
Session filter_session(const Session& session, const LockFilter& filter);

}  // namespace lockscope
