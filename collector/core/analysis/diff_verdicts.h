// Verdicts of `lockscope diff`, shared by the session diff and the fleet
// diff (hosts as replicates). Everything one diff can call is one family:
// the totals, every lock row's metrics and every call path, their p-values
// adjusted together by Holm's weighted procedure, so an A/A diff calls
// anything at all with a chance of at most alpha, however the tests depend
// on each other. The call paths, which can be dozens, share a quarter of
// alpha and the metrics the rest, so that many paths do not drown the
// totals. Then a change smaller than the minimum effect is not called,
// whatever its p-value.
#pragma once

#include <vector>

#include "core/analysis/diff_result.h"

namespace lockscope {

inline constexpr double kCallPathsShare = 0.25;

// The verdict of one compared metric, from its adjusted p-value.
Verdict judge(const MetricDiff& m, double alpha, double min_effect);

// Adjusts every tested metric of d.totals and d.locks and every path of
// `paths` in one family, sets the metrics' verdicts at d.alpha and
// d.min_effect, and keeps in d.stack_shifts the paths that moved, largest
// move first.
void decide_verdicts(DiffResult& d, std::vector<StackShift> paths);

}  // namespace lockscope
