// What `lockscope diff` gives (diff.h): the options it takes, each metric
// compared with its test and verdict, the locks and call paths compared, and
// the whole result. The session diff, its verdicts (diff_verdicts.h), its
// sides (diff_sides.h) and the fleet diff share these types.
#pragma once

#include "core/analysis/stats.h"
#include "core/model.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace lockscope {

enum class Direction { HigherIsBetter, LowerIsBetter, Neutral };

// BelowMinEffect: significant, but the change is smaller than
// DiffOptions::min_effect, so nothing is called.
enum class Verdict { Better, Worse, Higher, Lower, NoSignificantDifference, NotEnoughData, BelowMinEffect };
// "better", "worse", "higher", "lower", "no significant difference", "not enough data", "below min effect"
const char* verdict_name(Verdict v);

// Runs (or hosts) each side needs before a metric gets a verdict.
inline constexpr size_t kMinRuns = 3;

struct DiffOptions {
    double alpha = 0.05;  // the family-wise error over everything one diff calls
    // Nothing smaller is called: a rate's or time's relative change (0.05:
    // 5%), a fraction's or share's change in points (0.05: 5 points).
    double min_effect = 0.05;
    std::string label_a = "A";  // how messages name the sessions (e.g. their paths)
    std::string label_b = "B";
    // Locks to compare although their names differ, as (name in A, name in B):
    // a lock renamed between kernels (i_mutex → i_rwsem), or the one lock of
    // two bench sessions of different policies (matched automatically).
    std::vector<std::pair<std::string, std::string>> pairs;
    // Each run is a host (`diff --prometheus`): fewer than kMinRuns hosts on
    // a side is "not enough hosts".
    bool runs_are_hosts = false;
};

// One metric compared across the sessions: each side's value is a ratio of
// sums over its runs, the value report shows; the runs are the samples of
// its test (stats::ratio_test).
struct MetricDiff {
    // "throughput", "contentions_per_s", "spin_failure_rate", "wait_per_op",
    // "wait_per_s", the wait's parts "spinning_share", "queued_on_cpu_share",
    // "asleep_share", "runnable_share" (shares of the wait adding up to 1),
    // the holder split's "holder_running_share", "holder_runnable_share",
    // "holder_asleep_share", "holder_unknown_share" (another four adding up
    // to 1, where both sessions keep it), "idle_fraction"
    std::string metric;
    std::string unit;  // "ops/s", "/s", "ns/op", "ns/s", "fraction"
    Direction direction = Direction::Neutral;
    stats::TestResult test;  // centers, change, CIs, p, method, n per side
    double p_adjusted = 1;   // adjusted over the diff's whole family (diff_verdicts.h)
    Verdict verdict = Verdict::NotEnoughData;

    bool fraction() const { return unit == "fraction"; }
    // What --min-effect is held against: |relative change| of a rate or
    // time, |difference| of a fraction; infinite for a change from 0.
    double effect() const;
};

// A metadata key whose value differs; "" stands for "not recorded".
struct MetaDifference {
    std::string key;
    std::string a, b;
};

struct LockDiff {
    std::string name, kind, mode;
    std::string name_b;               // B's name when paired with a differently named lock, else empty
    std::string kind_b;               // B's kind when it differs (mutex → rtmutex under PREEMPT_RT), else empty
    std::vector<MetricDiff> metrics;  // the first is the headline: wait per op or per second
    double effect = 0;                // |B − A| of the headline metric: how much wait moved
};

// A lock seen in one session only: no test is possible, but the user must see it.
struct OneSidedLock {
    std::string name, kind, mode;
    uint64_t contentions = 0;
    uint64_t wait_ns = 0;
    double wait_per_s = 0;
};

// A call path whose share of a lock's sampled stacks moved: waiters waiting
// in it ("waiter", a caller), or holders holding the lock in it
// ("holder:<state>"). Shares are of the lock's sampled stacks of that family
// (waiter or holder) per session; frames are function names without
// offsets, innermost first, so the same path matches across kernels.
struct StackShift {
    std::string name, kind, mode;  // the lock, as in LockDiff (A's name and kind)
    std::string role;              // "waiter" or "holder:<state>"
    std::vector<std::string> functions;
    uint64_t samples_a = 0, samples_b = 0;  // this path's samples
    uint64_t total_a = 0, total_b = 0;      // the family's samples on the lock
    // Its share on each side (samples over the family's, over all runs), p_b
    // − p_a with its interval (in [−p_a, 1 − p_a]) and the p-value of
    // Welch's test with the runs as samples (stats::ratio_test).
    stats::ProportionDifference share;
    double p_adjusted = 1;  // adjusted over the diff's whole family (diff_verdicts.h)
    bool appeared() const { return samples_a == 0; }
};

// A lock's waiter (or holder) stacks are compared when each session sampled
// at least this many of them: fewer cannot move a share beyond noise.
inline constexpr uint64_t kMinStackSamples = 10;

struct DiffResult {
    std::string label_a, label_b;
    double alpha = 0.05;
    double min_effect = 0.05;
    bool by_runs = true;    // the runs are the samples (always: intervals never are)
    bool by_hosts = false;  // DiffOptions::runs_are_hosts: runs_a and runs_b count hosts
    size_t runs_a = 0, runs_b = 0;
    size_t intervals_a = 0, intervals_b = 0;
    std::vector<MetaDifference> metadata;  // kernel, config, CPU, workload, recorder
    std::vector<std::string> warnings;     // e.g. unrelated workloads
    std::vector<std::string> notes;        // how to read the statistics
    std::vector<MetricDiff> totals;
    std::vector<LockDiff> locks;  // by effect, largest first
    std::vector<OneSidedLock> only_a, only_b;
    std::vector<StackShift> stack_shifts;  // the moves called, largest first
    size_t stack_paths_compared = 0;       // paths tested
    size_t hypotheses = 0;                 // p-values adjusted together: metrics and paths

    bool any_worse() const;   // a total or lock judged worse
    bool any_change() const;  // a total or lock judged different in any direction, or a path moved
};

}  // namespace lockscope
