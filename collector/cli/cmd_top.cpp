// lockscope top: records like `record` (same recorder, no session file) and
// shows each interval as it is drained. Interactive on a terminal; plain
// periodic blocks otherwise.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>

#include "cli/options.h"
#include "cli/top_terminal.h"
#include "cli/top_view.h"
#include "core/error.h"
#include "core/format.h"
#include "record/recorder.h"

namespace lockscope::cli {
namespace {

constexpr const char* kTopUsage =
    "usage: lockscope top [options] [-- COMMAND [ARG...]]\n"
    "\n"
    "A live view of kernel lock contention, one frame per interval: the hottest\n"
    "locks (or callers, tasks, cgroups, kinds) with contentions/s, spin-failure rate, wait\n"
    "per second split into spinning and off-CPU, and the CPUs' idle fraction. With -p or\n"
    "-- COMMAND the target's user-space locks are rows too, by lock (SCOPE user: its futex\n"
    "waits; SHARE of the user locks' wait).\n"
    "Keys: s cycles the sort (or w wait, c contentions, f spin failures), g cycles\n"
    "the grouping (lock, caller, task, cgroup, kind), q quits. When stdout is not a\n"
    "terminal it prints one plain block per interval instead.\n"
    "\n"
    "Targets and filters as in record (-a, -p, --tid, -C, -G, --workload, -- COMMAND).\n"
    "As in perf lock contention, -t shows a row per thread (--by task), -E N rows, -k KEY\n"
    "orders them; the workload's thread count is --threads N (-t N still works, with a note).\n"
    "\n"
    "Needs root or CAP_BPF + CAP_PERFMON, like record.";

constexpr const char* kTopExamples =
    "  lockscope top\n"
    "  lockscope top --workload pipe --threads 4 --by caller -k contended\n"
    "  lockscope top -i 5 -d 60 -E 10 > contention.log";

bool is_count(const std::string& s)
{
    return !s.empty() && s.find_first_not_of("0123456789,-") == std::string::npos;
}

// -t N, the workload's threads, keeps working; -t alone is perf's per-thread view.
Args old_spellings(const Args& given)
{
    Args args = rewrite_old_spellings(given, "top", {{"-t", "--threads", is_count}});
    for (size_t i = 0; i < args.size() && args[i] != "--"; i++)
        if (args[i] == "-t") {
            args[i] = "--by";
            args.insert(args.begin() + long(i) + 1, "task");
        }
    return args;
}

std::string scope_of(const record::RecordOptions& o)
{
    if (o.with_workload)
        return "system-wide, workload " + o.workload.name;
    if (!o.command.empty())
        return (o.all_cpus ? "system-wide, command " : "command ") + o.command[0];
    if (o.pid)
        return "process " + std::to_string(o.pid);
    if (o.probe.tid)
        return "thread " + std::to_string(o.probe.tid);
    return "system-wide";
}

std::string clock_now()
{
    return format_local_now("%H:%M:%S");
}

// For logs: each interval as one block, a time stamp first.
void run_plain(record::RecordOptions o, const TopSettings& settings, const std::string& scope)
{
    TopModel model;
    o.on_interval = [&](const record::IntervalView& v) {
        model.update(v.batch, v.locks, v.run_label);
        std::string block = "--- " + clock_now() + "\n";
        for (const std::string& line : render_top(model.frame(settings), settings, scope, 100, false))
            block += line + "\n";
        block += "\n";
        std::fputs(block.c_str(), stdout);
        std::fflush(stdout);
    };
    record::record(o);
}

// Tells the key loop that the recorder thread has finished.
struct DonePipe {
    int fds[2] = {-1, -1};
    DonePipe()
    {
        if (pipe2(fds, O_CLOEXEC) != 0)
            throw Error("cannot create pipe", "", errno);
    }
    ~DonePipe()
    {
        close(fds[0]);
        close(fds[1]);
    }
    DonePipe(const DonePipe&) = delete;
    DonePipe& operator=(const DonePipe&) = delete;
};

// The recorder runs on its own thread; this one reads keys and redraws.
class LiveView {
public:
    LiveView(TopSettings settings, std::string scope) : settings_(settings), scope_(std::move(scope)) {}

    void run(record::RecordOptions o)
    {
        DonePipe done;
        std::exception_ptr failure;
        {
            RawTerminal terminal(STDIN_FILENO, STDOUT_FILENO);
            terminal_ = &terminal;
            o.on_interval = [&](const record::IntervalView& v) {
                std::lock_guard lock(mutex_);
                model_.update(v.batch, v.locks, v.run_label);
                draw_locked();
            };
            std::thread recorder([&] {
                try {
                    record::record(o);
                } catch (...) {
                    failure = std::current_exception();
                }
                (void)!write(done.fds[1], "x", 1);
            });
            try {
                read_keys(done.fds[0]);
            } catch (...) {
                // Joining is the only safe way out; the recorder stops on SIGTERM.
                bool quitting = false;
                stop_recorder(quitting);
                recorder.join();
                throw;
            }
            recorder.join();
            terminal_ = nullptr;
        }
        if (failure)
            std::rethrow_exception(failure);
        // The alternate screen is gone; leave the last frame in the scrollback.
        std::lock_guard lock(mutex_);
        if (model_.has_interval())
            for (const std::string& line : render_top(model_.frame(settings_), settings_, scope_, 100, false))
                std::printf("%s\n", line.c_str());
    }

private:
    void draw_locked()
    {
        size_t columns = 0, rows = 0;
        terminal_->size(columns, rows);
        if (!model_.has_interval()) {
            terminal_->draw({"lockscope top: " + scope_ + ", waiting for the first interval…", "",
                             "keys: s sort  g group  q quit"});
            return;
        }
        TopSettings shown = settings_;
        // Header, user-lock line, key help, blank line, titles and a "more" line take 7 rows.
        shown.lines = std::min(settings_.lines, rows > 8 ? rows - 8 : size_t(1));
        terminal_->draw(render_top(model_.frame(shown), shown, scope_, columns, true));
    }

