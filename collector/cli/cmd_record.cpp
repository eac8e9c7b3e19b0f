// lockscope record: options → RecordOptions → record::record().
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <memory>
#include <optional>

#include "cli/options.h"
#include "cli/temp_file.h"
#include "core/error.h"
#include "core/format.h"
#include "lockscope_abi.h"
#include "metrics/exporter.h"
#include "metrics/exposition.h"
#include "record/recorder.h"

namespace lockscope::cli {
namespace {

constexpr const char* kRecordUsage =
    "usage: lockscope record [options] [-- COMMAND [ARG...]]\n"
    "\n"
    "Records kernel lock contention (lock:contention_begin/end, sched_switch,\n"
    "sched_waking) into a session file that 'lockscope report' reads.\n"
    "\n"
    "Targets (system-wide by default, as -a):\n"
    "  --workload NAME      run a built-in workload while recording (see 'lockscope workload --help');\n"
    "                       -t/-d set its threads and duration; recording stays system-wide\n"
    "  -p PID               only this process and every process it creates from now on (a shell\n"
    "                       script's commands, make -j's jobs, a server's workers); stops when it\n"
    "                       exits; --no-children: that process only\n"
    "  --tid TID            only this thread\n"
    "  -- COMMAND ...       run COMMAND and record it and every process it creates; stops when\n"
    "                       COMMAND exits (with -a: record system-wide while it runs)\n"
    "  --cgroup PATH        (with any of the above, or alone) only tasks in this cgroup v2 or below\n"
    "                       it: a container, a systemd service; -G NAME,... names them as perf\n"
    "                       does, from the cgroup root ('/' the root, '/system.slice/x.service')\n"
    "  -C CPUS              (with any of the above) only waits that begin on these CPUs\n"
    "\n"
    "User-space locks: with -p PID or -- COMMAND, the same session also holds that process's\n"
    "waits on its own locks (pthread mutexes and rwlocks, std::mutex, std::shared_mutex), named\n"
    "by their symbol (g_cache_lock) or by the function that takes them\n"
    "(pthread_mutex@Cache::get); condition-variable and semaphore waits are counted apart.\n"
    "The processes it creates are followed (--no-children: not); --user-locks=all records\n"
    "every process's instead. --no-user-locks: kernel locks only.\n"
    "\n"
    "More: 'lockscope record --prometheus 127.0.0.1:9464' serves metrics always-on without a\n"
    "session file (--sample 64); --session-dir DIR --rotate-every 1h --keep 24 keeps a rolling\n"
    "series of files instead of one.\n"
    "\n"
    "Needs root or CAP_BPF + CAP_PERFMON, and CAP_SYSLOG to name callers where the\n"
    "kernel hides its addresses (perf_event_paranoid >= 2 or kptr_restrict).\n"
    "Ctrl-C stops cleanly; every completed interval is kept.\n"
    "\n"
    "Sampled timing (--sample N): every contention, spin attempt and spin failure is still\n"
    "counted exactly, and the time waiters spent off CPU is still measured, but only about one\n"
    "episode in N per CPU (chosen at random) reads the clock at its begin and end. The rest of\n"
    "the wait, spin time, histograms and per-stack waits are then estimates (the timed episodes'\n"
    "sums times N, unbiased); the report shows the wait totals with their standard error\n"
    "(\"1.23 s ± 0.05\"), \"not timed\" for a lock none of whose episodes was timed, and the\n"
    "longest wait is the longest timed one. --prometheus without -o uses --sample 64 unless\n"
    "--sample is given (--sample 1: time every episode).";

constexpr const char* kRecordExamples =
    "  lockscope record --workload pipe -t 4 -d 5 -o pipe.lockscope\n"
    "  lockscope record -a -d 30 -o system.lockscope\n"
    "  lockscope record -o build.lockscope -- make -j8";

// "90", "90s", "15m", "1h", "1d" as seconds.
double parse_duration(const std::string& text, const char* option)
{
    if (const std::optional<double> s = parse_duration_s(text))
        return *s;
    throw UsageError(std::string(option) + " takes a duration such as 90s, 15m, 1h or 1d, not '" + text + "'");
}

// --prometheus without -o: one episode in 64 timed. The timed path's extra
// clock reads and histogram update then cost under a nanosecond per event on
// average (bench/bpf_cost.py --sample).
constexpr uint32_t kAlwaysOnSamplePeriod = 64;

std::string default_output()
{
    return format_local_now("lockscope-%Y%m%d-%H%M%S.lockscope");
}

// What the options bind, beyond RecordOptions itself.
struct RecordArgs {
    record::RecordOptions o;
    TargetArgs target;
    FilterArgs filters;
    std::string prometheus_address;
    size_t prometheus_top = 50;
    size_t prometheus_cgroups = 0;
    std::vector<std::string> prometheus_labels;
    std::map<std::string, std::string> operator_labels;
    std::string web_config;
    metrics::WebConfig web;
    RotationPolicy rotation;
    std::string rotate_every = "1h";
    double max_mib = 0;
    bool use_bpf = false;
    std::string user_locks;  // "", "on" (--user-locks) or "all" (--user-locks=all)
    bool no_user_locks = false;
    uint32_t map_entries = 0;  // perf's -M
    int realtime = 0;          // --realtime: SCHED_FIFO priority, 0 for none
};

void add_probe_options(po::options_description& d, record::RecordOptions& o)
{
    d.add_options()("stack-period", po::value(&o.probe.stack_period)->default_value(256),
                    "capture a kernel stack for one episode in N per CPU, plus each lock's first (0: none); "
                    "counts stay exact, callers are attributed from the samples")(
        "holder-period", po::value(&o.probe.holder_period)->default_value(16),
        "when a waiter queues on a mutex or rwsem one task owns, capture the owner's kernel stack and "
        "what it was doing (running, preempted, sleeping, in I/O wait) for one such queueing in N per "
        "CPU (0: none; needs bpf_task_from_pid, Linux 6.2+)")(
        "running-holder-hz", po::value(&o.probe.running_holder_hz)->default_value(99),
        "an owner a waiter finds running on another CPU has no stack the waiter can read: a CPU-clock "
        "tick this many times a second per CPU takes it on its own CPU while it still holds the lock "
        "(0: none; off with --holder-period 0; needs perf events)")(
        "max-locks", po::value(&o.probe.max_locks)->default_value(LS_MAX_LOCKS_DEFAULT),
        "distinct (lock, kind) keys kept in the kernel; more are counted as lost")(
        "max-tasks", po::value(&o.probe.max_tasks)->default_value(o.probe.max_tasks),
        "tasks whose totals the kernel holds at once (exited tasks leave at each interval, their rows "
        "kept); more at once are counted as lost (task-map)")(
        "trace", po::bool_switch(&o.probe.trace),
        "also store every finished episode with its spin and queued phases (for "
        "'lockscope export --format chrome-trace'); episodes the ring buffer cannot hold are "
        "counted as lost")("trace-buffer", po::value(&o.probe.trace_buffer_mib)->default_value(16),
                           "--trace ring buffer in MiB (rounded up to a power of two)")(
        "sample", po::value(&o.probe.time_period),
        "time about one episode in N per CPU, for always-on use: counts stay exact, times become "
        "unbiased estimates with a standard error (see below); 1: time every episode (the default, "
        "except --prometheus without -o: 64)");
}

void add_always_on_options(po::options_description& d, RecordArgs& a)
{
    d.add_options()("prometheus", po::value(&a.prometheus_address),
                    "serve Prometheus metrics at http://ADDR:PORT/metrics while recording; "
                    "without -o, no session file is written")(
        "prometheus-top", po::value(&a.prometheus_top)->default_value(50),
        "(lock, kind) pairs with series of their own: the hottest newcomers while slots are free, kept "
        "for the process's life so counters stay monotonic; the rest are counted as lock=\"other\"")(
        "prometheus-cgroups", po::value(&a.prometheus_cgroups)->default_value(0),
        "also serve per-cgroup series (lockscope_cgroup_*{cgroup=PATH}) for at most N cgroups v2, chosen "
        "like --prometheus-top (the rest are cgroup=\"other\"); 0, the default: none")(
        "prometheus-label", po::value(&a.prometheus_labels)->composing(),
        "NAME=VALUE[,NAME=VALUE...]: a label of lockscope_build_info, e.g. role=db, for grouping hosts "
        "(lockscope diff --prometheus --by role); repeatable, empty for none")(
        "web-config", po::value(&a.web_config),
        "with --prometheus: TLS and basic auth from this YAML file, in the web-config format of "
        "node_exporter's --web.config.file; fields lockscope cannot honour are refused (empty: none)")(
        "session-dir", po::value(&a.rotation.dir),
        "instead of -o: a rolling series of session files in DIR (created if missing), for always-on "
        "recording; the files are named by their UTC start time and each is complete once the next has started")(
        "rotate-every", po::value(&a.rotate_every)->default_value("1h"),
        "--session-dir: start a new file after this long (90s, 15m, 1h, 1d)")(
        "keep", po::value(&a.rotation.keep)->default_value(0),
        "--session-dir: keep at most N files, removing the oldest (0: no count limit)")(
        "max-mib", po::value(&a.max_mib)->default_value(0),
        "--session-dir: keep all files together under M MiB, removing the oldest; a file grows to "
        "about M/4 MiB before the next starts (0: no size limit; --keep or --max-mib is required)");
}

void add_user_lock_options(po::options_description& d, RecordArgs& a)
{
    d.add_options()("no-user-locks", po::bool_switch(&a.no_user_locks),
                    "do not record the target process's user-space locks (recorded by default with -p PID "
                    "and -- COMMAND, with the processes it creates unless --no-children; not with "
                    "--session-dir)")(
        "user-locks", po::value(&a.user_locks)->implicit_value("on")->value_name("all"),
        "record the target's user-space locks where it is not the default: the --workload process; "
        "--user-locks=all: every process's on the machine (but lockscope's own), with any target or "
        "none (costs more: see docs/cost.md, in /usr/share/doc/lockscope with the package)");
}

// On by default where the recording has one target process and a session
// file: the rows are stored once, when the run ends.
void check_user_locks(RecordArgs& a)
{
    record::RecordOptions& o = a.o;
    if (!a.user_locks.empty() && a.user_locks != "on" && a.user_locks != "all")
        throw UsageError("--user-locks takes no value (the target's) or =all (every process's), not '" + a.user_locks +
                         "'");
    const bool asked = !a.user_locks.empty();
    if (asked && a.no_user_locks)
        throw UsageError("choose --user-locks or --no-user-locks, not both");
    const bool target = o.pid != 0 || !o.command.empty() || o.with_workload;
    // One file, or the exporter alone: a run's user-lock rows are
    // cumulative over the run, which --session-dir would split across files.
    const bool one_run_one_file = !o.rotation;
    if (a.user_locks == "on" && !target)
        throw UsageError(
            "--user-locks needs a process: -p PID, -- COMMAND or --workload NAME "
            "(--user-locks=all records every process's)");
    if (asked && !one_run_one_file)
        throw UsageError(
            "--user-locks keeps a run's rows in one session file, which --session-dir would split: use -o FILE "
            "or --prometheus alone");
    o.user_locks = asked || (!a.no_user_locks && !o.with_workload && target && one_run_one_file);
    o.user_locks_all = a.user_locks == "all";
}

po::options_description describe(RecordArgs& a)
{
    record::RecordOptions& o = a.o;
    po::options_description d("options");
    d.add_options()("help,h", "show this help")(
        "output,o", po::value(&o.output),
        "session file to write (default: lockscope-<date>-<time>.lockscope); -: standard output, when the "
        "recording ends (as perf's -o -: the command's own output goes to stderr meanwhile)")(
        "force,f", po::bool_switch(&o.overwrite), "overwrite an existing output file")(
        "duration,d", po::value(&o.duration_s),
        "seconds to record (with --workload: the workload's duration, default 5); "
        "default: until Ctrl-C or the target exits")("interval,i", po::value(&o.interval_s)->default_value(1.0),
                                                     "seconds per interval in the session")(
        "repeat,r", po::value(&o.repeat)->default_value(1), "runs of the workload or command, for diff statistics")(
        "realtime", po::value(&a.realtime)->value_name("PRIO"),
        "run lockscope's own threads at this SCHED_FIFO priority (1-99), as perf record -r does: where "
        "real-time threads of the target hog the CPUs, lockscope still reads its buffers, and the target's "
        "binaries, while the target runs (the command and workloads it starts keep their normal policy)");
    add_target_options(d, a.target, TargetParts::All);
    d.add_options()("dir", po::value(&o.workload.dir), "workload scratch directory parent (default $TMPDIR or /tmp)")(
        "locks", po::value(&o.workload.locks)->default_value(workload::Options::kDefaultLocks),
        "workload pipes: how many pipes (distinct contended locks)")(
        "use-bpf,b", po::bool_switch(&a.use_bpf), "accepted for perf's sake; lockscope always records with BPF");
    add_probe_options(d, o);
    add_map_entries_option(d, a.map_entries);
    add_user_lock_options(d, a);
    add_always_on_options(d, a);
    add_filter_options(d, a.filters);
    return d;
}

// The options that only go with others, and their ranges.
void check_options(RecordArgs& a, const po::variables_map& vm)
{
    record::RecordOptions& o = a.o;
    if (vm.count("prometheus-top") && !vm["prometheus-top"].defaulted() && a.prometheus_address.empty())
        throw UsageError("--prometheus-top goes with --prometheus");
    a.operator_labels = metrics::parse_operator_labels(a.prometheus_labels);
    if (!a.operator_labels.empty() && a.prometheus_address.empty())
        throw UsageError("--prometheus-label goes with --prometheus");
    if (!a.web_config.empty() && a.prometheus_address.empty())
        throw UsageError("--web-config goes with --prometheus");
    if (a.prometheus_cgroups && a.prometheus_address.empty())
        throw UsageError("--prometheus-cgroups goes with --prometheus");
    const bool rotating = !a.rotation.dir.empty();
    for (const char* option : {"rotate-every", "keep", "max-mib"})
        if (!vm[option].defaulted() && !rotating)
            throw UsageError(std::string("--") + option + " goes with --session-dir");
    if (rotating) {
        if (!(a.max_mib >= 0) || !std::isfinite(a.max_mib) || a.max_mib > 1e9)
            throw UsageError("--max-mib must be a number of MiB, 0 for no limit");
        a.rotation.every_s = parse_duration(a.rotate_every, "--rotate-every");
        a.rotation.max_bytes = uint64_t(a.max_mib * 1024 * 1024);
        o.rotation = a.rotation;
    }
    if (o.output.empty() && a.prometheus_address.empty() && !rotating)
        o.output = default_output();
    if (!vm["trace-buffer"].defaulted() && !o.probe.trace)
        throw UsageError("--trace-buffer goes with --trace");
    if (o.probe.trace && (o.probe.trace_buffer_mib < 1 || o.probe.trace_buffer_mib > 1024))
        throw UsageError("--trace-buffer must be between 1 and 1024 MiB");
    if (o.probe.running_holder_hz > 1000)
        throw UsageError("--running-holder-hz must be between 0 and 1000");
    if (o.probe.trace && o.output.empty())
        throw UsageError("--trace stores episodes in a session file: add -o FILE");
    if (!vm.count("sample") && !a.prometheus_address.empty() && o.output.empty())
        o.probe.time_period = kAlwaysOnSamplePeriod;
    if (o.probe.time_period < 1 || o.probe.time_period > 1u << 20)
        throw UsageError("--sample must be between 1 (time every episode) and 1048576");
    if (o.probe.trace && o.probe.time_period > 1)
        throw UsageError("--trace times every episode: it does not go with --sample");
    if (!a.prometheus_address.empty()) {
        metrics::parse_listen_address(a.prometheus_address);
        if (a.prometheus_top == 0)
            throw UsageError("--prometheus-top must be at least 1");
    }
}

// Serving before recording: a bad address or a missing privilege is said
// before a port is opened.
std::unique_ptr<metrics::PrometheusExporter> start_exporter(RecordArgs& a)
{
    auto exporter = std::make_unique<metrics::PrometheusExporter>(a.prometheus_address, a.prometheus_top,
                                                                  a.prometheus_cgroups, a.operator_labels, a.web);
    std::fprintf(stderr, "lockscope: serving Prometheus metrics at %s\n", exporter->url().c_str());
    return exporter;
}

// --realtime: this thread, and every thread it starts, at a SCHED_FIFO
// priority; a process it forks (the command, a workload) goes back to the
// normal policy (SCHED_RESET_ON_FORK).
void run_realtime(int priority)
{
    const int lowest = sched_get_priority_min(SCHED_FIFO), highest = sched_get_priority_max(SCHED_FIFO);
    if (priority < lowest || priority > highest)
        throw UsageError("--realtime takes a SCHED_FIFO priority from " + std::to_string(lowest) + " to " +
                         std::to_string(highest) + ", not " + std::to_string(priority));
    sched_param param{};
    param.sched_priority = priority;
    if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &param) != 0)
        throw Error("run at SCHED_FIFO priority " + std::to_string(priority), "--realtime", errno,
                    "needs CAP_SYS_NICE (run as root), and room for real-time tasks in this cgroup");
}

