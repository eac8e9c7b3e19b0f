#include "core/analysis/stats.h"
#include "core/enum_names.h"

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

namespace lockscope::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double normal_upper_quantile(double tail)
{
    return boost::math::quantile(boost::math::complement(boost::math::normal(), tail));
}

double normal_two_sided_p(double z)
{
    return std::min(1.0, 2.0 * boost::math::cdf(boost::math::complement(boost::math::normal(), std::fabs(z))));
}

// Midranks (1-based) of the pooled sample; also returns Σ(t³ − t) over tie groups.
std::vector<double> pooled_ranks(std::span<const double> a, std::span<const double> b, double& tie_term)
{
    const size_t n = a.size() + b.size();
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    auto value = [&](size_t i) { return i < a.size() ? a[i] : b[i - a.size()]; };
    std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return value(x) < value(y); });
    std::vector<double> rank(n);
    tie_term = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && value(order[j + 1]) == value(order[i]))
            ++j;
        const double mid = (double(i) + double(j)) / 2.0 + 1.0;
        for (size_t k = i; k <= j; ++k)
            rank[order[k]] = mid;
        const double t = double(j - i + 1);
        tie_term += t * t * t - t;
        i = j + 1;
    }
    return rank;
}

// Null distribution of U for sample sizes (m, n) without ties:
// P(m,n,u) = m/(m+n)·P(m−1,n,u−n) + n/(m+n)·P(m,n−1,u), in probabilities so
// nothing overflows.
std::vector<double> exact_u_distribution(size_t m, size_t n)
{
    std::vector<std::vector<std::vector<double>>> p(m + 1, std::vector<std::vector<double>>(n + 1));
    for (size_t i = 0; i <= m; ++i)
        for (size_t j = 0; j <= n; ++j) {
            std::vector<double>& cur = p[i][j];
            cur.assign(i * j + 1, 0.0);
            if (i == 0 || j == 0) {
                cur[0] = 1.0;
                continue;
            }
            const double wi = double(i) / double(i + j), wj = double(j) / double(i + j);
            for (size_t u = 0; u <= i * j; ++u) {
                double v = 0;
                if (u >= j && u - j < p[i - 1][j].size())
                    v += wi * p[i - 1][j][u - j];
                if (u < p[i][j - 1].size())
                    v += wj * p[i][j - 1][u];
                cur[u] = v;
            }
        }
    return p[m][n];
}

void fill_relative(TestResult& r, double low, double high)
{
    if (r.center_a == 0) {
        r.relative = r.rel_low = r.rel_high = kNaN;
        return;
    }
    r.relative = r.difference / r.center_a;
    r.rel_low = low;
    r.rel_high = high;
}

}  // namespace

Summary summarize(std::span<const double> xs)
{
    Summary s;
    s.n = xs.size();
    if (xs.empty())
        return s;
    s.mean = std::accumulate(xs.begin(), xs.end(), 0.0) / double(s.n);
    if (s.n > 1) {
        double ss = 0;
        for (double x : xs)
            ss += (x - s.mean) * (x - s.mean);
        s.variance = ss / double(s.n - 1);
    }
    return s;
}

double median(std::vector<double> xs)
{
    if (xs.empty())
        return kNaN;
    const size_t mid = xs.size() / 2;
    std::nth_element(xs.begin(), xs.begin() + long(mid), xs.end());
    if (xs.size() % 2)
        return xs[mid];
    const double upper = xs[mid];
    return (*std::max_element(xs.begin(), xs.begin() + long(mid)) + upper) / 2.0;
}

const char* method_name(Method m)
{
    static constexpr std::array kNames{"none", "welch-t", "mann-whitney", "mann-whitney-exact", "welch-t-log"};
    return enum_name<Method::WelchLog>(kNames, m);
}

