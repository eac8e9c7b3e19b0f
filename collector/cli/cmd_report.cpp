// lockscope report: a session as text, JSON (the public schema) or CSV.
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "cli/options.h"
#include "core/analysis/report.h"
#include "core/error.h"
#include "core/storage/session_store.h"

namespace lockscope::cli {
namespace {

constexpr HelpText kHelp = {
    "usage: lockscope report FILE [--by lock|instance|caller|task|cgroup|kind] [-E N] [-k KEY]\n"
    "                        [--format text|json|csv] [--scope all|kernel|user] [--wide] [filters]\n\n"
    "Prints what a session recorded: totals (contentions, spin attempts and failures,\n"
    "spin-failure rate = failures / attempts, wait split into spin, queued and off-CPU\n"
    "time, CPU idle, lost events) and the locks that paid most.\n\n"
    "Locks are named by class from kernel data where the kernel allows (the slab object\n"
    "and member, a global symbol, a per-CPU structure, the current task's members), else\n"
    "by caller; the 'names' line says how much of the wait was named from data, and\n"
    "--format json gives each lock's name_source.\n\n"
    "User-space locks (record -p PID or -- COMMAND records the process's pthread mutexes,\n"
    "rwlocks, std::mutex and std::shared_mutex) follow the kernel's table, kind pthread_mutex,\n"
    "pthread_rwlock/r, pthread_rwlock/w or futex, with their waits and the condition-variable\n"
    "and semaphore waits left out; --scope user or kernel shows one side only. The filters\n"
    "(-Y, -L, ...) apply to kernel locks.\n\n"
    "perf lock contention's options work with its meaning: -E, -k, -t, -Y, -L, -S,\n"
    "--lock-cgroup (-b, perf's BPF switch, changes nothing: lockscope always uses BPF).",
    "  lockscope report pipe.lockscope\n"
    "  lockscope report pipe.lockscope -E 5 -k wait_max -Y mutex,rwsem:W\n"
    "  lockscope report pipe.lockscope --by caller --format json > pipe.json"};

// -b and -F took values before they had perf's meanings.
Args old_spellings(const Args& args)
{
    reject_perf_fields(args, "text, json or csv");
    return rewrite_old_spellings(args, "report", {{"-b", "--by", is_group_name}, {"-F", "--format", is_output_format}});
}

}  // namespace

int cmd_report(const Args& given)
{
    std::string by = "lock", format = "text", scope = "all";
    bool chains = false, wide = false, per_task = false, per_cgroup = false, use_bpf = false;
    int64_t run = 0;
    RowArgs rows;
    po::options_description visible("options");
    visible.add_options()("help,h", "show this help")(
        "by", po::value(&by)->default_value("lock"),
        "group rows by lock (its class: every inode's i_rwsem is one row), instance (each lock object "
        "apart, with the object where known: which inode, which process's mm, which CPU), caller, task, "
        "cgroup (the task's cgroup v2: a container, a service) or kind (by caller, a lock taken from "
        "several callers is split among them by its sampled waiter stacks)")(
        "threads,t", po::bool_switch(&per_task), "perf's per-thread rows: the same as --by task")(
        "lock-cgroup", po::bool_switch(&per_cgroup), "perf's per-cgroup rows: the same as --by cgroup");
    add_row_options(visible, rows, 20, "rows to show (0: all)", "top,n");
    visible.add_options()("format", po::value(&format)->default_value("text"), "text, json or csv")(
        "scope", po::value(&scope)->default_value("all"),
        "all (kernel locks, then user-space locks), kernel or user; CSV is one table: the kernel "
        "locks', or with user the user-space locks'")(
        "wide", po::bool_switch(&wide),
        "names in full, however wide the table (the default when the output is not a terminal); on a "
        "terminal the table fits 100 columns, cutting long names in the middle but never so that two "
        "rows look alike")("run", po::value(&run), "only this run (1-based) of a repeated session")(
        "chains", po::bool_switch(&chains),
        "also show the wait chains: waiters of a lock queued behind a holder that was itself waiting "
        "for another lock, followed down to the last holder and what it was doing (from the sampled "
        "holders, see record --holder-period; JSON always has them)")(
        "use-bpf,b", po::bool_switch(&use_bpf), "accepted for perf's sake; lockscope always records with BPF");
    FilterArgs filter_args;
    add_filter_options(visible, filter_args);
    SessionFileArgs session_file(visible, 1);
    po::variables_map vm;
    if (!parse(old_spellings(given), visible, session_file.all, session_file.positional, vm, kHelp))
        return kExitOk;
    const std::string& file = session_file.one("lockscope report FILE (a file 'lockscope record -o FILE' wrote)");
    if (format != "text" && format != "json" && format != "csv")
        throw UsageError("--format must be text, json or csv, not '" + format + "'");
    if (int(per_task) + int(per_cgroup) + int(!vm["by"].defaulted()) > 1)
        throw UsageError("choose one grouping: --by, -t/--threads or --lock-cgroup");

    ReportOptions ro;
    ro.by = per_task ? GroupBy::Task : per_cgroup ? GroupBy::Cgroup : parse_group_by(by);
    const size_t entries = entries_from(rows, vm);
    ro.top = entries == 0 ? SIZE_MAX : entries;
    ro.sort = sort_from(rows);
    ro.chains = chains;
    ro.scope = parse_lock_scope(scope);
    const LockFilter filter = filter_from(filter_args);
    const Session session = filter_session(load_session(file), filter);
    if (vm.count("run")) {
        if (run < 1 || size_t(run) > session.runs.size())
            throw UsageError("--run must be between 1 and " + std::to_string(session.runs.size()));
        ro.run = session.runs[size_t(run - 1)].id;
    }
    const Report report = build_report(session, ro);
    const std::string out = format == "json" ? format_json(report)
                            : format == "csv"
                                ? (ro.scope == LockScope::User ? format_user_locks_csv(report) : format_csv(report))
                                : format_text(report, {.full_names = wide || !isatty(STDOUT_FILENO)});
    std::fwrite(out.data(), 1, out.size(), stdout);
    return kExitOk;
}

}  // namespace lockscope::cli
