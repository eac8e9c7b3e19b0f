// The PromQL of `lockscope diff --prometheus`, as text: what each query asks
// and what it costs is documented in docs/fleet-diff.md, and each builder
// here is one of those queries.
//
// A host is a scrape target, (instance, job). A host is in a group when
// every sample of its lockscope_build_info in the window matched the
// group's selector: a host that rebooted into another kernel inside the
// window ran both, and is left out of both groups. Per-lock series carry no
// kernel label; the groups reach them through a join on (instance, job).
#pragma once

#include <string>
#include <vector>

namespace lockscope::fleet {

// "3600s": a window in seconds as a PromQL range.
std::string promql_range(double window_s);

// `kernel="6.1.0-47-amd64"` or `{kernel="…"}` as `{kernel="…"}`; throws
// UsageError for an empty selector or unbalanced braces.
std::string build_info_selector(const std::string& selector);

// `LABEL="value"`, the value escaped as PromQL wants.
std::string label_matcher(const std::string& label, const std::string& value);

// The hosts of a group: (instance, job) → 1.
std::string hosts_expr(const std::string& selector, const std::string& range);

// The hosts of a group with the build-info labels a report shows.
std::string host_info_query(const std::string& selector, const std::string& range);

// How many hosts matched the selector at some point in the window but not
// throughout (they are left out).
std::string left_out_query(const std::string& selector, const std::string& range);

// Hosts per value of `label` (for --by): value → count.
std::string group_sizes_query(const std::string& label, const std::string& range);

// The `top` (lock, kind) pairs with the most wait over both groups' hosts.
std::string top_locks_query(const std::string& both, const std::string& range, size_t top);

// A regular expression that matches exactly these lock names.
std::string names_regex(const std::vector<std::string>& names);

// Per host, the increase of one counter (lockscope_<counter>) over the
// window: per lock for the locks whose name `lock_regex` matches, and
// summed over every lock as lock="(all)" (the rest is the difference).
std::string lock_counter_query(const std::string& counter, const std::string& both, const std::string& lock_regex,
                               const std::string& range);

// Per host, the increase of the CPU idle, CPU and lost counters (label "counter").
std::string host_counter_query(const std::string& both, const std::string& range);

inline constexpr const char* kRestLock = "(rest)";
inline constexpr const char* kAllLocks = "(all)";

}  // namespace lockscope::fleet
