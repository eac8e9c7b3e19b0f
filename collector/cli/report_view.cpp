#include "cli/report_view.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "cli/report_extras.h"
#include "cli/temp_file.h"
#include "core/error.h"
#include "core/storage/session_store.h"

namespace lockscope::cli {
namespace {

// The text, written where the view says: a file is written whole under
// another name first, so an interrupted report leaves no half file.
void write_out(const std::string& text, const std::string& path, FILE* out)
{
    if (path.empty() || path == "-") {
        if (std::fwrite(text.data(), 1, text.size(), out) != text.size() || std::fflush(out) != 0)
            throw Error("cannot write the report", out == stderr ? "stderr" : "stdout", errno);
        return;
    }
    const std::string partial = path + ".partial";
    FILE* f = std::fopen(partial.c_str(), "w");
    if (!f)
        throw Error("cannot create the output file", path, errno);
    const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0;
    int err = errno;
    if (std::fclose(f) != 0 || !written || std::rename(partial.c_str(), path.c_str()) != 0) {
        err = written ? errno : err;
        std::remove(partial.c_str());
        throw Error("cannot write the output file", path, err);
    }
}

std::string csv_text(const Report& report, const View& v)
{
    std::string csv = v.report.scope == LockScope::User ? format_user_locks_csv(report) : format_csv(report);
    if (v.quiet)  // the rows alone
        csv.erase(0, csv.find('\n') + 1);
    return v.separator.empty() || v.separator == "," ? csv : with_separator(csv, v.separator);
}

}  // namespace

void add_view_options(po::options_description& options, ViewArgs& a, bool owner_short)
{
    options.add_options()(
        "by", po::value(&a.by)->default_value("lock"),
        "group rows by lock (its class: every inode's i_rwsem is one row), instance (each lock object "
        "apart, with the object where known: which inode, which process's mm, which CPU), caller, task, "
        "cgroup (the task's cgroup v2: a container, a service) or kind (by caller, a lock taken from "
        "several callers is split among them by its sampled waiter stacks)")(
        "threads,t", po::bool_switch(&a.per_task), "perf's per-thread rows: the same as --by task")(
        "lock-addr,l", po::bool_switch(&a.per_instance),
        "perf's per-lock rows: the same as --by instance (sessions keep no addresses: each lock object is "
        "numbered within its class, and named by its object where known)")(
        "lock-cgroup", po::bool_switch(&a.per_cgroup), "perf's per-cgroup rows: the same as --by cgroup")(
        owner_short ? "lock-owner,o" : "lock-owner", po::bool_switch(&a.lock_owner),
        "perf's rows by lock owner: the holders waiters queued behind, by what they were running (their "
        "sampled kernel stacks; with -t, by task), with the sampled waiters' wait behind each; text or CSV");
    add_row_options(options, a.rows, 20, "rows to show (0: all)", owner_short ? "top,n" : nullptr);
    options.add_options()("format", po::value(&a.format)->default_value("text"), "text, json or csv")(
        "field-separator,x", po::value(&a.separator),
        "perf's CSV output: --format csv with its columns separated by SEP instead of commas")(
        "output", po::value(&a.output), "write the report to this file instead")(
        "quiet,q", po::bool_switch(&a.quiet),
        "perf's -q: the rows alone, no header, totals, legend or notes (text and CSV: the kernel locks' "
        "table, or with --scope user the user-space locks')")(
        "verbose,v", po::bool_switch(&a.verbose),
        "perf's -v: the text adds each lock row's sampled waiter stacks, innermost first (rows by lock)")(
        "scope", po::value(&a.scope)->default_value("all"),
        "all (kernel locks, then user-space locks), kernel or user; CSV is one table: the kernel "
        "locks', or with user the user-space locks'")(
        "wide", po::bool_switch(&a.wide),
        "names in full, however wide the table (the default when the output is not a terminal); on a "
        "terminal the table fits 100 columns, cutting long names in the middle but never so that two "
        "rows look alike")("run", po::value(&a.run), "only this run (1-based) of a repeated session")(
        "chains", po::bool_switch(&a.chains),
        "also show the wait chains: waiters of a lock queued behind a holder that was itself waiting "
        "for another lock, followed down to the last holder and what it was doing (from the sampled "
        "holders, see record --holder-period; JSON always has them)")(
        "use-bpf,b", po::bool_switch(&a.use_bpf), "accepted for perf's sake; lockscope always records with BPF");
    add_filter_options(options, a.filters);
}

View view_from(const ViewArgs& a, const po::variables_map& vm)
{
    View v;
    v.format = a.format;
    if (vm.count("field-separator")) {
        if (a.separator.empty() || a.separator.find_first_of("\"\r\n") != std::string::npos)
            throw UsageError("-x/--field-separator takes a separator without quotes or line breaks: -x , or -x ';'");
        if (!vm["format"].defaulted() && a.format != "csv")
            throw UsageError("-x writes CSV: it does not go with --format " + a.format);
        v.format = "csv";
        v.separator = a.separator;
    }
    if (v.format != "text" && v.format != "json" && v.format != "csv")
        throw UsageError("--format must be text, json or csv, not '" + v.format + "'");
    const bool by_given = !vm["by"].defaulted();
    if (int(a.per_task) + int(a.per_cgroup) + int(a.per_instance) + int(by_given) > 1)
        throw UsageError("choose one grouping: --by, -t/--threads, -l/--lock-addr or --lock-cgroup");
    v.report.by = a.per_task       ? GroupBy::Task
                  : a.per_cgroup   ? GroupBy::Cgroup
                  : a.per_instance ? GroupBy::Instance
                                   : parse_group_by(a.by);
    v.lock_owner = a.lock_owner;
    if (a.lock_owner && v.report.by != GroupBy::Lock && v.report.by != GroupBy::Task)
        throw UsageError(
            "--lock-owner makes rows of the lock holders (with -t, of their tasks): it does not go "
            "with --by, -l or --lock-cgroup");
    if (a.lock_owner && v.format == "json")
        throw UsageError(
            "--lock-owner prints text or CSV; the JSON report has each lock's holders "
            "(locks[].holders and locks[].holder_tasks)");
    const size_t entries = entries_from(a.rows, vm);
    v.report.top = entries == 0 ? SIZE_MAX : entries;
    v.report.sort = sort_from(a.rows);
    v.report.chains = a.chains;
    v.report.scope = parse_lock_scope(a.scope);
    v.filter = filter_from(a.filters);
    if (groups_tasks(v.report.by) && !a.lock_owner && !v.filter.empty())
        throw UsageError(std::string("rows by ") + group_by_name(v.report.by) +
                         " cover every lock: lockscope keeps each task's totals over all its waits, not per lock, "
                         "so they do not go with -Y, -L, -S, --kind, --lock or --caller (record -Y records "
                         "those kinds alone)");
    if (vm.count("run")) {
        if (a.run < 1)
            throw UsageError("--run is 1-based: 1 for the first run");
        v.run = a.run;
    }
    v.output = a.output;
    v.wide = a.wide;
    v.quiet = a.quiet;
    v.verbose = a.verbose;
    return v;
}

void print_view(const View& v, const Session& loaded, FILE* out)
{
    const Session session = filter_session(loaded, v.filter);
    ReportOptions ro = v.report;
    if (v.run) {
        if (size_t(v.run) > session.runs.size())
            throw UsageError("--run must be between 1 and " + std::to_string(session.runs.size()));
        ro.run = session.runs[size_t(v.run - 1)].id;
    }
    const bool to_file = !v.output.empty() && v.output != "-";
    std::string text;
    if (v.lock_owner) {
        text = holder_rows(session, {.by_task = ro.by == GroupBy::Task,
                                     .top = ro.top,
                                     .run = ro.run,
                                     .rows_only = v.quiet,
                                     .csv = v.format == "csv",
                                     .separator = v.separator.empty() ? "," : v.separator});
    } else {
        const Report report = build_report(session, ro);
        if (v.format == "json") {
            text = format_json(report);
        } else if (v.format == "csv") {
            text = csv_text(report, v);
        } else {
            text = format_text(report, {.full_names = v.wide || to_file || !isatty(fileno(out)), .rows_only = v.quiet});
            if (v.verbose && ro.scope != LockScope::User)
                text += waiter_stacks_text(session, report, ro.run, v.quiet);
        }
    }
    write_out(text, to_file ? v.output : "", out);
}

Session load_session_arg(const std::string& file)
{
    require_session_file(file);
    if (file != "-")
        return load_session(file);
    if (isatty(STDIN_FILENO))
        throw UsageError(
            "'-' reads a session from standard input: pipe one in ('lockscope record -o - ... | "
            "lockscope report -i -')");
    const TempFile copy("lockscope-stdin", ".lockscope");
    FILE* f = std::fopen(copy.path().c_str(), "w");
    if (!f)
        throw Error("cannot create a temporary file", copy.path(), errno);
    const bool copied = copy_fd(STDIN_FILENO, fileno(f));
    const int err = errno;
    std::fclose(f);
    if (!copied)
        throw Error("cannot read the session from standard input", "stdin", err);
    try {
        return load_session(copy.path());
    } catch (const Error& e) {  // said of standard input, not of the copy
        std::string said = e.what();
        const std::string copy_name = "'" + copy.path() + "'";
        for (size_t at = said.find(copy_name); at != std::string::npos; at = said.find(copy_name))
            said.replace(at, copy_name.size(), "standard input");
        throw Error(said, "");
    }
}

}  // namespace lockscope::cli
