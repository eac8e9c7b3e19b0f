// What `lockscope diff` compares, inside the analysis: each session as its
// runs (the samples), the lock rows report shows with each run's counters,
// and which lock of A is compared with which lock of B.
#pragma once

#include "core/analysis/diff_result.h"
#include "core/lock_key.h"

#include <map>
#include <set>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lockscope::diff_detail {

// One run of a session (one host, for diff --prometheus).
struct Unit {
    int64_t run = 0;
    double seconds = 0;
    std::optional<double> ops;
    uint64_t idle_ns = 0, cpu_ns = 0;
    LockCounters counters;  // all kernel locks
};

// A sampled call path of a lock: (role, functions innermost first).
using StackPath = std::pair<std::string, std::vector<std::string>>;
// Samples of each path, per unit.
using StackCounts = std::map<StackPath, std::vector<uint64_t>>;

struct Side {
    std::vector<Unit> units;
    // Report's lock rows by their key (with the current class name), with
    // each unit's counters, and the user-space locks, by (name, kind, "").
    std::map<LockKey, std::vector<LockCounters>> locks;
    std::map<LockKey, StackCounts> stacks;  // waiter and holder stacks of those locks
    // Rows whose format keeps no holder split (user locks before format 9):
    // their holder parts read 0, and are no metric.
    std::set<LockKey> no_holder_split;
    size_t runs = 0, intervals = 0;
    bool all_ops = true;  // every interval knows its workload operations
};

// A session's runs as units; its lock rows exactly as report groups them
// (a lock the session knows but that never contended in those runs is no row).
Side collect(const Session& s);

// A lock of A compared with a lock of B.
struct Match {
    LockKey a, b;
    std::string name_b;  // B's name when it differs (a pair), else empty
    std::string kind_b;  // B's kind when it differs (mutex → rtmutex), else empty
};

// The comparisons: every lock by its key in both sessions; each --pair
// (and two bench sessions' one lock each) between its two locks, beside
// their matches by name; and a lock whose kind changed, under its class.
// Warnings and notes go to `d`.
std::vector<Match> match_locks(const Session& a, const Session& b, const Side& sa, const Side& sb,
                               const DiffOptions& options, DiffResult& d);

// Every call path of the matched locks sampled at least kMinStackSamples
// times (its family, waiter or holder) on each side, with its share tested.
std::vector<StackShift> compare_stacks(const Side& sa, const Side& sb, const std::vector<Match>& matches, double alpha);

}  // namespace lockscope::diff_detail
