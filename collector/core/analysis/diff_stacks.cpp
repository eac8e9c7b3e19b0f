// Call paths of a diff: each sampled waiter or holder path of a matched
// lock, its share of that lock's sampled stacks in A against B.
#include "core/analysis/diff_sides.h"

#include <set>

namespace lockscope::diff_detail {
namespace {

// "waiter" or "holder": the family whose samples a path's share is of.
std::string stack_family(const std::string& role)
{
    return role == "waiter" ? role : "holder";
}

// Each family's samples per unit.
std::map<std::string, std::vector<double>> family_totals(const StackCounts& stacks, size_t units)
{
    std::map<std::string, std::vector<double>> totals;
    for (const auto& [path, samples] : stacks) {
        std::vector<double>& t = totals[stack_family(path.first)];
        t.resize(units);
        for (size_t i = 0; i < samples.size() && i < units; ++i)
            t[i] += double(samples[i]);
    }
    return totals;
}

double sum(const std::vector<double>& xs)
{
    double s = 0;
    for (double x : xs)
        s += x;
    return s;
}

}  // namespace

std::vector<StackShift> compare_stacks(const Side& sa, const Side& sb, const std::vector<Match>& matches, double alpha)
{
    std::vector<StackShift> all;
    for (const Match& m : matches) {
        auto in_a = sa.stacks.find(m.a);
        auto in_b = sb.stacks.find(m.b);
        if (in_a == sa.stacks.end() || in_b == sb.stacks.end())
            continue;
        const StackCounts& stacks_a = in_a->second;
        const StackCounts& stacks_b = in_b->second;
        const auto total_a = family_totals(stacks_a, sa.units.size());
        const auto total_b = family_totals(stacks_b, sb.units.size());
        std::set<StackPath> paths;
        for (const auto* stacks : {&stacks_a, &stacks_b})
            for (const auto& [path, samples] : *stacks)
                paths.insert(path);
        for (const StackPath& path : paths) {
            const std::string family = stack_family(path.first);
            auto fa = total_a.find(family);
            auto fb = total_b.find(family);
            if (fa == total_a.end() || fb == total_b.end() || sum(fa->second) < double(kMinStackSamples) ||
                sum(fb->second) < double(kMinStackSamples))
                continue;
            auto samples = [](const StackCounts& stacks, const StackPath& p, size_t units) {
                std::vector<double> out(units, 0.0);
                if (auto it = stacks.find(p); it != stacks.end())
                    for (size_t i = 0; i < it->second.size() && i < units; ++i)
                        out[i] = double(it->second[i]);
                return out;
            };
            const std::vector<double> ka = samples(stacks_a, path, sa.units.size());
            const std::vector<double> kb = samples(stacks_b, path, sb.units.size());
            const stats::TestResult t = stats::ratio_test(stats::ratio_samples(ka, fa->second),
                                                          stats::ratio_samples(kb, fb->second), alpha, true, kMinRuns);
            if (!t.enough_data)
                continue;  // fewer than kMinRuns runs sampled the lock
            StackShift sh{m.a.name, m.a.kind, m.a.mode, path.first, path.second};
            sh.samples_a = uint64_t(sum(ka));
            sh.samples_b = uint64_t(sum(kb));
            sh.total_a = uint64_t(sum(fa->second));
            sh.total_b = uint64_t(sum(fb->second));
            sh.share = {t.center_a, t.center_b, t.difference, t.diff_low, t.diff_high, t.p_value};
            all.push_back(std::move(sh));
        }
    }
    return all;
}

}  // namespace lockscope::diff_detail
