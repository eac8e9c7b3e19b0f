// The statistics behind `lockscope diff`, checked against answers known
// independently: published examples, brute-force enumeration, and Monte
// Carlo rates with fixed seeds. Tolerances are 3 standard errors of the
// simulated rate, sqrt(p(1 − p) / trials).
#include "core/analysis/stats.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

using namespace lockscope::stats;

namespace {

constexpr int kTrials = 2000;
constexpr double kAlpha = 0.05;

double three_se(double p)
{
    return 3 * std::sqrt(p * (1 - p) / kTrials);
}

std::vector<double> draw_normal(std::mt19937_64& rng, size_t n, double mean, double sd)
{
    std::normal_distribution<double> d(mean, sd);
    std::vector<double> xs(n);
    for (double& x : xs)
        x = d(rng);
    return xs;
}

// Exact two-sided Mann-Whitney p by enumerating every assignment of the
// pooled values to the sides: independent of the recursion in stats.cpp.
double brute_force_p(const std::vector<double>& a, const std::vector<double>& b)
{
    std::vector<double> pooled(a);
    pooled.insert(pooled.end(), b.begin(), b.end());
    auto u_of = [&](const std::vector<bool>& in_b) {
        double u = 0;
        for (size_t i = 0; i < pooled.size(); ++i)
            for (size_t j = 0; j < pooled.size(); ++j)
                if (!in_b[i] && in_b[j])
                    u += pooled[j] > pooled[i] ? 1 : pooled[j] == pooled[i] ? 0.5 : 0;
        return u;
    };
    std::vector<bool> actual(pooled.size(), false);
    std::fill(actual.begin() + long(a.size()), actual.end(), true);
    const double observed = u_of(actual);
    std::vector<bool> mask(actual);
    std::sort(mask.begin(), mask.end());
    double total = 0, low = 0, high = 0;
    do {
        const double u = u_of(mask);
        ++total;
        low += u <= observed;
        high += u >= observed;
    } while (std::next_permutation(mask.begin(), mask.end()));
    return std::min(1.0, 2 * std::min(low, high) / total);
}

long peak_rss_kib()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

}  // namespace

TEST(WelchTest, MatchesThePublishedExample)
{
    // Wikipedia, "Welch's t-test", example 1: t = 2.46, df = 24.99, p = 0.021
    // (p here from numerical integration of the t density, to 6 digits).
    const std::vector<double> a = {27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1,
                                   21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4};
    const std::vector<double> b = {27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0,
                                   24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4};
    const TestResult r = welch_test(a, b, kAlpha);
    ASSERT_TRUE(r.enough_data);
    EXPECT_EQ(r.method, Method::Welch);
    EXPECT_NEAR(r.statistic, 2.455356, 1e-5);
    EXPECT_NEAR(r.df, 24.988529, 1e-5);
    EXPECT_NEAR(r.p_value, 0.021378, 1e-5);
    EXPECT_NEAR(r.difference, 22.986667 - 20.82, 1e-5);
    EXPECT_LT(r.diff_low, r.difference);
    EXPECT_GT(r.diff_low, 0);  // significant at 0.05, so the CI excludes 0 ...
    EXPECT_GT(r.rel_low, 0);   // ... and so does Fieller's, which inverts the same test
    EXPECT_NEAR(r.relative, 22.986667 / 20.82 - 1, 1e-6);
}

TEST(WelchTest, OneOrTwoRunsAreNeverAVerdict)
{
    const std::vector<double> one = {100}, two = {100, 101}, many = {200, 201, 202, 199, 200};
    for (const auto* a : {&one, &two})
        for (const auto* b : {&one, &two, &many}) {
            const TestResult r = welch_test(*a, *b, kAlpha);
            EXPECT_FALSE(r.enough_data);
            EXPECT_NE(r.reason.find("at least 3"), std::string::npos) << r.reason;
        }
}

TEST(WelchTest, FalsePositiveRateIsAlphaForSameDistribution)
{
    std::mt19937_64 rng(42);
    int rejected = 0;
    for (int i = 0; i < kTrials; ++i) {
        // Unequal sizes, equal means: the case Welch exists for.
        const auto a = draw_normal(rng, 5, 100, 10), b = draw_normal(rng, 8, 100, 10);
        rejected += welch_test(a, b, kAlpha).p_value < kAlpha;
    }
    EXPECT_NEAR(double(rejected) / kTrials, kAlpha, three_se(kAlpha));
}

