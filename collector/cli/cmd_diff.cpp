// lockscope diff: two sessions compared with confidence intervals and a
// verdict per total and per lock; --fail-on turns it into a CI gate.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/options.h"
#include "core/analysis/diff.h"
#include "core/storage/policy_labels.h"
#include "core/error.h"
#include "core/storage/session_store.h"

namespace lockscope::cli {

int cmd_diff(const Args& args)
{
    std::string file_a, file_b, format = "text", fail_on, runs_a, runs_b;
    std::vector<std::string> pair_args;
    double alpha = 0.05;
    po::options_description visible("options");
    visible.add_options()("help,h", "show this help")("format,F", po::value(&format)->default_value("text"),
                                                      "text or json")(
        "alpha,a", po::value(&alpha)->default_value(0.05, "0.05"), "significance level, in (0, 0.5]")(
        "fail-on", po::value(&fail_on),
        "exit 3 when B is judged 'worse' (worse) or different in any direction (any-change)")(
        "runs-a", po::value(&runs_a), "only A's runs whose label matches this shell pattern")(
        "runs-b", po::value(&runs_b), "only B's runs whose label matches this shell pattern")(
        "pair", po::value(&pair_args)->composing(),
        "NAME_A=NAME_B: compare these two locks although their names differ (repeatable)");
    po::options_description all;
    all.add(visible).add_options()("a", po::value(&file_a), "baseline session")("b", po::value(&file_b),
                                                                                "session compared with it");
    po::positional_options_description positional;
    positional.add("a", 1).add("b", 1);
    po::variables_map vm;
    if (!parse(args, visible, all, positional, vm,
               "usage: lockscope diff A B [--format text|json] [--alpha 0.05] [--fail-on worse|any-change]\n"
               "                        [--runs-a GLOB] [--runs-b GLOB] [--pair NAME_A=NAME_B]...\n\n"
               "Compares session B with baseline A: kernel, config, CPU and workload differences\n"
               "first, then totals and every lock matched by name, kind and mode, each with both\n"
               "values, the relative change, its confidence interval, a p-value and a verdict\n"
               "(better, worse, higher, lower, no significant difference, not enough data).\n"
               "With 3 or more runs per side (record --repeat N) run means are compared with\n"
               "Welch's t-test; otherwise interval samples with Mann-Whitney U (tentative).\n\n"
               "Policies diff like kernels: two bench sessions of one lock each are compared\n"
               "lock to lock (rwsem@4.2 vs rwsem@4.7-hacked); in one session of interleaved\n"
               "variants, select each side's runs by label:\n"
               "  lockscope diff s.lockscope s.lockscope --runs-a 'rwsem@4.7-hacked *' \\\n"
               "                                         --runs-b 'rwsem@4.2 *'\n"
               "--pair matches a renamed lock, e.g. --pair i_mutex=i_rwsem.\n\n"
               "exit status: 0 compared, 1 failure (unreadable or empty session), 2 usage,\n"
               "             3 --fail-on tripped (verdicts after Holm's correction)"))
        return kExitOk;
    if (file_a.empty() || file_b.empty())
        throw UsageError("needs two session files: lockscope diff A B");
    if (format != "text" && format != "json")
        throw UsageError("--format must be text or json, not '" + format + "'");
    if (!(alpha > 0 && alpha <= 0.5))
        throw UsageError("--alpha must be in (0, 0.5], e.g. 0.05");
    if (!fail_on.empty() && fail_on != "worse" && fail_on != "any-change")
        throw UsageError("--fail-on must be worse or any-change, not '" + fail_on + "'");

    DiffOptions options;
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
    options.alpha = alpha;
    options.label_a = runs_a.empty() ? file_a : file_a + " [" + runs_a + "]";
    options.label_b = runs_b.empty() ? file_b : file_b + " [" + runs_b + "]";
    const DiffResult diff = diff_sessions(a, b, options);
    const std::string out = format == "json" ? format_diff_json(diff) : format_diff_text(diff);
    std::fwrite(out.data(), 1, out.size(), stdout);
    if ((fail_on == "worse" && diff.any_worse()) || (fail_on == "any-change" && diff.any_change())) {
        std::fprintf(stderr, "lockscope diff: --fail-on %s: %s\n", fail_on.c_str(),
                     fail_on == "worse" ? "B is significantly worse than A in at least one total or lock"
                                        : "B differs significantly from A in at least one total or lock");
        return kExitDiffGate;
    }
    return kExitOk;
}

}  // namespace lockscope::cli
