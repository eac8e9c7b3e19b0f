// `lockscope diff`: did B (kernel, config, patch or lock policy) change lock
// behaviour compared with A by more than noise? Metadata differences, then
// totals and every lock row report shows, matched by name+kind+mode, each
// with both values (as report computes them), the relative change, its
// confidence interval, a p-value and a verdict. The runs are the samples;
// every p-value of one diff is adjusted in one family (diff_verdicts.h), so
// a verdict can gate CI. Rendering is in diff_format.cpp; the GUI's diff
// page and the fleet diff use diff_sessions too.
#pragma once

#include "core/analysis/diff_result.h"
#include "core/model.h"

#include <string>

namespace lockscope {

// Exit code of `diff --fail-on` when the gate trips (0/1/2 are core/error.h's).
inline constexpr int kExitDiffGate = 3;

// The runs of `s` whose label matches the shell pattern `pattern` (fnmatch),
// with their intervals, lock rows and stacks; locks never seen in those runs
// are dropped. So one session of interleaved bench variants can be diffed
// against itself: `diff S S --runs-a 'rwsem@4.7-hacked *' --runs-b 'rwsem@4.2 *'`.
// Throws lockscope::Error when no run matches (naming the labels there are).
Session select_runs(const Session& s, const std::string& pattern);

// Throws lockscope::Error with one sentence when a session cannot be
// compared (no runs, no intervals), alpha is outside (0, 0.5] or min_effect
// outside [0, 1).
DiffResult diff_sessions(const Session& a, const Session& b, const DiffOptions& options);

std::string format_diff_text(const DiffResult& diff);  // fits 100 columns
std::string format_diff_json(const DiffResult& diff);

}  // namespace lockscope