TEST(WelchTest, IntervalsCoverAKnownShiftAtTheNominalRate)
{
    std::mt19937_64 rng(7);
    int diff_covered = 0, ratio_covered = 0;
    for (int i = 0; i < kTrials; ++i) {
        // Unequal variances and sizes; true difference 7, true relative change +7%.
        const auto a = draw_normal(rng, 6, 100, 4), b = draw_normal(rng, 10, 107, 12);
        const TestResult r = welch_test(a, b, kAlpha);
        diff_covered += r.diff_low <= 7 && 7 <= r.diff_high;
        ratio_covered += r.rel_low <= 0.07 && 0.07 <= r.rel_high;
    }
    EXPECT_NEAR(double(diff_covered) / kTrials, 1 - kAlpha, three_se(kAlpha));
    EXPECT_NEAR(double(ratio_covered) / kTrials, 1 - kAlpha, three_se(kAlpha));
}

TEST(WelchTest, RelativeIntervalIsUnboundedWhenBaselineIsNearZero)
{
    const TestResult r = welch_test(std::vector<double>{-1, 1, 0.5, -0.5}, std::vector<double>{3, 4, 5, 4}, kAlpha);
    ASSERT_TRUE(r.enough_data);
    EXPECT_TRUE(std::isnan(r.rel_low) && std::isnan(r.rel_high));
}

TEST(MannWhitneyTest, TortoiseAndHare)
{
    // Wikipedia, "Mann–Whitney U test": finishing order T H H H H H T T T T T H,
    // U = 11 for the hares; exact two-sided p = 286/924 by enumeration.
    const std::vector<double> tortoises = {1, 7, 8, 9, 10, 11}, hares = {2, 3, 4, 5, 6, 12};
    const TestResult r = mann_whitney(tortoises, hares, kAlpha);
    ASSERT_TRUE(r.enough_data);
    EXPECT_EQ(r.method, Method::MannWhitneyExact);
    EXPECT_DOUBLE_EQ(r.statistic, 11);
    EXPECT_NEAR(r.p_value, 286.0 / 924.0, 1e-12);
}

TEST(MannWhitneyTest, CompletelySeparatedSamples)
{
    // The most extreme ranking: p = 2 / C(m + n, m).
    EXPECT_NEAR(mann_whitney(std::vector<double>{1, 2, 3, 4}, std::vector<double>{5, 6, 7, 8}, kAlpha).p_value,
                2.0 / 70, 1e-12);
    EXPECT_NEAR(mann_whitney(std::vector<double>{6, 7, 8, 9, 10}, std::vector<double>{1, 2, 3, 4, 5}, kAlpha).p_value,
                2.0 / 252, 1e-12);
}

TEST(MannWhitneyTest, ExactDistributionMatchesEnumeration)
{
    std::mt19937_64 rng(3);
    for (auto [m, n] : {std::pair{3, 5}, {4, 4}, {5, 7}, {6, 6}}) {
        const auto a = draw_normal(rng, size_t(m), 0, 1), b = draw_normal(rng, size_t(n), 0.8, 1);
        const TestResult r = mann_whitney(a, b, 0.5);  // a loose alpha so 3-vs-5 is testable
        ASSERT_TRUE(r.enough_data) << m << "x" << n;
        EXPECT_NEAR(r.p_value, brute_force_p(a, b), 1e-9) << m << "x" << n;
    }
}

TEST(MannWhitneyTest, NormalApproximationWithTies)
{
    // Expected p from the textbook formula: z = (|U − mn/2| − ½) / σ with
    // σ² = mn/12 · ((N + 1) − Σ(t³ − t) / (N(N − 1))), computed separately.
    const std::vector<double> a = {1, 2, 2, 3, 3, 3, 4, 4, 5, 5, 6, 7, 7, 8, 9};
    const std::vector<double> b = {3, 4, 5, 5, 6, 6, 7, 8, 8, 9, 9, 10, 10, 11, 12, 12};
    const TestResult r = mann_whitney(a, b, kAlpha);
    EXPECT_EQ(r.method, Method::MannWhitney);
    EXPECT_DOUBLE_EQ(r.statistic, 193.5);
    EXPECT_NEAR(r.p_value, 0.0037534907, 1e-8);
}