TestResult welch_test(std::span<const double> a, std::span<const double> b, double alpha)
{
    TestResult r;
    r.method = Method::Welch;
    const Summary sa = summarize(a), sb = summarize(b);
    r.n_a = sa.n;
    r.n_b = sb.n;
    r.center_a = sa.mean;
    r.center_b = sb.mean;
    r.difference = sb.mean - sa.mean;
    r.relative = sa.mean != 0 ? r.difference / sa.mean : kNaN;
    r.diff_low = r.diff_high = r.rel_low = r.rel_high = kNaN;
    if (sa.n < 3 || sb.n < 3) {
        r.reason = "Welch's t-test needs at least 3 samples per side (A has " + std::to_string(sa.n) + ", B has " +
                   std::to_string(sb.n) + ")";
        return r;
    }
    r.enough_data = true;
    const double va = sa.variance / double(sa.n), vb = sb.variance / double(sb.n), se2 = va + vb;
    if (se2 == 0) {
        // Both sides constant: the difference is exact, whatever it is.
        r.df = double(sa.n + sb.n - 2);
        r.p_value = r.difference == 0 ? 1.0 : 0.0;
        r.statistic = r.difference == 0 ? 0.0 : std::copysign(INFINITY, r.difference);
        r.diff_low = r.diff_high = r.difference;
        fill_relative(r, r.relative, r.relative);
        return r;
    }
    r.df = se2 * se2 / (va * va / double(sa.n - 1) + vb * vb / double(sb.n - 1));
    const boost::math::students_t dist(r.df);
    r.statistic = r.difference / std::sqrt(se2);
    r.p_value = std::min(1.0, 2.0 * boost::math::cdf(boost::math::complement(dist, std::fabs(r.statistic))));
    const double tq = boost::math::quantile(boost::math::complement(dist, alpha / 2.0));
    r.diff_low = r.difference - tq * std::sqrt(se2);
    r.diff_high = r.difference + tq * std::sqrt(se2);

    // Fieller: the ratios θ with (mb − θ·ma)² ≤ t²·(vb + θ²·va).
    const double q = tq * tq, qa = sa.mean * sa.mean - q * va, qb = sa.mean * sb.mean, qc = sb.mean * sb.mean - q * vb,
                 disc = qb * qb - qa * qc;
    if (sa.mean != 0 && qa > 0 && disc >= 0)
        fill_relative(r, (qb - std::sqrt(disc)) / qa - 1.0, (qb + std::sqrt(disc)) / qa - 1.0);
    else
        fill_relative(r, kNaN, kNaN);  // A's mean is not clearly away from zero: unbounded
    return r;
}

TestResult mann_whitney(std::span<const double> a, std::span<const double> b, double alpha, double variance_inflation)
{
    TestResult r;
    r.method = Method::MannWhitney;
    r.n_a = a.size();
    r.n_b = b.size();
    r.center_a = median({a.begin(), a.end()});
    r.center_b = median({b.begin(), b.end()});
    r.diff_low = r.diff_high = r.rel_low = r.rel_high = r.relative = kNaN;
    r.difference = r.center_b - r.center_a;
    const double m = double(a.size()), n = double(b.size()), total = m + n;
    // The most extreme ranking has p = 2 / C(m+n, m); if that cannot reach
    // alpha, no data of this size could, so say so instead of "no difference".
    const double log_choose = std::lgamma(total + 1) - std::lgamma(m + 1) - std::lgamma(n + 1);
    if (a.empty() || b.empty() || std::log(2.0) - log_choose > std::log(alpha)) {
        r.reason = "too few samples for a rank test at this alpha (A has " + std::to_string(a.size()) + ", B has " +
                   std::to_string(b.size()) + ")";
        return r;
    }
    r.enough_data = true;
    double tie_term = 0;
    const std::vector<double> rank = pooled_ranks(a, b, tie_term);
    const double rank_sum_b = std::accumulate(rank.begin() + long(a.size()), rank.end(), 0.0);
    const double u = rank_sum_b - n * (n + 1) / 2.0;  // pairs with b > a (ties count ½)
    const double mu = m * n / 2.0;
    const double var =
        m * n / 12.0 * ((total + 1) - tie_term / (total * (total - 1))) * std::max(1.0, variance_inflation);
    r.statistic = u;

    if (tie_term == 0 && variance_inflation <= 1.0 && a.size() <= kExactMaxN && b.size() <= kExactMaxN) {
        r.method = Method::MannWhitneyExact;
        const std::vector<double> dist = exact_u_distribution(a.size(), b.size());
        const size_t uu = size_t(std::llround(u));
        double lower = 0, upper = 0;
        for (size_t k = 0; k < dist.size(); ++k) {
            if (k <= uu)
                lower += dist[k];
            if (k >= uu)
                upper += dist[k];
        }
        r.p_value = std::min(1.0, 2.0 * std::min(lower, upper));
    } else if (var <= 0) {
        r.p_value = 1.0;  // every value tied: nothing separates the sides
    } else {
        const double excess = std::fabs(u - mu);
        const double z = std::max(0.0, excess - 0.5) / std::sqrt(var);
        r.p_value = normal_two_sided_p(z);
    }

    // Hodges–Lehmann shift and its CI by inverting the test: order
    // statistics of the m·n pairwise differences, selected without listing them.
    std::vector<double> sa(a.begin(), a.end()), sb(b.begin(), b.end());
    std::sort(sa.begin(), sa.end());
    std::sort(sb.begin(), sb.end());
    const uint64_t pairs = uint64_t(a.size()) * uint64_t(b.size());
    r.difference =
        pairs % 2 ? kth_pairwise_difference(sa, sb, pairs / 2)
                  : (kth_pairwise_difference(sa, sb, pairs / 2 - 1) + kth_pairwise_difference(sa, sb, pairs / 2)) / 2.0;
    const double half = normal_upper_quantile(alpha / 2.0) * std::sqrt(var);
    const auto k = uint64_t(std::clamp(std::floor(mu - half), 0.0, double(pairs - 1)));
    r.diff_low = kth_pairwise_difference(sa, sb, k);
    r.diff_high = kth_pairwise_difference(sa, sb, pairs - 1 - k);
    // Relative to A's median, whose own uncertainty is not propagated.
    if (r.center_a != 0)
        fill_relative(r, r.diff_low / r.center_a, r.diff_high / r.center_a);
    if (r.center_a < 0)
        std::swap(r.rel_low, r.rel_high);
    return r;
}

