// Two-sample tests for `lockscope diff`: is B different from A by more than
// noise? Every result carries its method, sample sizes and, when the data
// cannot support a verdict, the reason, so callers never have to guess.
//
// Conventions: the difference is B − A; the relative change is B/A − 1.
// Confidence intervals are two-sided at level 1 − alpha.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace lockscope::stats {

struct Summary {
    size_t n = 0;
    double mean = 0;
    double variance = 0;  // unbiased (n − 1); 0 when n < 2
};
Summary summarize(std::span<const double> xs);

double median(std::vector<double> xs);  // NaN when empty

// WelchLog: Welch's t on the log of each side's value (ratio_test).
enum class Method { None, Welch, MannWhitney, MannWhitneyExact, WelchLog };
// "welch-t", "mann-whitney", "mann-whitney-exact", "welch-t-log", "none"
const char* method_name(Method m);

struct TestResult {
    Method method = Method::None;
    bool enough_data = false;
    std::string reason;  // why enough_data is false
    size_t n_a = 0, n_b = 0;
    double center_a = 0, center_b = 0;  // means (Welch) or medians (Mann-Whitney)
    double difference = 0;              // center_b − center_a (Mann-Whitney: Hodges-Lehmann shift)
    double diff_low = 0, diff_high = 0;
    double relative = 0;               // center_b / center_a − 1; NaN when center_a is 0
    double rel_low = 0, rel_high = 0;  // NaN when unbounded or undefined
    double p_value = 1;                // two-sided
    double statistic = 0;              // t (Welch) or U counted for B (Mann-Whitney)
    double df = 0;                     // Welch–Satterthwaite degrees of freedom
};

// Welch's unequal-variance t-test. The relative-change interval is Fieller's
// (exact under normality, and it honestly becomes unbounded when A's mean is
// not clearly away from zero, where the delta method would print a finite,
// wrong interval); it excludes 0 exactly when the t-test rejects.
// Needs at least 3 samples per side: with 2, one outlier decides.
TestResult welch_test(std::span<const double> a, std::span<const double> b, double alpha);

// Mann-Whitney U (Wilcoxon rank-sum). Exact null distribution when there
// are no ties and both sides have at most kExactMaxN samples, else the
// normal approximation with tie and continuity corrections.
// `variance_inflation` ≥ 1 widens the null variance for serially
// correlated samples (see ar1_variance_inflation). The CI is for the
// Hodges–Lehmann shift (median of pairwise differences B − A) from the
// normal approximation. "Not enough data" when even the most extreme
// ranking could not reach alpha.
inline constexpr size_t kExactMaxN = 25;
TestResult mann_whitney(std::span<const double> a, std::span<const double> b, double alpha,
                        double variance_inflation = 1.0);

// The k-th smallest (0-based) of the m·n differences b[j] − a[i], for a and
// b sorted ascending; NaN when k ≥ m·n. O((m + n)·log) time, O(m + n) memory:
// listing the differences of a long session's interval samples (thousands a
// side) would take gigabytes.
double kth_pairwise_difference(std::span<const double> a, std::span<const double> b, uint64_t k);

// Lag-1 autocorrelation pooled over several series (each centred on its own
// mean), e.g. the intervals of each run. 0 when it cannot be estimated.
double lag1_autocorrelation(const std::vector<std::vector<double>>& series);

// (1 + ρ) / (1 − ρ): how much an AR(1) process with lag-1 correlation ρ
// inflates the variance of a sum. ρ ≤ 0 gives 1 (never claim more
// information than independent samples); ρ is capped at 0.9.
double ar1_variance_inflation(double rho);

// Percentile bootstrap CI of mean(B) − mean(A), resampling each side
// independently with a fixed seed so reports are reproducible.
struct Interval {
    double low = 0, high = 0;
};
Interval bootstrap_mean_difference(std::span<const double> a, std::span<const double> b, double alpha,
                                   size_t resamples = 2000, uint64_t seed = 0x10c5c09e);