// The last lines: what was recorded, user-lock waits too where they were
// recorded, and where it went.
void print_result(const record::RecordResult& r, bool user_locks, bool to_stdout)
{
    const std::string counts = format_count(r.contentions) + " contentions, " +
                               (user_locks ? format_count(r.user_lock_waits) + " user-lock waits, " : std::string()) +
                               format_count(r.events) + " events, lost " + format_count(r.lost);
    if (r.output.empty()) {
        std::fprintf(stderr, "lockscope: %s: %zu interval%s, %s\n", r.interrupted ? "stopped" : "done", r.intervals,
                     r.intervals == 1 ? "" : "s", counts.c_str());
        return;
    }
    const std::string where = to_stdout ? "standard output" : r.output;
    std::fprintf(stderr, "lockscope: %s %s: %zu run%s, %zu intervals, %s\n", r.interrupted ? "stopped; kept" : "wrote",
                 where.c_str(), r.runs, r.runs == 1 ? "" : "s", r.intervals, counts.c_str());
    if (!to_stdout)
        std::fprintf(stderr, "lockscope: see it with 'lockscope report %s'\n", r.output.c_str());
}

// record -o -: the session is recorded into a file of our own and copied to
// standard output when it is complete; meanwhile standard output is stderr,
// so that the traced command's output does not mix into it (as perf does).
class SessionToStdout {
public:
    explicit SessionToStdout(record::RecordOptions& o)
    {
        if (isatty(STDOUT_FILENO))
            throw UsageError(
                "-o - writes the session, a binary file, to standard output: pipe it "
                "('| lockscope report -i -') or give -o FILE");
        file_.emplace("lockscope-record", ".lockscope");
        o.output = file_->path();
        o.overwrite = true;
        std::fflush(stdout);
        stdout_ = dup(STDOUT_FILENO);
        if (stdout_ < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
            throw Error("cannot set standard output aside", "stdout", errno);
    }
    ~SessionToStdout()
    {
        if (stdout_ >= 0)
            close(stdout_);
    }
    SessionToStdout(const SessionToStdout&) = delete;
    SessionToStdout& operator=(const SessionToStdout&) = delete;

    void copy() const
    {
        const int in = open(file_->path().c_str(), O_RDONLY | O_CLOEXEC);
        const bool copied = in >= 0 && copy_fd(in, stdout_);
        const int err = errno;
        if (in >= 0)
            close(in);
        if (!copied)
            throw Error("cannot write the session to standard output", "stdout", err);
    }

private:
    std::optional<TempFile> file_;
    int stdout_ = -1;
};

}  // namespace