TEST(MannWhitneyTest, TinySamplesAreNotEnoughData)
{
    // 3 vs 3 can at best reach p = 0.1: no verdict at 0.05, whatever the data.
    const TestResult r = mann_whitney(std::vector<double>{1, 2, 3}, std::vector<double>{100, 200, 300}, kAlpha);
    EXPECT_FALSE(r.enough_data);
    EXPECT_FALSE(r.reason.empty());
    EXPECT_FALSE(mann_whitney(std::vector<double>{1}, std::vector<double>{5, 6}, kAlpha).enough_data);
    EXPECT_FALSE(mann_whitney(std::vector<double>{}, std::vector<double>{5, 6}, kAlpha).enough_data);
}

TEST(MannWhitneyTest, FalsePositiveRateIsAtMostAlpha)
{
    std::mt19937_64 rng(11);
    int exact = 0, approx = 0, tied = 0;
    std::poisson_distribution<int> counts(3);
    for (int i = 0; i < kTrials; ++i) {
        exact += mann_whitney(draw_normal(rng, 8, 5, 1), draw_normal(rng, 9, 5, 1), kAlpha).p_value < kAlpha;
        approx += mann_whitney(draw_normal(rng, 40, 5, 1), draw_normal(rng, 30, 5, 1), kAlpha).p_value < kAlpha;
        std::vector<double> a(30), b(30);  // heavy ties: small counts
        for (double& x : a)
            x = counts(rng);
        for (double& x : b)
            x = counts(rng);
        tied += mann_whitney(a, b, kAlpha).p_value < kAlpha;
    }
    // The exact test is discrete, hence conservative; the others ≈ alpha.
    EXPECT_LE(double(exact) / kTrials, kAlpha + three_se(kAlpha));
    EXPECT_GE(double(exact) / kTrials, kAlpha / 2);
    EXPECT_NEAR(double(approx) / kTrials, kAlpha, three_se(kAlpha));
    EXPECT_NEAR(double(tied) / kTrials, kAlpha, three_se(kAlpha));
}

TEST(MannWhitneyTest, ShiftIntervalCoversAKnownShift)
{
    std::mt19937_64 rng(5);
    int covered = 0;
    for (int i = 0; i < kTrials; ++i) {
        const auto a = draw_normal(rng, 20, 50, 5), b = draw_normal(rng, 25, 53, 5);
        const TestResult r = mann_whitney(a, b, kAlpha);
        covered += r.diff_low <= 3 && 3 <= r.diff_high;
    }
    EXPECT_NEAR(double(covered) / kTrials, 1 - kAlpha, three_se(kAlpha));
}

TEST(MannWhitneyTest, PairwiseDifferenceSelectionMatchesTheSortedList)
{
    // Every order statistic, against the explicit sorted list, on data with
    // many ties (small integers), with none (normal), and of unequal sizes.
    std::mt19937_64 rng(41);
    std::uniform_int_distribution<int> small(0, 6);
    for (int trial = 0; trial < 40; ++trial) {
        const size_t m = 1 + size_t(trial % 7) * 9, n = 1 + size_t(trial % 5) * 13;
        std::vector<double> a(m), b(n);
        if (trial % 2) {
            a = draw_normal(rng, m, 0, 1e6);
            b = draw_normal(rng, n, 3e5, 1e6);
        } else {
            for (double& x : a)
                x = small(rng);
            for (double& x : b)
                x = small(rng) + 1;
        }
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        std::vector<double> all;
        for (double y : b)
            for (double x : a)
                all.push_back(y - x);
        std::sort(all.begin(), all.end());
        for (uint64_t k = 0; k < all.size(); ++k)
            ASSERT_EQ(kth_pairwise_difference(a, b, k), all[k]) << "trial " << trial << " k " << k;
        EXPECT_TRUE(std::isnan(kth_pairwise_difference(a, b, all.size())));
    }
}

