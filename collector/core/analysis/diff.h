// `lockscope diff`: did B (kernel, config, patch or lock policy) change lock
// behaviour compared with A by more than noise? Metadata differences, then
// totals and every lock matched by name+kind+mode, each with both values,
// the relative change, its confidence interval, a p-value and a verdict.
// Rendering is in diff_format.cpp; the GUI's diff page uses diff_sessions too.
#pragma once

#include "core/analysis/stats.h"
#include "core/model.h"

#include <cstddef>
#include <string>
#include <vector>

namespace lockscope {

// Exit code of `diff --fail-on` when the gate trips (0/1/2 are core/error.h's).
inline constexpr int kExitDiffGate = 3;

enum class Direction { HigherIsBetter, LowerIsBetter, Neutral };

enum class Verdict { Better, Worse, Higher, Lower, NoSignificantDifference, NotEnoughData };
// "better", "worse", "higher", "lower", "no significant difference", "not enough data"
const char* verdict_name(Verdict v);

struct DiffOptions {
    double alpha = 0.05;
    std::string label_a = "A";  // how messages name the sessions (e.g. their paths)
    std::string label_b = "B";
    // Locks to compare although their names differ, as (name in A, name in B):
    // a lock renamed between kernels (i_mutex → i_rwsem), or the one lock of
    // two bench sessions of different policies (matched automatically).
    std::vector<std::pair<std::string, std::string>> pairs;
    // Each run is a host (`diff --prometheus`): per-run values are compared
    // with Welch's t-test whatever their number, and fewer than 3 hosts on a
    // side is "not enough hosts", never a test over intervals.
    bool runs_are_hosts = false;
};

// One metric compared across the sessions.
struct MetricDiff {
    std::string metric;  // "throughput", "contentions_per_s", "spin_failure_rate", ...
    std::string unit;    // "ops/s", "/s", "ns/op", "ns/s", "fraction"
    Direction direction = Direction::Neutral;
    stats::TestResult test;      // centers, change, CIs, p, method, n per side
    double p_adjusted = 1;       // Holm-adjusted within its family (totals, or all lock rows)
    double autocorrelation = 0;  // lag-1, interval samples only; widens the rank test's variance
    Verdict verdict = Verdict::NotEnoughData;
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
    stats::ProportionDifference share;      // p_b − p_a with its interval and p-value
    double p_adjusted = 1;                  // Holm over every path compared
    bool appeared() const { return samples_a == 0; }
};

// A lock's waiter (or holder) stacks are compared when each session sampled
// at least this many of them: fewer cannot move a share beyond noise.
inline constexpr uint64_t kMinStackSamples = 10;

struct DiffResult {
    std::string label_a, label_b;
    double alpha = 0.05;
    bool by_runs = false;   // per-run means (Welch) or per-interval samples (Mann-Whitney)
    bool by_hosts = false;  // DiffOptions::runs_are_hosts: runs_a and runs_b count hosts
    size_t runs_a = 0, runs_b = 0;
    size_t intervals_a = 0, intervals_b = 0;
    std::vector<MetaDifference> metadata;  // kernel, config, CPU, workload, recorder
    std::vector<std::string> warnings;     // e.g. unrelated workloads
    std::vector<std::string> notes;        // how to read the statistics
    std::vector<MetricDiff> totals;
    std::vector<LockDiff> locks;  // by effect, largest first
    std::vector<OneSidedLock> only_a, only_b;
    std::vector<StackShift> stack_shifts;  // significant moves only, largest first
    size_t stack_paths_compared = 0;       // the family the Holm adjustment ran over

    bool any_worse() const;   // a total or lock judged worse
    bool any_change() const;  // a total or lock judged different in any direction
};

// The runs of `s` whose label matches the shell pattern `pattern` (fnmatch),
// with their intervals, lock rows and stacks; locks never seen in those runs
// are dropped. So one session of interleaved bench variants can be diffed
// against itself: `diff S S --runs-a 'rwsem@4.7-hacked *' --runs-b 'rwsem@4.2 *'`.
// Throws lockscope::Error when no run matches (naming the labels there are).
Session select_runs(const Session& s, const std::string& pattern);

// Throws lockscope::Error with one sentence when a session cannot be
// compared (no runs, no intervals) or alpha is outside (0, 0.5].
DiffResult diff_sessions(const Session& a, const Session& b, const DiffOptions& options);

std::string format_diff_text(const DiffResult& diff);  // fits 100 columns
std::string format_diff_json(const DiffResult& diff);

}  // namespace lockscope