namespace {

// Pairs with b[j] − a[i] <= d (a, b ascending). For a fixed i the j that
// qualify are a prefix of b, and the prefix only grows as a[i] does.
uint64_t pairs_at_most(std::span<const double> a, std::span<const double> b, double d)
{
    uint64_t count = 0;
    size_t j = 0;
    for (const double x : a) {
        while (j < b.size() && b[j] - x <= d)
            ++j;
        count += j;
    }
    return count;
}

}  // namespace

double kth_pairwise_difference(std::span<const double> a, std::span<const double> b, uint64_t k)
{
    const uint64_t total = uint64_t(a.size()) * uint64_t(b.size());
    if (k >= total)
        return kNaN;
    double lo = b.front() - a.back();  // the smallest difference
    double hi = b.back() - a.front();  // the largest
    uint64_t below = pairs_at_most(a, b, lo);
    if (below > k)
        return lo;
    // Bisect on the value, keeping pairs_at_most(lo) <= k < pairs_at_most(hi),
    // until few differences lie in (lo, hi].
    uint64_t upto = total;
    const uint64_t few = std::max<uint64_t>(a.size() + b.size(), 64);
    for (int step = 0; step < 4096 && upto - below > few; ++step) {
        const double mid = std::midpoint(lo, hi);
        if (!(mid > lo && mid < hi))
            return hi;  // adjacent doubles: every difference in (lo, hi] is hi
        const uint64_t n = pairs_at_most(a, b, mid);
        if (n > k) {
            hi = mid;
            upto = n;
        } else {
            lo = mid;
            below = n;
        }
    }
    // List the differences in (lo, hi] (per i a run of b, both ends moving
    // forward) and select among them.
    std::vector<double> between;
    between.reserve(size_t(upto - below));
    size_t first = 0, last = 0;
    for (const double x : a) {
        while (first < b.size() && b[first] - x <= lo)
            ++first;
        last = std::max(last, first);
        while (last < b.size() && b[last] - x <= hi)
            ++last;
        for (size_t j = first; j < last; ++j)
            between.push_back(b[j] - x);
    }
    const auto pick = between.begin() + long(k - below);
    std::nth_element(between.begin(), pick, between.end());
    return *pick;
}

double lag1_autocorrelation(const std::vector<std::vector<double>>& series)
{
    double num = 0, den = 0;
    for (const auto& xs : series) {
        if (xs.size() < 3)
            continue;
        const double mean = summarize(xs).mean;
        for (size_t i = 0; i < xs.size(); ++i) {
            den += (xs[i] - mean) * (xs[i] - mean);
            if (i + 1 < xs.size())
                num += (xs[i] - mean) * (xs[i + 1] - mean);
        }
    }
    return den > 0 ? num / den : 0.0;
}