TEST(MannWhitneyTest, LongSessionsNeedNoQuadraticMemory)
{
    // Three hours of 1 s intervals a side: 1.2e8 pairwise differences, which
    // as a list took a gigabyte. The shift of 2 must still come out.
    std::mt19937_64 rng(43);
    const std::vector<double> a = draw_normal(rng, 10800, 100, 5), b = draw_normal(rng, 10800, 102, 5);
    const long peak_before_kib = peak_rss_kib();
    const TestResult r = mann_whitney(a, b, kAlpha);
    EXPECT_LT(peak_rss_kib() - peak_before_kib, 100 * 1024) << "the test's peak memory grew by over 100 MiB";
    ASSERT_TRUE(r.enough_data);
    EXPECT_NEAR(r.difference, 2.0, 0.3);
    EXPECT_LT(r.diff_low, r.difference);
    EXPECT_GT(r.diff_high, r.difference);
    EXPECT_LT(r.p_value, 1e-6);
}

TEST(MannWhitneyTest, AutocorrelationInflationKeepsFalsePositivesNearAlpha)
{
    // AR(1) samples with ρ = 0.6: treated as independent the rank test
    // rejects far too often; widened by (1 + ρ̂)/(1 − ρ̂) it should not.
    std::mt19937_64 rng(13);
    std::normal_distribution<double> noise(0, 1);
    auto ar1 = [&](size_t n) {
        std::vector<double> xs(n);
        double x = noise(rng) / std::sqrt(1 - 0.36);
        for (double& v : xs)
            v = x = 0.6 * x + noise(rng);
        return xs;
    };
    int naive = 0, widened = 0;
    for (int i = 0; i < kTrials; ++i) {
        const auto a = ar1(60), b = ar1(60);
        naive += mann_whitney(a, b, kAlpha).p_value < kAlpha;
        const double rho = lag1_autocorrelation({a, b});
        widened += mann_whitney(a, b, kAlpha, ar1_variance_inflation(rho)).p_value < kAlpha;
    }
    EXPECT_GT(double(naive) / kTrials, 3 * kAlpha);
    EXPECT_LE(double(widened) / kTrials, 2 * kAlpha);  // ρ̂ is biased low in short series
}

TEST(Stats, BootstrapIsReproducibleAndCoversTheDifference)
{
    std::mt19937_64 rng(17);
    const auto a = draw_normal(rng, 30, 10, 1), b = draw_normal(rng, 30, 12, 1);
    const Interval first = bootstrap_mean_difference(a, b, kAlpha), again = bootstrap_mean_difference(a, b, kAlpha);
    EXPECT_EQ(first.low, again.low);
    EXPECT_EQ(first.high, again.high);
    EXPECT_LT(first.low, 2.0);
    EXPECT_GT(first.high, 2.0);
}

TEST(Stats, ProportionDifferenceMatchesNewcombesWorkedExamples)
{
    // Newcombe (1998), "Interval estimation for the difference between
    // independent proportions", method 10, examples (a), (b), (d), (f):
    // p_b − p_a with B = 56/70, A = 48/80 and so on.
    const struct {
        uint64_t k_b, n_b, k_a, n_a;
        double low, high;
    } cases[] = {{56, 70, 48, 80, 0.0524, 0.3339},
                 {9, 10, 3, 10, 0.1705, 0.8090},
                 {5, 56, 0, 29, -0.0381, 0.1926},
                 {0, 10, 0, 10, -0.2775, 0.2775}};
    for (const auto& c : cases) {
        SCOPED_TRACE(std::to_string(c.k_b) + "/" + std::to_string(c.n_b) + " - " + std::to_string(c.k_a) + "/" +
                     std::to_string(c.n_a));
        const ProportionDifference d = proportion_difference(c.k_a, c.n_a, c.k_b, c.n_b, 0.05);
        EXPECT_NEAR(d.difference, double(c.k_b) / double(c.n_b) - double(c.k_a) / double(c.n_a), 1e-12);
        EXPECT_NEAR(d.low, c.low, 5e-4);
        EXPECT_NEAR(d.high, c.high, 5e-4);
    }
    // The pooled z-test: 56/70 vs 48/80 gives z = 2.650 (p = 0.0080); equal shares give p = 1.
    EXPECT_NEAR(proportion_difference(48, 80, 56, 70, 0.05).p_value, 0.0080, 1e-4);
    EXPECT_DOUBLE_EQ(proportion_difference(0, 10, 0, 20, 0.05).p_value, 1.0);
    EXPECT_DOUBLE_EQ(proportion_difference(5, 10, 10, 20, 0.05).p_value, 1.0);
    EXPECT_TRUE(std::isnan(proportion_difference(1, 0, 1, 2, 0.05).difference)) << "no samples: no estimate";
}

