// Verdicts of `lockscope diff`, shared by the session diff and the fleet
// diff (hosts as replicates): a metric's test result becomes better, worse,
// higher, lower, no significant difference or not enough data, after Holm's
// adjustment within its family of comparisons.
#pragma once

#include <vector>

#include "core/analysis/diff.h"

namespace lockscope {

// The verdict of one compared metric at alpha, from its adjusted p-value.
Verdict judge(const MetricDiff& m, double alpha);

// Holm-adjusts the p-values of the metrics that could be tested, together,
// and sets every metric's verdict at alpha.
void adjust_family(std::vector<MetricDiff*> family, double alpha);

}  // namespace lockscope