// Two binomial proportions, k_a of n_a against k_b of n_b (say, the share of
// a lock's sampled stacks that show one call path, in two sessions).
// The interval of p_b − p_a is Newcombe's hybrid score interval (his method
// 10: Wilson intervals combined), which stays inside [−1, 1] and is honest
// when a share is 0, where the Wald interval collapses; the p-value is the
// pooled two-proportion z-test. Needs n_a, n_b > 0.
struct ProportionDifference {
    double p_a = 0, p_b = 0;
    double difference = 0;  // p_b − p_a
    double low = 0, high = 0;
    double p_value = 1;  // two-sided
};
ProportionDifference proportion_difference(uint64_t k_a, uint64_t n_a, uint64_t k_b, uint64_t n_b, double alpha);

// A side's samples of a ratio metric (contentions per second, failures per
// attempt, ...): each sample's (a run's, or a host's) numerator over its
// denominator, for the samples whose denominator is positive, and the value
// a report shows, the sum of their numerators over the sum of their
// denominators.
struct RatioSamples {
    std::vector<double> values;
    std::vector<double> denominators;  // of each value
    double pooled = 0;                 // Σ num / Σ den; NaN when no sample has a denominator
};
RatioSamples ratio_samples(std::span<const double> num, std::span<const double> den);

// Welch's t-test between two sides' samples, each sample counting once (a
// run that outweighs the others in the sums, one long sleep of another
// program, moves the pooled value but is one sample here), with at least
// `min_samples` (3 at the least) a side. The centers are the pooled values, and the
// difference and relative change are theirs.
//
// A rate or time (fraction false) is tested on the log scale, on
// log(value + c) with c = kLogOffset times the pooled values' geometric mean
// (kLogOffset² times the larger when one of them is 0): the
// multiplicative, heavy-tailed spread between runs that rates and times
// show becomes closer to symmetric, as the test wants, and the interval is
// a ratio, so B's value is never shown below 0 (the relative change never
// below −100%); c keeps a side at or near 0 (a lock that barely contended
// there) testable, where a log alone would be −∞, and is small beside
// either value. The interval is where B's value lies with
// A's held fixed, as a difference, and relative to A's value where that is
// clearly away from 0 (the standard error of its samples' mean at most a
// third of it; NaN otherwise: a ratio to a value that may be near 0 would
// claim too much). It is widened, where needed, to hold the pooled change.
//
// A fraction is tested as a difference of the samples' values, its
// interval cut to what B's value can take, [0, 1] (so the relative
// interval stays in [−100%, 1/A − 100%]). A sample whose denominator is
// under kFewTrials of its side's median is left out of a fraction's test
// (it still counts in the pooled value): a run with one spin attempt, which
// failed, is at 100% and would swamp runs of thousands. A rate or time keeps
// every sample: a run with a tenth of the others' operations is slow, not
// imprecise.
inline constexpr double kLogOffset = 0.01;
inline constexpr double kFewTrials = 0.01;
TestResult ratio_test(const RatioSamples& a, const RatioSamples& b, double alpha, bool fraction,
                      size_t min_samples = 3);

// Holm–Bonferroni adjusted p-values (same order as the input); controls the
// chance of any false positive across a family of comparisons.
std::vector<double> holm_adjust(const std::vector<double>& p);

// Holm's weighted procedure (Holm 1979): hypothesis i gets a share w_i of
// alpha; the step-down order is by p_i / w_i, and a rejected hypothesis hands
// its share on to the rest. It controls the family-wise error at alpha for
// any dependence between the tests, as Holm's does; equal weights give
// Holm's adjustment. Weights must be positive (their scale does not matter).
std::vector<double> weighted_holm_adjust(const std::vector<double>& p, const std::vector<double>& weights);

}  // namespace lockscope::stats