int cmd_record(const Args& args)
{
    RecordArgs a;
    const po::options_description visible = describe(a);
    po::variables_map vm;
    reject_not_offered(args, "record");
    if (!parse(args, visible, visible, {}, vm, {kRecordUsage, kRecordExamples}, true, &a.o.command))
        return kExitOk;
    record::RecordOptions& o = a.o;
    apply_map_entries(vm, a.map_entries, o.probe);
    std::optional<SessionToStdout> to_stdout;
    if (o.output == "-")
        to_stdout.emplace(o);
    // --kind is applied in the kernel; --lock and --caller when a lock is
    // first named. Either way the session holds only the matching locks.
    o.filter = recording_filter(a.filters);
    apply_target(a.target, vm, o);
    check_options(a, vm);
    check_user_locks(a);
    o.status_line = isatty(STDERR_FILENO);
    if (vm.count("realtime"))
        run_realtime(a.realtime);

    std::unique_ptr<metrics::PrometheusExporter> exporter;
    if (!a.prometheus_address.empty()) {
        o.on_interval = [&](const record::IntervalView& v) { exporter->add_interval(v.batch, v.locks); };
        o.renew_probe = true;
        if (!a.web_config.empty())  // a bad file: one sentence, before anything starts
            a.web = metrics::load_web_config(a.web_config);
        record::validate(o);  // not root, bad target: say so before opening a port
        // The server's threads must not take the signals the recorder waits for.
        record::block_stop_signals();
        exporter = start_exporter(a);
    }
    const record::RecordResult result = record::record(o);
    if (to_stdout)
        to_stdout->copy();
    print_result(result, o.user_locks, to_stdout.has_value());
    return kExitOk;
}

}  // namespace lockscope::cli