double ar1_variance_inflation(double rho)
{
    if (!(rho > 0))
        return 1.0;
    rho = std::min(rho, 0.9);
    return (1 + rho) / (1 - rho);
}

Interval bootstrap_mean_difference(std::span<const double> a, std::span<const double> b, double alpha, size_t resamples,
                                   uint64_t seed)
{
    if (a.empty() || b.empty() || resamples == 0)
        return {kNaN, kNaN};
    std::mt19937_64 rng(seed);
    auto resample_mean = [&](std::span<const double> xs) {
        std::uniform_int_distribution<size_t> pick(0, xs.size() - 1);
        double sum = 0;
        for (size_t i = 0; i < xs.size(); ++i)
            sum += xs[pick(rng)];
        return sum / double(xs.size());
    };
    std::vector<double> diffs(resamples);
    for (double& d : diffs)
        d = resample_mean(b) - resample_mean(a);
    std::sort(diffs.begin(), diffs.end());
    auto at = [&](double q) {
        const double pos = q * double(resamples - 1);
        const size_t lo = size_t(std::floor(pos)), hi = std::min(lo + 1, resamples - 1);
        return diffs[lo] + (pos - double(lo)) * (diffs[hi] - diffs[lo]);
    };
    return {at(alpha / 2.0), at(1.0 - alpha / 2.0)};
}

namespace {

// Wilson's score interval for k of n.
Interval wilson(double k, double n, double z)
{
    const double p = k / n, z2 = z * z;
    const double center = (p + z2 / (2 * n)) / (1 + z2 / n);
    const double half = z / (1 + z2 / n) * std::sqrt(p * (1 - p) / n + z2 / (4 * n * n));
    return {std::max(0.0, center - half), std::min(1.0, center + half)};
}

}  // namespace

ProportionDifference proportion_difference(uint64_t k_a, uint64_t n_a, uint64_t k_b, uint64_t n_b, double alpha)
{
    ProportionDifference r;
    if (!n_a || !n_b || k_a > n_a || k_b > n_b)
        return {kNaN, kNaN, kNaN, kNaN, kNaN, 1};
    const double z = normal_upper_quantile(alpha / 2.0);
    r.p_a = double(k_a) / double(n_a);
    r.p_b = double(k_b) / double(n_b);
    r.difference = r.p_b - r.p_a;
    const Interval a = wilson(double(k_a), double(n_a), z), b = wilson(double(k_b), double(n_b), z);
    r.low = r.difference - std::sqrt((r.p_b - b.low) * (r.p_b - b.low) + (a.high - r.p_a) * (a.high - r.p_a));
    r.high = r.difference + std::sqrt((b.high - r.p_b) * (b.high - r.p_b) + (r.p_a - a.low) * (r.p_a - a.low));
    const double pooled = double(k_a + k_b) / double(n_a + n_b);
    const double se = std::sqrt(pooled * (1 - pooled) * (1.0 / double(n_a) + 1.0 / double(n_b)));
    r.p_value = se > 0 ? normal_two_sided_p(r.difference / se) : 1.0;
    return r;
}

RatioSamples ratio_samples(std::span<const double> num, std::span<const double> den)
{
    RatioSamples r;
    double sum_num = 0, sum_den = 0;
    for (size_t i = 0; i < num.size() && i < den.size(); ++i)
        if (den[i] > 0) {
            r.values.push_back(num[i] / den[i]);
            r.denominators.push_back(den[i]);
            sum_num += num[i];
            sum_den += den[i];
        }
    r.pooled = r.values.empty() ? kNaN : sum_num / sum_den;
    return r;
}

namespace {

// The mean of the samples is clearly away from 0: its standard error is at
// most a third of it.
bool clearly_positive(const std::vector<double>& xs)
{
    const Summary s = summarize(xs);
    return s.mean > 0 && std::sqrt(s.variance / double(s.n)) <= s.mean / 3;
}

// A fraction's samples without the runs whose denominator is under
// kFewTrials of the side's median: one spin attempt that failed is a run
// at 100%, and says next to nothing.
std::vector<double> fraction_samples(const RatioSamples& s)
{
    const double floor = kFewTrials * median(s.denominators);
    std::vector<double> kept;
    for (size_t i = 0; i < s.values.size(); ++i)
        if (s.denominators[i] >= floor)
            kept.push_back(s.values[i]);
    return kept;
}

}  // namespace

