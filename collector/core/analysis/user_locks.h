// The user-space locks of a session (record's user-lock recorder), rolled
// up for the report: rows per lock and kind over the runs reported, the
// futex waits left out per reason, and what was lost.
#pragma once

#include "core/model.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace lockscope {

// report --scope: which locks the rows are of.
enum class LockScope { All, Kernel, User };

// "all", "kernel", "user"; anything else is a UsageError that lists them.
LockScope parse_lock_scope(const std::string& text);
const char* lock_scope_name(LockScope scope);

// A thread that woke waiters of a user lock, over the runs reported.
struct UserLockReportWaker {
    uint32_t tid = 0;
    uint32_t pid = 0;
    std::string comm;
    uint64_t wakes = 0;
};

// A sampled waiter stack of a user lock, over the runs reported.
struct UserLockReportStack {
    std::vector<std::string> frames;  // innermost first
    uint64_t samples = 0;
    uint64_t wait_ns = 0;  // the sampled waits' own
};

// Its counts and times are its words' or runs' summed (UserLockWaits); its
// caller is that of the run with the most wait.
struct UserLockReportRow : UserLockWaits {
    std::set<uint32_t> pids;
    // By instance, each futex word is a row: its address in its process
    // (pids has one), or for a word in shared memory its place
    // (UserLockInstance::shared) and every process that mapped it; 0 and ""
    // for a row of a file without words, and by lock.
    uint64_t address = 0;
    std::string shared;
    // Its wait's parts (wait_ns = oncpu_ns + asleep_ns + runnable_ns) are 0s
    // where the session does not split the wait (UserLockReport::split),
    // its holder split where the report keeps none (holder_split).
    std::vector<HolderTime> holders;          // the owners followed, by the wait behind them, most first
    std::vector<HolderTime> preemptors;       // what ran instead of a runnable owner, by that wait
    std::vector<UserLockReportWaker> wakers;  // by wakes, most first
    std::vector<UserLockReportStack> stacks;  // by sampled wait, most first
    std::set<uint32_t> owner_tids;
    std::set<std::string> ops;
    double share_of_wait = 0;  // of all user-lock rows' wait

    double mean_wait_ns() const { return waits ? double(wait_ns) / double(waits) : 0.0; }
};

struct UserLockReport {
    bool tried = false;                    // some run reported tried to record user locks
    bool all_processes = false;            // some run recorded every process's (record --user-locks=all)
    bool by_process = false;               // a row per process's lock (report --by instance)
    std::vector<std::string> unavailable;  // why a run recorded none, one line each
    std::vector<UserLockReportRow> rows;   // by wait, longest first; at most `top`
    size_t rows_total = 0;                 // before the cut
    uint64_t waits = 0;                    // all rows'
    uint64_t wait_ns = 0;
    uint64_t symbol_named_wait_ns = 0;  // of it, the rows named by a symbol (named_by_symbol())
    // Whether the session's format splits a user lock's wait into on CPU,
    // asleep and runnable (format 6 on, or a session built in memory).
    bool split = true;
    // Whether it keeps the user locks' holder split: a session of format 9
    // on (or built in memory), by lock (a futex word's row keeps none).
    bool holder_split = true;
    std::map<std::string, UserLockLeftOut> left_out;  // by reason, over the runs (run is 0)
    UserLockRun counters;                             // samples and losses, over the runs (run is 0)
};

// Whether a session of this format keeps the user locks' holder split
// (format 9 on; 0: built in memory).
inline bool user_holder_split_kept(int schema_version)
{
    return schema_version == 0 || schema_version >= 9;
}

// Rows keyed by (name, kind, module): one lock over every run, whichever
// process ran it; `by_process`, also by futex word (report --by instance:
// each process's lock apart, as stress-ng's stressors' own mutexes, and two
// heap mutexes of one name apart; a word in shared memory is one lock over
// its processes). A row's sampled stacks and wakers are kept per name, not
// per word: by instance, a row has them where its name has one word in its
// process. `run`: one run only; `top` 0: every row.
UserLockReport user_lock_report(const Session& session, std::optional<int64_t> run, size_t top,
                                bool by_process = false);

// Whether a row's name came from a symbol (the lock's own, or its caller's
// function) rather than from a place (module and offset) or nowhere.
bool named_by_symbol(const std::string& name_source);

}  // namespace lockscope
