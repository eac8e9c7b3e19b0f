// `lockscope diff --prometheus URL --a SELECTOR --b SELECTOR`: two groups of
// hosts that Prometheus scrapes (say, two kernel releases in a rollout),
// compared with the hosts as replicates and the session diff's statistics.
// Each host's window becomes one run of a session per group, so the verdicts,
// intervals, Holm control and output are diff_sessions' own.
#pragma once

#include <atomic>
#include <cstddef>
#include <string>
#include <vector>

#include "core/analysis/diff.h"

namespace lockscope::fleet {

struct FleetOptions {
    std::string url;                     // Prometheus (or Thanos, Mimir…) query API
    std::string selector_a, selector_b;  // label matchers on lockscope_build_info
    std::string by;                      // instead: the two largest groups by this label
    double window_s = 3600;
    double end = 0;   // Unix seconds
    size_t top = 20;  // (lock, kind) pairs compared one by one; the rest summed
    double alpha = 0.05;
    double min_effect = 0.05;  // DiffOptions::min_effect
    // Set from another thread to stop: the query under way is abandoned and
    // diff_fleet throws lockscope::Error("cancelled").
    const std::atomic<bool>* cancelled = nullptr;
};

// A fleet comparison as a front end is given it, as text in the spellings of
// `lockscope diff --prometheus` (--a, --b, --by, --window, --end, --top).
struct FleetRequest {
    std::string url, a, b, by;
    std::string window = "1h", end = "now";
    size_t top = 20;
    double alpha = 0.05;
    double min_effect = 0.05;
};

// Checks the combination of options as `lockscope diff --prometheus` does
// and parses the window and end; throws UsageError naming the option.
// now_s: what --end now means.
FleetOptions fleet_options(const FleetRequest& request, double now_s);

// Throws lockscope::Error when the server cannot answer or a group has no
// host, UsageError for a malformed selector.
DiffResult diff_fleet(const FleetOptions& options);

// "90s", "15m", "1h", "2d", "1w" as seconds; throws UsageError otherwise.
double parse_window(const std::string& text);
// "now", Unix seconds, or RFC 3339 UTC ("2026-12-01T14:00:00Z"); now_s for "now".
double parse_end(const std::string& text, double now_s);

}  // namespace lockscope::fleet