    // Until the recorder finishes; `q` asks it to stop the way Ctrl-C does.
    void read_keys(int done_fd)
    {
        {
            std::lock_guard lock(mutex_);
            draw_locked();
        }
        bool quitting = false, keyboard = true;
        for (;;) {
            // A negative fd is skipped: once the terminal is gone, wait for the recorder only.
            pollfd fds[2] = {{keyboard ? STDIN_FILENO : -1, POLLIN, 0}, {done_fd, POLLIN, 0}};
            if (poll(fds, 2, -1) < 0) {
                if (errno == EINTR)
                    continue;
                stop_recorder(quitting);
                char c;
                (void)!read(done_fd, &c, 1);
                return;
            }
            if (fds[1].revents)
                return;
            if (!keyboard || !fds[0].revents)
                continue;
            char keys[32];
            const ssize_t n = (fds[0].revents & POLLIN) ? read(STDIN_FILENO, keys, sizeof keys) : 0;
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {  // the terminal is gone
                keyboard = false;
                stop_recorder(quitting);
                continue;
            }
            for (ssize_t i = 0; i < n; i++)
                if (!handle_key(keys[i]))
                    stop_recorder(quitting);
        }
    }

    // The recorder waits for SIGTERM synchronously (all threads block it).
    static void stop_recorder(bool& quitting)
    {
        if (!quitting)
            kill(getpid(), SIGTERM);
        quitting = true;
    }

    bool handle_key(char key)
    {
        std::lock_guard lock(mutex_);
        switch (key) {
            case 'q':
            case 'Q':
                return false;
            case 's':
                settings_.sort = next_sort(settings_.sort);
                break;
            case 'w':
                settings_.sort = TopSort::Wait;
                break;
            case 'c':
                settings_.sort = TopSort::Contentions;
                break;
            case 'f':
                settings_.sort = TopSort::SpinFailures;
                break;
            case 'g':
                settings_.by = next_group(settings_.by);
                break;
            default:
                return true;
        }
        draw_locked();
        return true;
    }

    TopSettings settings_;
    std::string scope_;
    std::mutex mutex_;
    TopModel model_;
    RawTerminal* terminal_ = nullptr;
};

}  // namespace

int cmd_top(const Args& given)
{
    record::RecordOptions o;
    std::string by = "lock";
    bool per_cgroup = false, use_bpf = false, no_user_locks = false;
    TargetArgs target;
    RowArgs rows;
    po::options_description visible("options");
    visible.add_options()("help,h", "show this help")("interval,i", po::value(&o.interval_s)->default_value(1.0),
                                                      "seconds per frame")(
        "duration,d", po::value(&o.duration_s),
        "seconds to run (with --workload: the workload's duration, "
        "default 5); default: until q, Ctrl-C or the target exits");
    add_target_options(visible, target, TargetParts::AllButShortThreads);
    visible.add_options()("by", po::value(&by),
                          "group rows by lock (class), caller, task (-t), cgroup, kind or instance (key g)")(
        "lock-cgroup", po::bool_switch(&per_cgroup), "perf's per-cgroup rows: the same as --by cgroup")(
        "use-bpf,b", po::bool_switch(&use_bpf), "accepted for perf's sake; lockscope always records with BPF")(
        "no-user-locks", po::bool_switch(&no_user_locks),
        "kernel locks only: no rows for the target's user-space locks (-p PID, -- COMMAND)");
    add_row_options(visible, rows, 20, "rows at most (0: as many as fit)", "lines,n");
    FilterArgs filter_args;
    add_filter_options(visible, filter_args);
    uint32_t map_entries = 0;
    add_map_entries_option(visible, map_entries);
    reject_not_offered(given, "top");
    po::variables_map vm;
    if (!parse(old_spellings(given), visible, visible, {}, vm, {kTopUsage, kTopExamples}, true, &o.command))
        return kExitOk;
    o.filter = recording_filter(filter_args);
    apply_target(target, vm, o);
    apply_map_entries(vm, map_entries, o.probe);
    // As record does for one target process: its user-space locks too.
    o.user_locks = !no_user_locks && !o.with_workload && (o.pid != 0 || !o.command.empty());

    TopSettings settings;
    if (per_cgroup && vm.count("by"))
        throw UsageError("choose one grouping: --by or --lock-cgroup");
    settings.by = per_cgroup ? GroupBy::Cgroup : parse_group_by(by);
    settings.sort = sort_from(rows);
    const size_t entries = entries_from(rows, vm);
    settings.lines = entries == 0 ? SIZE_MAX : entries;
    o.on_interval = [](const record::IntervalView&) {};  // no session file; set for real below
    record::validate(o);           // not root, no such target: one sentence before touching the terminal
    record::block_stop_signals();  // before the recorder thread starts, so no thread takes them

    const std::string scope = scope_of(o);
    if (isatty(STDOUT_FILENO) && isatty(STDIN_FILENO))
        LiveView(settings, scope).run(o);
    else
        run_plain(o, settings, scope);
    return kExitOk;
}

}  // namespace lockscope::cli
