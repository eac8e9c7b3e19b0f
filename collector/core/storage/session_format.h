// What the session file's writer, its loader and its schema agree on: the
// format's version and the encoding of an episode's phases.
//
// Format history: bump kSchemaVersion on any change an older reader would
// misread; readers refuse files newer than they understand and read every
// older version (session_load.cpp says what each lacks).
//   1  the first format (lost_nested, lost_abandoned, episodes added within it)
//   2  locks.name_source, locks.detail, locks.instance (lock identity); meta
//      lock_identity says which kernel data sources named the locks
//   3  tasks.cgroup (the task's cgroup v2 path); holder stacks (stacks.role
//      "holder:<state>"), runs.holder_samples/holder_changed, table edges
//   4  counter columns timed and wait_var_us2; meta timing, timing.period
//      (record --sample: the time fields are estimates, see core/analysis/estimate.h)
//   5  counter columns spin_offcpu_ns and spin_yields: the off-CPU time inside
//      spin phases, so that the wait splits into four parts that add up
//      (LockCounters::spinning_ns() and the rest; older files cannot split it);
//      runs.holder_oncpu_samples/holder_oncpu_dropped; stacks.role
//      "holder:on-cpu" (a running holder's stack taken on its own CPU, no
//      wait); meta running_holders, running_holder_hz; tables user_locks,
//      user_lock_left_out, user_lock_runs and user_lock_chains added within
//      it (user-space locks of the recorded processes and their chains into
//      kernel locks: a file without them has none)
//   6  user_locks.oncpu_ns, asleep_ns, runnable_ns (a user lock's wait in
//      parts that add up to it; older files cannot split it), wakes and hist;
//      user_lock_runs.lost_wakers; tables user_lock_wakers (who woke the
//      waiters of each user lock) and user_lock_stacks (their sampled stacks);
//      table kernel_lock_user_stacks (the user frames above kernel locks'
//      sampled waiter stacks) and user_lock_words (the futex words of user
//      locks, naming --trace's user-lock waits: episodes with lock_flags
//      bit LS_F_FUTEX_WAIT) and user_lock_instances (each futex word's part
//      of its user lock's waits, for report --by instance) added within it
//   7  counter columns holder_running_ns, holder_runnable_ns and
//      holder_asleep_ns: the holder split, the wait by what the lock's holder
//      was doing (LockCounters::holder_unknown_ns() is the rest; older files
//      cannot split it); runs.holder_untracked; table holder_times (the
//      followed holders' and their preemptors' times, per lock)
//   8  user_lock_runs.untimed_waits and untimed_estimated_ns: about one
//      user-lock wait in 16 is timed from its entry, the others' time is
//      estimated (older files timed every wait)
//   9  user_locks.holder_running_ns, holder_runnable_ns and holder_asleep_ns:
//      the holder split of user locks (older files cannot split it); table
//      user_lock_holders (the followed owners' and their preemptors' times,
//      per user lock)
#pragma once

#include "core/model.h"

#include <string>

namespace lockscope {

inline constexpr int kSchemaVersion = 9;

// The `episodes` column encoding of phases: "s0 q1520:0 s80211", each a kind
// (s spin, q queued), the start as ns after the episode's begin, and for a
// queueing the owner state seen. Exposed for tests.
std::string encode_phases(const Episode& e);
// Strict inverse; false on anything malformed or out of order.
bool decode_phases(const std::string& text, Episode& e);

}  // namespace lockscope
