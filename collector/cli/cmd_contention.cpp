// lockscope contention (con): perf lock contention's one-shot form. Records
// into a temporary session (or -o FILE), then prints it with report's view.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>

#include "cli/options.h"
#include "cli/report_view.h"
#include "cli/temp_file.h"
#include "core/error.h"
#include "core/storage/session_store.h"
#include "record/recorder.h"

namespace lockscope::cli {
namespace {

constexpr const char* kContentionUsage =
    "usage: lockscope contention [options] [-- COMMAND [ARG...]]\n"
    "       lockscope con -a -d SECONDS [options]\n"
    "       lockscope con -i FILE [options]\n"
    "\n"
    "perf lock contention's one-shot form: records kernel lock contention while COMMAND\n"
    "runs (system-wide with -a), or for -d seconds, or until Ctrl-C, then prints the\n"
    "report, as 'lockscope record' and 'lockscope report' would with the same options.\n"
    "As perf does, the report goes to stderr, so that COMMAND keeps stdout; --output FILE\n"
    "writes it to a file. -i FILE prints a session recorded before instead.\n"
    "\n"
    "The session is recorded into a temporary file, removed afterwards; -o FILE keeps it,\n"
    "for 'lockscope report FILE' with other options later. As perf lock contention, con\n"
    "records the kernel's locks; --user-locks adds COMMAND's (or -p PID's) user-space locks.\n"
    "The lock kinds of -Y are recorded alone (as perf filters in BPF); the other filters\n"
    "choose among what was recorded, as in report.\n"
    "\n"
    "perf's options, with perf's meaning: -a, -p, --tid, -C, -G, -M, -b to record; -E, -k,\n"
    "-t, -l, -Y, -L, -S, -q, -v, -x SEP, --output, --lock-owner, --lock-cgroup to show.\n"
    "(-o, perf's --lock-owner, is the session file here, as in record.)\n"
    "\n"
    "Needs root or CAP_BPF + CAP_PERFMON, like record.";

constexpr const char* kContentionExamples =
    "  lockscope con -a -b -E 5 -- make -j8\n"
    "  lockscope con -a -d 10 -Y mutex,rwsem -k wait_max\n"
    "  lockscope con -t -E 3 -o build.lockscope -- make -j8";

// What the options bind beyond the view.
struct ContentionArgs {
    record::RecordOptions o;
    TargetArgs target;
    ViewArgs view;
    std::string input;
    uint32_t map_entries = 0;
    bool user_locks = false;
};

po::options_description describe(ContentionArgs& a)
{
    po::options_description d("options");
    d.add_options()("help,h", "show this help")(
        "session,o", po::value(&a.o.output),
        "keep the session in this file (default: a temporary file, removed once the report is printed)")(
        "force,f", po::bool_switch(&a.o.overwrite), "with -o: overwrite an existing file")(
        "input,i", po::value(&a.input), "print this session (recorded before; -: standard input) instead of recording")(
        "duration,d", po::value(&a.o.duration_s),
        "seconds to record; default: until COMMAND (or -p PID) exits, or Ctrl-C")(
        "interval", po::value(&a.o.interval_s)->default_value(1.0), "seconds per interval in the session")(
        "user-locks", po::bool_switch(&a.user_locks),
        "also record the user-space locks of COMMAND (or of -p PID) and the processes it creates");
    add_target_options(d, a.target, TargetParts::NoWorkload);
    add_map_entries_option(d, a.map_entries);
    add_view_options(d, a.view, false);
    return d;
}

// Options that record, which -i (print a recorded session) leaves nothing to do for.
void check_input_alone(const ContentionArgs& a, const po::variables_map& vm)
{
    for (const char* option :
         {"session", "duration", "pid", "tid", "cpu", "cgroup", "cgroup-filter", "no-children", "map-nr-entries"})
        if (vm.count(option))
            throw UsageError(std::string("-i prints a recorded session: it does not go with --") + option);
    if (a.target.all_cpus || a.user_locks || !a.o.command.empty())
        throw UsageError("-i prints a recorded session: it does not go with -a, --user-locks or a command");
}

// The recording: -Y's kinds in the kernel (mutex:spin records whole mutex
// waits, which the view then cuts to their spin phases).
record::RecordOptions recording(ContentionArgs& a, const po::variables_map& vm, const LockFilter& kinds, bool quiet)
{
    record::RecordOptions& o = a.o;
    apply_target(a.target, vm, o);
    apply_map_entries(vm, a.map_entries, o.probe);
    for (const auto& [kind, mode] : kinds.kinds)
        o.filter.kinds.emplace_back(kind, mode == kSpinPhases ? "" : mode);
    if (a.user_locks && !o.pid && o.command.empty())
        throw UsageError("--user-locks needs a process: -p PID or -- COMMAND");
    o.user_locks = a.user_locks;
    o.status_line = isatty(STDERR_FILENO) && !quiet;
    return o;
}

// -q: lockscope's own lines while it records (what it records into, the
// kernel's features) go nowhere; the traced command's stderr is untouched.
class QuietRecorder {
public:
    explicit QuietRecorder(bool quiet)
    {
        if (quiet)
            null_ = std::fopen("/dev/null", "w");
        if (null_) {
            saved_ = stderr;
            stderr = null_;  // glibc's stderr is a variable: the recorder's fprintf(stderr, ...) lands here
        }
    }
    ~QuietRecorder()
    {
        if (null_) {
            stderr = saved_;
            std::fclose(null_);
        }
    }
    QuietRecorder(const QuietRecorder&) = delete;
    QuietRecorder& operator=(const QuietRecorder&) = delete;

private:
    FILE* null_ = nullptr;
    FILE* saved_ = nullptr;
};

}  // namespace

int cmd_contention(const Args& args)
{
    ContentionArgs a;
    const po::options_description visible = describe(a);
    reject_perf_fields(args, "text, json or csv");
    reject_not_offered(args, "contention");
    po::variables_map vm;
    if (!parse(args, visible, visible, {}, vm, {kContentionUsage, kContentionExamples}, true, &a.o.command))
        return kExitOk;
    if (!a.input.empty()) {
        check_input_alone(a, vm);
        print_view(view_from(a.view, vm), load_session_arg(a.input), stderr);
        return kExitOk;
    }
    const LockFilter kinds = filter_from({.kinds = a.view.filters.kinds, .type_filters = a.view.filters.type_filters});
    if (std::none_of(kinds.kinds.begin(), kinds.kinds.end(), [](const auto& k) { return k.second == kSpinPhases; })) {
        // Recorded alone, the kinds need no filter after: per-task rows then count theirs only.
        a.view.filters.kinds.clear();
        a.view.filters.type_filters.clear();
    }
    View view = view_from(a.view, vm);
    record::RecordOptions o = recording(a, vm, kinds, view.quiet);
    std::optional<TempFile> temporary;
    if (o.output.empty()) {
        temporary.emplace("lockscope-con", ".lockscope");
        o.output = temporary->path();
        o.overwrite = true;
    }
    {
        const QuietRecorder quiet(view.quiet);
        record::record(o);
    }
    print_view(view, load_session(o.output), stderr);
    if (!temporary && !view.quiet)
        std::fprintf(stderr, "lockscope: kept the session in %s ('lockscope report %s' shows it again)\n",
                     o.output.c_str(), o.output.c_str());
    return kExitOk;
}

}  // namespace lockscope::cli