TEST(Stats, HolmAdjustment)
{
    // Textbook: p = (0.01, 0.04, 0.03, 0.005) → (0.03, 0.06, 0.06, 0.02).
    const std::vector<double> adjusted = holm_adjust({0.01, 0.04, 0.03, 0.005});
    const std::vector<double> expected = {0.03, 0.06, 0.06, 0.02};
    for (size_t i = 0; i < expected.size(); ++i)
        EXPECT_NEAR(adjusted[i], expected[i], 1e-12) << i;
}

TEST(Stats, WeightedHolmWithEqualWeightsIsHolm)
{
    const std::vector<double> p = {0.01, 0.04, 0.03, 0.005};
    const std::vector<double> holm = holm_adjust(p), weighted = weighted_holm_adjust(p, {2, 2, 2, 2});
    for (size_t i = 0; i < p.size(); ++i)
        EXPECT_NEAR(weighted[i], holm[i], 1e-12) << i;
}

TEST(Stats, WeightedHolmStepsDownByPOverWeight)
{
    // Worked by hand: the order is by p/w; each adjusted p is p times the
    // weight left at its step over its own weight, never below the one before.
    const std::vector<double> a = weighted_holm_adjust({0.04, 0.001}, {0.9, 0.1});
    EXPECT_NEAR(a[1], 0.001 * 1.0 / 0.1, 1e-12);
    EXPECT_NEAR(a[0], 0.04 * 0.9 / 0.9, 1e-12);
    const std::vector<double> b = weighted_holm_adjust({0.02, 0.01}, {0.25, 0.75});
    EXPECT_NEAR(b[1], 0.01 / 0.75, 1e-12);
    EXPECT_NEAR(b[0], 0.02, 1e-12);
}

TEST(Stats, WeightedHolmKeepsTheFamilyWiseErrorAtAlpha)
{
    // 20 metrics sharing three quarters and 40 call paths a quarter, all
    // true null hypotheses: any false rejection at most alpha of the time.
    std::mt19937_64 rng(6);
    std::uniform_real_distribution<double> uniform(0, 1);
    std::vector<double> w;
    for (int i = 0; i < 60; ++i)
        w.push_back(i < 20 ? 0.75 / 20 : 0.25 / 40);
    int any = 0;
    for (int t = 0; t < kTrials; ++t) {
        std::vector<double> p;
        for (size_t i = 0; i < w.size(); ++i)
            p.push_back(uniform(rng));
        const std::vector<double> adjusted = weighted_holm_adjust(p, w);
        any += *std::min_element(adjusted.begin(), adjusted.end()) < kAlpha;
    }
    EXPECT_LE(double(any) / kTrials, kAlpha + three_se(kAlpha));
}

TEST(Stats, HolmKeepsTheFamilyWiseErrorAtAlpha)
{
    // 40 true null hypotheses, as many as a diff of a few locks tests: any
    // false rejection at most alpha of the time.
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> uniform(0, 1);
    int any = 0;
    for (int t = 0; t < kTrials; ++t) {
        std::vector<double> p(40);
        for (double& x : p)
            x = uniform(rng);
        const std::vector<double> adjusted = holm_adjust(p);
        any += *std::min_element(adjusted.begin(), adjusted.end()) < kAlpha;
    }
    EXPECT_LE(double(any) / kTrials, kAlpha + three_se(kAlpha));
}

TEST(RatioTest, EachSampleIsItsOwnRatioAndTheValueIsTheRatioOfSums)
{
    const RatioSamples r = ratio_samples(std::vector<double>{1, 3, 7, 9}, std::vector<double>{1, 1, 0, 2});
    EXPECT_EQ(r.values, (std::vector<double>{1, 3, 4.5})) << "a sample without a denominator has no value";
    EXPECT_DOUBLE_EQ(r.pooled, 13.0 / 4.0);
    const RatioSamples none = ratio_samples(std::vector<double>{1}, std::vector<double>{0});
    EXPECT_TRUE(none.values.empty());
    EXPECT_TRUE(std::isnan(none.pooled));
}

