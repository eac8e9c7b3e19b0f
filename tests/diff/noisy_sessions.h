// Sessions in memory as a noisy machine records them: each run's level
// drawn from a heavy-tailed distribution (a Student t with 3 degrees of
// freedom on the log scale, so a run now and then is several times the
// others), counts drawn as Poisson counts (a rare event is 0 in some runs),
// the wait split into its four parts with noise, and sampled call paths
// whose shares vary between runs more than sampling alone would make them.
// Many of them are diffed in the property tests, so they are built in
// memory rather than through the session writer.
#pragma once

#include "core/model.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace lockscope::testing {

struct NoisyLock {
    std::string name, kind, mode;
    double contentions_per_s = 1000;
    double wait_ns_per_contention = 20000;
    double spin_failure = 0.1;  // of spin attempts (one per contention)
    // The wait's parts: spinning, queued on CPU, asleep, runnable; they sum to 1.
    double parts[4] = {0.3, 0.05, 0.15, 0.5};
    // Waiter paths (one function each) and their mean shares; sampled at
    // `samples_per_s`.
    std::vector<std::pair<std::string, double>> paths;
    double samples_per_s = 0;
};

struct NoisySpec {
    int runs = 4;
    int intervals = 1;  // per run
    double interval_s = 1;
    double ops_per_s = 300000;  // 0: no workload counts
    double run_sigma = 0.15;    // spread of a run's level, log scale (heavy-tailed)
    double part_sigma = 0.2;    // spread of the parts and of the path shares between runs
    // The chance that a run also holds one long sleep on a lock of another
    // program (mutex@rcu_barrier_tasks_generic, 0.4 s asleep): one such run
    // outweighs all the others' wait, as on a shared machine.
    double burst_chance = 0;
    std::vector<NoisyLock> locks;
    uint64_t seed = 1;
};

// Two locks like the pipe workload's (a busy mutex, a rare rwlock) and a
// middling rwsem, with waiter paths on the mutex.
std::vector<NoisyLock> noisy_locks();

Session noisy_session(const NoisySpec& spec);

}  // namespace lockscope::testing
