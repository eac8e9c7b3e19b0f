// lockscope diff: two sessions compared with confidence intervals and a
// verdict per total and per lock; --fail-on turns it into a CI gate.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/options.h"
#include "core/analysis/diff.h"
#include "core/storage/policy_labels.h"
#include "core/error.h"
#include "core/storage/session_store.h"
#include "fleet/fleet_diff.h"

namespace lockscope::cli {
namespace {

int print_diff(const DiffResult& diff, const std::string& format, const std::string& fail_on);

bool is_number(const std::string& value)
{
    char* end = nullptr;
    std::strtod(value.c_str(), &end);
    return !value.empty() && end && *end == '\0';
}

// --min-effect: a fraction (0.05) or a percentage (5%).
double parse_min_effect(const std::string& text)
{
    const bool percent = text.ends_with('%');
    const std::string number = percent ? text.substr(0, text.size() - 1) : text;
    if (!is_number(number))
        throw UsageError("--min-effect takes a fraction such as 0.05 or a percentage such as 5%, not '" + text + "'");
    const double value = std::strtod(number.c_str(), nullptr) / (percent ? 100.0 : 1.0);
    if (!(value >= 0 && value < 1))
        throw UsageError("--min-effect must be at least 0 and below 1 (100%), not '" + text + "'");
    return value;
}

// diff --prometheus: hosts as replicates; the selectors come as --a and --b,
// the request's other options straight from the command line.
int diff_prometheus(const po::variables_map& vm, fleet::FleetRequest request, const std::string& a,
                    const std::string& b, const std::string& format, const DiffOptions& stats,
                    const std::string& fail_on)
{
    for (const char* option : {"runs-a", "runs-b", "pair"})
        if (vm.count(option))
            throw UsageError(std::string("--") + option + " compares session files, not --prometheus groups");
    if (format != "text" && format != "json")
        throw UsageError("--format must be text or json, not '" + format + "'");
    request.a = a;
    request.b = b;
    request.alpha = stats.alpha;
    request.min_effect = stats.min_effect;
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    const fleet::FleetOptions o = fleet::fleet_options(request, std::chrono::duration<double>(now).count());
    return print_diff(fleet::diff_fleet(o), format, fail_on);
}

}  // namespace

constexpr const char* kDiffExamples =
    "  lockscope diff before.lockscope after.lockscope\n"
    "  lockscope diff base.lockscope patched.lockscope --fail-on worse --format json > diff.json";

int cmd_diff(const Args& given)
{
    // -a was --alpha's short spelling; elsewhere -a means all CPUs.
    const Args args = rewrite_old_spellings(given, "diff", {{"-a", "--alpha", is_number}});
    std::string file_a, file_b, format = "text", fail_on, runs_a, runs_b, min_effect = "0.05";
    std::vector<std::string> pair_args;
    double alpha = 0.05;
    po::options_description visible("options");
    visible.add_options()("help,h", "show this help")("format,F", po::value(&format)->default_value("text"),
                                                      "text or json")(
        "alpha", po::value(&alpha)->default_value(0.05, "0.05"),
        "the chance, in (0, 0.5], that the diff calls anything at all when nothing changed")(
        "min-effect", po::value(&min_effect)->default_value("0.05"),
        "call nothing smaller: a rate's or time's relative change, a fraction's change in points (0.05 or 5%)")(
        "fail-on", po::value(&fail_on),
        "exit 3 when B is judged 'worse' (worse) or different in any direction (any-change)")(
        "runs-a", po::value(&runs_a), "only A's runs whose label matches this shell pattern")(
        "runs-b", po::value(&runs_b), "only B's runs whose label matches this shell pattern")(
        "pair", po::value(&pair_args)->composing(),
        "NAME_A=NAME_B: compare these two locks although their names differ (repeatable)");
    fleet::FleetRequest prometheus;  // --prometheus and the options that go with it
    visible.add_options()("prometheus", po::value(&prometheus.url),
                          "compare two groups of hosts that this Prometheus (or Thanos, Mimir) scrapes: --a and "
                          "--b are label matchers on lockscope_build_info, each host a sample")(
        "by", po::value(&prometheus.by),
        "with --prometheus, instead of --a/--b: the two largest groups by this build-info label")(
        "window", po::value(&prometheus.window)->default_value("1h"),
        "with --prometheus: the range compared (30m, 1h, 1d)")(
        "end", po::value(&prometheus.end)->default_value("now"),
        "with --prometheus: when the window ends (now, Unix seconds, 2026-12-01T14:00:00Z)")(
        "top", po::value(&prometheus.top)->default_value(20),
        "with --prometheus: locks compared one by one, by wait; the rest are summed");
    po::options_description all;
    all.add(visible).add_options()("a", po::value(&file_a), "baseline session")("b", po::value(&file_b),
                                                                                "session compared with it");
    po::positional_options_description positional;
    positional.add("a", 1).add("b", 1);
    po::variables_map vm;
    if (!parse(args, visible, all, positional, vm,
               "usage: lockscope diff A B [--format text|json] [--alpha 0.05] [--min-effect 0.05]\n"
               "                        [--fail-on worse|any-change] [--runs-a GLOB] [--runs-b GLOB]\n"
               "                        [--pair NAME_A=NAME_B]...\n\n"
               "Compares session B with baseline A: kernel, config, CPU and workload differences\n"
               "first, then totals and every lock report shows, matched by name, kind and mode,\n"
               "each with both values, the change, its confidence interval, a p-value and a\n"
               "verdict (better, worse, higher, lower, no significant difference, below min\n"
               "effect, not enough data). The runs are the samples (record --repeat N): a metric\n"
               "needs 3 runs a side for a verdict. Every p-value of one diff is adjusted in one\n"
               "family, so a diff of runs of one system calls anything at all with a chance of\n"
               "at most --alpha. Two sessions recorded apart on a machine whose other load\n"
               "changed can differ by more than their runs do: interleave the runs of what you\n"
               "compare where you can.\n\n"
               "Policies diff like kernels: two bench sessions of one lock each are compared\n"
               "lock to lock (rwsem@4.2 vs rwsem@4.7-hacked); in one session of interleaved\n"
               "variants, select each side's runs by label:\n"
               "  lockscope diff s.lockscope s.lockscope --runs-a 'rwsem@4.7-hacked *' \\\n"
               "                                         --runs-b 'rwsem@4.2 *'\n"
               "--pair matches a renamed lock, e.g. --pair i_mutex=i_rwsem.\n\n"
               "exit status: 0 compared, 1 failure (unreadable or empty session), 2 usage,\n"
               "             3 --fail-on tripped",
               kDiffExamples))
        return kExitOk;
    DiffOptions options;
    options.alpha = alpha;
    options.min_effect = parse_min_effect(min_effect);
    if (!prometheus.url.empty())
        return diff_prometheus(vm, prometheus, file_a, file_b, format, options, fail_on);
    for (const char* option : {"by", "window", "end", "top"})
        if (vm.count(option) && !vm[option].defaulted())
            throw UsageError(std::string("--") + option + " goes with --prometheus");
    if (file_a.empty() || file_b.empty())
        throw UsageError("needs two session files: lockscope diff A B");
    if (format != "text" && format != "json")
        throw UsageError("--format must be text or json, not '" + format + "'");
    if (!(alpha > 0 && alpha <= 0.5))
        throw UsageError("--alpha must be in (0, 0.5], e.g. 0.05");
    if (!fail_on.empty() && fail_on != "worse" && fail_on != "any-change")
        throw UsageError("--fail-on must be worse or any-change, not '" + fail_on + "'");

    for (const std::string& p : pair_args) {
        const size_t eq = p.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == p.size())
            throw UsageError("--pair wants NAME_A=NAME_B, not '" + p + "'");
        options.pairs.emplace_back(p.substr(0, eq), p.substr(eq + 1));
    }

