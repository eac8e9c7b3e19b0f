// What the locks page shows for one selected row: computed on selection
// from the snapshot's indexes (a few milliseconds even for an hour-long
// session), so the snapshot itself stays small.
#pragma once

#include "session/snapshot.h"

#include <string>
#include <vector>

namespace lockscope::gui {

// A kernel stack merged over runs (the store keeps one row per run).
struct StackEntry {
    std::vector<std::string> frames;  // innermost first
    // A waiter stack's user frames above its kernel frames, innermost first,
    // where the waiters' user stacks were sampled (the kernel stack's samples
    // and wait are then shared among its user stacks); empty otherwise.
    std::vector<std::string> user_frames;
    uint64_t samples = 0;
    uint64_t wait_ns = 0;
};

// One lock object of the class (its read and write rows together).
struct InstanceEntry {
    std::string label;   // "#1 inode 12 on ext4 (8:1) 'dir'"
    std::string detail;  // the evidence behind the name
    uint64_t contentions = 0;
    uint64_t wait_ns = 0;
};

struct LockDetail {
    std::string name;  // "pipe->mutex (mutex)"; a user lock's "g_lock (pthread_mutex, user space)"
    LockCounters counters;
    // A user-space lock's row: its waits are kept per run, not per
    // interval, so contentions_per_s is each run's mean (its waits per
    // second over the run's intervals); its waiters' stacks are user
    // stacks; its wakers the threads that woke its waiters (samples: their
    // wakes); its holders the owner threads waiters saw (no stack is
    // recorded for them); its objects one per process.
    bool user = false;
    Series contentions_per_s;
    Series spin_failures_per_s;
    Series sleeps_per_s;
    std::vector<StackEntry> waiters;  // by samples, most first
    std::vector<StackEntry> wakers;
    std::vector<StackEntry> holders;       // the holder's stack when a waiter queued; first frame its state
    std::vector<InstanceEntry> instances;  // by wait, most first
};

LockDetail build_lock_detail(const SessionSnapshot& snapshot, size_t group);

}  // namespace lockscope::gui
