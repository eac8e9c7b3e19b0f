// Realistic sessions for the GUI tests and the open benchmark, written
// through SessionWriter like the recorder writes them: totals are the sums
// of the per-lock deltas, stacks and tasks are per run and cumulative.
#pragma once

#include <QString>

#include <cstdint>

namespace lockscope::gui::testing {

struct SessionShape {
    int runs = 3;
    int intervals = 20;  // per run
    int locks = 20;
    double interval_s = 1.0;
    double contention_scale = 1.0;  // > 1 makes a "worse" session for diffs
    double spin_failure = 0.15;     // base spin-failure rate of the mutexes
    uint64_t seed = 1;
    bool finish_last_run = true;  // false: the session looks still recorded
    bool user_locks = false;      // each run also recorded g_cache_lock, g_table_lock and condition waits
    bool holder_split = true;     // mutexes and writers' rwsems have a holder split and holder tasks
};

// Writes (overwriting) a session at `path`.
void write_session(const QString& path, const SessionShape& shape);

// The diff page's input: a.lockscope, a default session, and b.lockscope,
// the same workload with 1.4 times the contention (drawn with `seed_b`),
// both in `dir`.
struct SessionPair {
    QString a, b;
};
SessionPair write_session_pair(const QString& dir, uint64_t seed_b);

// Appends `intervals` more intervals to the last run of a session created
// by write_session with finish_last_run = false (live-follow tests).
class LiveSession {
public:
    LiveSession(const QString& path, const SessionShape& shape);
    ~LiveSession();
    LiveSession(const LiveSession&) = delete;
    LiveSession& operator=(const LiveSession&) = delete;
    void append(int intervals);
    void finish();

private:
    struct State;
    State* state_;
};

}  // namespace lockscope::gui::testing