    Session a = load_session(file_a);
    Session b = load_session(file_b);
    // A session recorded before the policy labels were corrected has been
    // renamed on opening; patterns must use the current names.
    for (const Session* s : {&a, &b})
        if (const std::string renamed = s->meta_value(kPolicyLabelsRenamedKey);
            !renamed.empty() && !(s == &b && file_b == file_a))
            std::fprintf(stderr,
                         "lockscope diff: note: %s was recorded with old policy labels, renamed on opening: %s\n",
                         (s == &a ? file_a : file_b).c_str(), renamed.c_str());
    if (!runs_a.empty())
        a = select_runs(a, runs_a);
    if (!runs_b.empty())
        b = select_runs(b, runs_b);
    options.label_a = runs_a.empty() ? file_a : file_a + " [" + runs_a + "]";
    options.label_b = runs_b.empty() ? file_b : file_b + " [" + runs_b + "]";
    return print_diff(diff_sessions(a, b, options), format, fail_on);
}

namespace {

int print_diff(const DiffResult& diff, const std::string& format, const std::string& fail_on)
{
    if (!fail_on.empty() && fail_on != "worse" && fail_on != "any-change")
        throw UsageError("--fail-on must be worse or any-change, not '" + fail_on + "'");
    const std::string out = format == "json" ? format_diff_json(diff) : format_diff_text(diff);
    std::fwrite(out.data(), 1, out.size(), stdout);
    if ((fail_on == "worse" && diff.any_worse()) || (fail_on == "any-change" && diff.any_change())) {
        std::fprintf(stderr, "lockscope diff: --fail-on %s: %s\n", fail_on.c_str(),
                     fail_on == "worse" ? "B is significantly worse than A in at least one total or lock"
                                        : "B differs significantly from A in at least one total, lock or call path");
        return kExitDiffGate;
    }
    return kExitOk;
}

}  // namespace
}  // namespace lockscope::cli
