// What `report` and `contention` print, and the options that choose it: the
// grouping, the rows and their order, the format, the lock filters, and
// perf lock contention's view options (-q, -v, -l, -t, -o/--lock-owner, -x,
// --output).
#pragma once

#include <cstdio>
#include <string>

#include "cli/options.h"
#include "core/analysis/lock_filter.h"
#include "core/analysis/report.h"
#include "core/model.h"

namespace lockscope::cli {

struct ViewArgs {
    std::string by = "lock", format = "text", scope = "all", separator, output;
    bool chains = false, wide = false, per_task = false, per_cgroup = false, per_instance = false;
    bool quiet = false, verbose = false, lock_owner = false, use_bpf = false;
    int64_t run = 0;
    RowArgs rows;
    FilterArgs filters;
};

// `owner_short`: -o is perf's --lock-owner (report); contention keeps -o
// for the session file, as record does.
void add_view_options(po::options_description& options, ViewArgs& args, bool owner_short);

// The view, checked: options that do not go together are UsageErrors.
struct View {
    ReportOptions report;
    LockFilter filter;
    std::string format;     // text, json or csv
    std::string separator;  // -x: the CSV's separator
    std::string output;     // --output FILE; "" or "-": the stream print_view is given
    int64_t run = 0;        // --run, 1-based; 0: every run
    bool wide = false, quiet = false, verbose = false, lock_owner = false;
};
View view_from(const ViewArgs& args, const po::variables_map& vm);

// Prints `session` as `view` says, to view.output or else to `out`.
void print_view(const View& view, const Session& session, FILE* out);

// The session a command reads: "-" is standard input (perf's -i -).
Session load_session_arg(const std::string& file);

}  // namespace lockscope::cli