TEST(RatioTest, FewerThanThreeSamplesAreNotEnoughAndSaySo)
{
    const RatioSamples two = ratio_samples(std::vector<double>{1, 3}, std::vector<double>{1, 1});
    const RatioSamples four = ratio_samples(std::vector<double>{1, 2, 3, 4}, std::vector<double>{1, 1, 1, 1});
    const TestResult r = ratio_test(two, four, kAlpha, false);
    EXPECT_FALSE(r.enough_data);
    EXPECT_NE(r.reason.find("at least 3"), std::string::npos) << r.reason;
    EXPECT_NE(r.reason.find("A has 2, B has 4"), std::string::npos) << r.reason;
    EXPECT_DOUBLE_EQ(r.center_a, 2.0) << "the values are shown all the same";
}

namespace {

// Per-run (count, seconds) of a heavy-tailed rate: runs of unequal length,
// the rate's log a scaled Student t with 3 degrees of freedom.
RatioSamples heavy_rate(std::mt19937_64& rng, size_t runs, double rate, double sigma)
{
    std::student_t_distribution<double> t(3);
    std::uniform_real_distribution<double> seconds(0.8, 1.2);
    std::vector<double> num, den;
    for (size_t i = 0; i < runs; ++i) {
        den.push_back(seconds(rng));
        num.push_back(den.back() * rate * std::exp(sigma * t(rng) / std::sqrt(3.0)));
    }
    return ratio_samples(num, den);
}

}  // namespace

TEST(RatioTest, HeavyTailedRunsOfOneSystemAreCalledDifferentAtMostAlphaOfTheTime)
{
    std::mt19937_64 rng(11);
    for (size_t runs : {3, 4, 8}) {
        int rejected = 0;
        for (int i = 0; i < kTrials; ++i)
            rejected +=
                ratio_test(heavy_rate(rng, runs, 5000, 0.4), heavy_rate(rng, runs, 5000, 0.4), kAlpha, false).p_value <
                kAlpha;
        EXPECT_LE(double(rejected) / kTrials, kAlpha + three_se(kAlpha)) << runs << " runs a side";
    }
}

TEST(RatioTest, ARateIntervalNeverGoesBelowMinus100Percent)
{
    std::mt19937_64 rng(12);
    int covered = 0;
    for (int i = 0; i < kTrials; ++i) {
        // Noisy runs and a true drop of 90%.
        const TestResult r = ratio_test(heavy_rate(rng, 4, 1000, 0.5), heavy_rate(rng, 4, 100, 0.5), kAlpha, false);
        ASSERT_TRUE(r.enough_data);
        EXPECT_EQ(r.method, Method::WelchLog);
        EXPECT_GE(r.center_a + r.diff_low, 0.0);
        EXPECT_LE(r.diff_low, r.difference) << "the interval holds the change shown";
        EXPECT_GE(r.diff_high, r.difference);
        if (std::isfinite(r.rel_low)) {
            EXPECT_GE(r.rel_low, -1.0);
            EXPECT_NEAR(r.diff_low, r.center_a * r.rel_low, 1e-9 * r.center_a);
        }
        // rel_low and rel_high are left out where A's runs are too spread to
        // take a ratio to; the difference is always there.
        covered += r.diff_low / r.center_a <= -0.9 && -0.9 <= r.diff_high / r.center_a;
    }
    // The interval holds A's value fixed and is of the runs' typical ratio,
    // so its coverage of the ratio of the means is approximate; it must not
    // be far from nominal.
    EXPECT_GE(double(covered) / kTrials, 1 - 2 * kAlpha);
}

// One run that waited 443 ms where the other three waited about 5 ms, all of
// it asleep: that side's pooled asleep share (95%) rests on one run, and a
// share of 0% on the other side is no evidence of a change.
TEST(RatioTest, ARunThatOutweighsTheOthersIsOneRun)
{
    const RatioSamples one = ratio_samples(std::vector<double>{0, 0, 434, 0}, std::vector<double>{5.9, 5.3, 443, 4.4});
    const RatioSamples none = ratio_samples(std::vector<double>{0, 0, 0, 0}, std::vector<double>{33.8, 35.6, 1.5, 6.0});
    const TestResult r = ratio_test(one, none, kAlpha, true);
    ASSERT_TRUE(r.enough_data);
    EXPECT_NEAR(r.difference, -434.0 / 458.6, 1e-3);
    EXPECT_GT(r.p_value, 0.2);
    EXPECT_LE(r.diff_low, r.difference);
}

