// lockscope report: a session as text, JSON (the public schema) or CSV.
#include "cli/options.h"
#include "cli/report_view.h"
#include "core/error.h"

namespace lockscope::cli {
namespace {

constexpr HelpText kHelp = {
    "usage: lockscope report FILE [--by lock|instance|caller|task|cgroup|kind] [-E N] [-k KEY]\n"
    "                        [--format text|json|csv] [--scope all|kernel|user] [--wide] [filters]\n"
    "       lockscope report -i FILE [perf lock contention's options]\n\n"
    "Prints what a session recorded: totals (contentions, spin attempts and failures,\n"
    "spin-failure rate = failures / attempts, the wait split into spinning, queued on CPU,\n"
    "asleep and runnable, CPU idle, lost events) and the locks that paid most.\n\n"
    "Locks are named by class from kernel data where the kernel allows (the slab object\n"
    "and member, a global symbol, a per-CPU structure, the current task's members), else\n"
    "by caller; the 'named from data' line says how much of the wait was named so, and\n"
    "--format json gives each lock's name_source.\n\n"
    "User-space locks (record -p PID or -- COMMAND records the process's pthread mutexes,\n"
    "rwlocks, std::mutex and std::shared_mutex) follow the kernel's table, kind pthread_mutex,\n"
    "pthread_rwlock/r, pthread_rwlock/w or futex, with their waits and the condition-variable\n"
    "and semaphore waits left out; --scope user or kernel shows one side only. The filters\n"
    "(-Y, -L, --caller, -S) apply to both tables; -Y takes the kinds either prints.\n\n"
    "perf lock contention's options work with its meaning: -i FILE (- reads standard input),\n"
    "-E, -k, -t, -l, -Y, -L, -S, -q, -v, -x SEP, --output FILE, -o/--lock-owner, --lock-cgroup\n"
    "(-b, perf's BPF switch, changes nothing: lockscope always uses BPF).",
    "  lockscope report pipe.lockscope\n"
    "  lockscope report pipe.lockscope -E 5 -k wait_max -Y mutex,rwsem:W\n"
    "  lockscope report pipe.lockscope --by caller --format json > pipe.json"};

// -b and -F took values before they had perf's meanings.
Args old_spellings(const Args& args)
{
    reject_perf_fields(args, "text, json or csv");
    reject_not_offered(args, "report");
    return rewrite_old_spellings(args, "report", {{"-b", "--by", is_group_name}, {"-F", "--format", is_output_format}});
}

}  // namespace

int cmd_report(const Args& given)
{
    ViewArgs view_args;
    std::string input;
    po::options_description visible("options");
    visible.add_options()("help,h", "show this help")(
        "input,i", po::value(&input), "perf's spelling of the session file: the file to read (-: standard input)");
    add_view_options(visible, view_args, true);
    SessionFileArgs session_file(visible, 1);
    po::variables_map vm;
    if (!parse(old_spellings(given), visible, session_file.all, session_file.positional, vm, kHelp))
        return kExitOk;
    if (!input.empty() && !session_file.files.empty() && session_file.files.front() != input)
        throw UsageError("give the session file once: -i FILE or FILE");
    const std::string file =
        input.empty() ? session_file.one("lockscope report FILE (a file 'lockscope record -o FILE' wrote)") : input;
    const View view = view_from(view_args, vm);
    print_view(view, load_session_arg(file), stdout);
    return kExitOk;
}

}  // namespace lockscope::cli