TestResult ratio_test(const RatioSamples& a, const RatioSamples& b, double alpha, bool fraction, size_t min_samples)
{
    TestResult r;
    std::vector<double> xa = fraction ? fraction_samples(a) : a.values;
    std::vector<double> xb = fraction ? fraction_samples(b) : b.values;
    r.n_a = xa.size();
    r.n_b = xb.size();
    r.center_a = a.pooled;
    r.center_b = b.pooled;
    r.difference = b.pooled - a.pooled;
    r.relative = a.pooled > 0 ? b.pooled / a.pooled - 1 : kNaN;
    r.diff_low = r.diff_high = r.rel_low = r.rel_high = kNaN;
    r.method = fraction ? Method::Welch : Method::WelchLog;
    min_samples = std::max<size_t>(min_samples, 3);  // Welch's t-test's own
    if (r.n_a < min_samples || r.n_b < min_samples) {
        r.reason = "the test needs at least " + std::to_string(min_samples) +
                   " samples with a value on each side (A has " + std::to_string(r.n_a) + ", B has " +
                   std::to_string(r.n_b) + ")";
        return r;
    }
    r.enough_data = true;
    // The offset: a hundredth of the values' geometric mean, which is small
    // beside either of them; a ten-thousandth of the larger when one is 0.
    const double c = a.pooled > 0 && b.pooled > 0 ? kLogOffset * std::sqrt(a.pooled * b.pooled)
                                                  : kLogOffset * kLogOffset * std::max(a.pooled, b.pooled);
    if (!fraction) {
        for (auto* xs : {&xa, &xb})
            for (double& x : *xs)
                x = c > 0 ? std::log(x + c) : 0.0;  // c is 0 only when every value is
    }
    const TestResult w = welch_test(xa, xb, alpha);
    r.p_value = w.p_value;
    r.statistic = w.statistic;
    r.df = w.df;
    if (fraction) {
        // B's value is in [0, 1]: so is the interval's.
        r.diff_low = std::max(w.diff_low, -a.pooled);
        r.diff_high = std::min(w.diff_high, 1.0 - a.pooled);
    } else if (c > 0) {
        // B's value at each end of the ratio's interval, A's value held.
        r.diff_low = std::max(std::exp(w.diff_low) * (a.pooled + c) - c - a.pooled, -a.pooled);
        r.diff_high = std::exp(w.diff_high) * (a.pooled + c) - c - a.pooled;
    } else {
        r.diff_low = r.diff_high = 0;
    }
    // The test weighs each sample alike, the pooled values weigh them by
    // their denominators: where a sample outweighs the others the two can
    // differ, and the interval widens to hold the change shown.
    r.diff_low = std::min(r.diff_low, r.difference);
    r.diff_high = std::max(r.diff_high, r.difference);
    if (a.pooled > 0 && (fraction || clearly_positive(a.values))) {
        r.rel_low = r.diff_low / a.pooled;
        r.rel_high = r.diff_high / a.pooled;
    }
    return r;
}

std::vector<double> weighted_holm_adjust(const std::vector<double>& p, const std::vector<double>& weights)
{
    std::vector<size_t> order(p.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t x, size_t y) { return p[x] * weights[y] < p[y] * weights[x]; });
    // remaining[k]: the weight of the hypotheses from step k on.
    std::vector<double> remaining(p.size() + 1, 0.0);
    for (size_t k = p.size(); k-- > 0;)
        remaining[k] = remaining[k + 1] + weights[order[k]];
    std::vector<double> adjusted(p.size());
    double running = 0;
    for (size_t k = 0; k < order.size(); ++k) {
        const size_t i = order[k];
        running = std::max(running, std::min(1.0, p[i] * remaining[k] / weights[i]));
        adjusted[i] = running;
    }
    return adjusted;
}

std::vector<double> holm_adjust(const std::vector<double>& p)
{
    std::vector<size_t> order(p.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return p[x] < p[y]; });
    std::vector<double> adjusted(p.size());
    double running = 0;
    for (size_t rank = 0; rank < order.size(); ++rank) {
        running = std::max(running, std::min(1.0, double(p.size() - rank) * p[order[rank]]));
        adjusted[order[rank]] = running;
    }
    return adjusted;
}

}  // namespace lockscope::stats