// Spin failures of two rwsem policies, six interleaved runs each (a real
// session on a loaded machine): in one run of A the lock barely contended,
// and each of its few spin attempts failed (100%). That run says next to nothing
// and is no sample of the test; counted as one, it hid a five-fold change.
TEST(RatioTest, AFractionsRunWithFewTrialsIsNoSample)
{
    const std::vector<double> attempts_a{16000, 150, 6000, 57000, 184000, 180000};
    const std::vector<double> rate_a{0.012, 1.0, 0.027, 0.006, 0.003, 0.003};
    const std::vector<double> attempts_b{5200, 5500, 198000, 211000, 188000, 210000};
    const std::vector<double> rate_b{0.073, 0.033, 0.107, 0.121, 0.078, 0.100};
    std::vector<double> failures_a, failures_b;
    for (size_t i = 0; i < 6; ++i) {
        failures_a.push_back(std::round(attempts_a[i] * rate_a[i]));
        failures_b.push_back(std::round(attempts_b[i] * rate_b[i]));
    }
    const TestResult r =
        ratio_test(ratio_samples(failures_a, attempts_a), ratio_samples(failures_b, attempts_b), kAlpha, true);
    ASSERT_TRUE(r.enough_data);
    EXPECT_EQ(r.n_a, 5u) << "the run of 150 attempts is left out";
    EXPECT_EQ(r.n_b, 6u);
    EXPECT_LT(r.p_value, 0.01);
    EXPECT_GT(r.diff_low, 0.02);
    // A rate keeps every run: a run of few operations is slow, not imprecise.
    const TestResult rate =
        ratio_test(ratio_samples(failures_a, attempts_a), ratio_samples(failures_b, attempts_b), kAlpha, false);
    EXPECT_EQ(rate.n_a, 6u);
}

// A lock that barely contends on one side (0, 0, 1, 0 in four runs): a log
// of its value alone would be −∞ in three runs; with the offset, a 200-fold
// drop is plain.
TEST(RatioTest, ASideNearZeroStaysTestable)
{
    const RatioSamples busy = ratio_samples(std::vector<double>{44, 51, 47, 49}, std::vector<double>{1, 1, 1, 1});
    const RatioSamples quiet = ratio_samples(std::vector<double>{0, 0, 1, 0}, std::vector<double>{1, 1, 1, 1});
    const TestResult r = ratio_test(busy, quiet, kAlpha, false);
    ASSERT_TRUE(r.enough_data);
    EXPECT_LT(r.p_value, 0.005);
    EXPECT_GE(r.rel_low, -1.0);
    EXPECT_LT(r.rel_high, -0.9);
    const TestResult back = ratio_test(quiet, busy, kAlpha, false);
    EXPECT_LT(back.p_value, 0.005);
    EXPECT_TRUE(std::isnan(back.rel_low)) << "A is not clearly away from 0: no ratio to it";
    EXPECT_GE(back.center_a + back.diff_low, 0.0);
}

TEST(RatioTest, AFractionsIntervalKeepsItsValueInsideZeroToOne)
{
    std::mt19937_64 rng(13);
    std::uniform_real_distribution<double> share(0, 1);
    for (int i = 0; i < kTrials; ++i) {
        std::vector<double> ka, na, kb, nb;
        for (int run = 0; run < 3; ++run) {
            na.push_back(100);
            ka.push_back(std::round(100 * share(rng) * 0.1));  // A near 0
            nb.push_back(100);
            kb.push_back(std::round(100 * (0.9 + 0.1 * share(rng))));  // B near 1
        }
        const TestResult r = ratio_test(ratio_samples(ka, na), ratio_samples(kb, nb), kAlpha, true);
        ASSERT_TRUE(r.enough_data);
        EXPECT_EQ(r.method, Method::Welch);
        EXPECT_GE(r.center_a + r.diff_low, -1e-12);
        EXPECT_LE(r.center_a + r.diff_high, 1 + 1e-12);
        if (r.center_a > 0) {
            EXPECT_GE(r.rel_low, -1.0);
            EXPECT_LE(r.rel_high, 1 / r.center_a - 1 + 1e-9);
        }
    }
}
