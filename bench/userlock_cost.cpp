// What user-lock recording (collector/userlock, bpf/userlock.bpf.c) costs,
// per futex wait of the process it records and per syscall of every other
// process: its programs run on the syscall tracepoints, so every syscall on
// the machine enters them. Measured side by side in one run, each attached
// run paired with a run with nothing attached just before it:
//
//   floor           empty programs on the same four hooks
//                   (bench/syscall_floor.bpf.c)
//   userlock        the userlock Recorder recording the mutex workload
//   userlock-all    the userlock Recorder recording every process
//                   (record --user-locks=all), the mutex workload among them
//   userlock-other  the userlock Recorder recording another, idle process,
//                   while the mutex workload (not recorded) runs
//
// Each run has two phases, one after the other, under the same programs:
// the mutex workload (bench/mutex_workload.h, in a child process that
// counts its lock acquisitions and, of them, the contended ones), then a
// getppid() loop in another child process (never recorded), timed by
// itself.
//
// Two runs of each kind per round: the first with the kernel's BPF
// statistics off, as a user runs it, for the workload's throughput and the
// getppid() loop's time against the bare run; the second with them on
// (BPF_ENABLE_STATS), for the programs' run time over each phase, in all
// and per hook. The statistics read the clock twice per program run, which
// on a virtual machine costs more than many programs do: a throughput
// measured with them on would charge that to every profiler.
//
// Figures per kind, median (min-max) over rounds: the workload's throughput
// against the bare run before it; the programs' BPF run time over the mutex
// phase per contended acquisition (a futex wait, or more, each), per hook,
// and per program run; the futex waits the Recorder counted against the
// workload's own count of contended acquisitions; the getppid() loop's ns
// per syscall against the bare run's, and the programs' BPF ns per syscall
// there. The BPF run time is the whole machine's: other processes' syscalls
// in the same window count too, so a quiet machine gives the truest
// per-wait figure.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/error.h"
#include "bench_summary.h"
#include "mutex_workload.h"
#include "syscall_floor_bpf.skel.h"
#include "probe/user_probe.h"

namespace {

namespace bench = lockscope::bench;
namespace ul = lockscope::userlock;
using Clock = std::chrono::steady_clock;

constexpr const char* kUsage =
    "usage: userlock_cost [--pairs N] [--duration SECONDS] [--threads N] [--rate N]\n"
    "                     [--kinds floor,userlock,userlock-all,userlock-other] [--json FILE]\n"
    "\n"
    "Measures what user-lock recording costs: per futex wait of the process it\n"
    "records, and per syscall of the processes it does not record. Each kind is\n"
    "run N times (--pairs, default 4), each time right after a run with nothing\n"
    "attached, in rotating order, and once more with the kernel's BPF statistics\n"
    "on (the other runs have them off) for the programs' run time, the\n"
    "recorders then with the empty programs beside them on the same events:\n"
    "  floor           empty programs on tp_btf/sys_enter, sys_exit, sched_switch\n"
    "                  and sched_waking\n"
    "  userlock        the user-lock Recorder recording the mutex workload\n"
    "  userlock-all    the Recorder recording every process (--user-locks=all)\n"
    "  userlock-other  the Recorder recording another, idle process while the\n"
    "                  mutex workload runs unrecorded\n"
    "A run is two phases of --duration seconds (default 2): --threads threads\n"
    "(default 4) contending on one pthread mutex in a child process, each\n"
    "holding it asleep for 1/N s so that the others wait in the futex (--rate,\n"
    "default 5000 contended acquisitions a second; 0: held for a short spin,\n"
    "as fast as the threads go), then a getppid() loop in another process.\n"
    "Prints a Markdown table, median (min-max) over pairs; --json FILE also\n"
    "writes every run and the summary. Needs root.\n";

const char* const kKinds[] = {"floor", "userlock", "userlock-all", "userlock-other"};

struct Args {
    unsigned pairs = 4;
    double duration_s = 2.0;
    unsigned threads = 4;
    unsigned rate = 5000;
    std::vector<std::string> kinds{"floor", "userlock", "userlock-all", "userlock-other"};
    std::string json;
};

// What a child reports when its phase is over.
struct Counts {
    uint64_t ops = 0;
    uint64_t contended = 0;
    uint64_t elapsed_ns = 0;
};

volatile uint64_t g_sink;

uint64_t since_ns(Clock::time_point start)
{
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
}

Counts mutex_phase(unsigned threads, double seconds, unsigned rate)
{
    const auto counts = lockscope::bench::mutex_workload(threads, seconds, rate);
    return {counts.ops, counts.contended, counts.elapsed_ns};
}

// getppid() as fast as it goes, a real syscall each time (no vDSO).
Counts syscall_loop(double seconds)
{
    const auto start = Clock::now();
    const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    uint64_t calls = 0;
    while (Clock::now() < end) {
        for (int i = 0; i < 256; ++i) {
            g_sink = g_sink + static_cast<uint64_t>(syscall(SYS_getppid));
        }
        calls += 256;
    }
    return {calls, 0, since_ns(start)};
}

// A child process that runs `body` once told to (go), reports its Counts,
// and stays alive until finish(): the Recorder reads a target's maps while
// it runs. Without go it only waits: an idle process to record. A child
// inherits the pipes of the children made before it, so they are finished
// in the reverse order (as destructors run): each sees its pipe close.
class Child {
public:
    explicit Child(const std::function<Counts()>& body)
    {
        int go[2];
        int result[2];
        if (pipe2(go, O_CLOEXEC) != 0 || pipe2(result, O_CLOEXEC) != 0) {
            throw lockscope::Error("create pipe", "child process", errno);
        }
        pid_ = fork();
        if (pid_ < 0) {
            throw lockscope::Error("fork", "child process", errno);
        }
        if (pid_ == 0) {
            close(go[1]);
            close(result[0]);
            char byte = 0;
            if (read(go[0], &byte, 1) == 1) {
                const Counts counts = body();
                if (write(result[1], &counts, sizeof(counts)) != static_cast<ssize_t>(sizeof(counts))) {
                    _exit(1);
                }
                while (read(go[0], &byte, 1) > 0) {
                }
            }
            _exit(0);
        }
        close(go[0]);
        close(result[1]);
        go_ = go[1];
        result_ = result[0];
    }
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;
    ~Child() { finish(); }

    pid_t pid() const { return pid_; }

    // Starts the phase and waits for its Counts, draining the Recorder's
    // samples meanwhile as a recording would.
    Counts run(ul::Recorder* recorder)
    {
        const char byte = 1;
        if (write(go_, &byte, 1) != 1) {
            throw lockscope::Error("start", "child process", errno);
        }
        pollfd ready{result_, POLLIN, 0};
        while (::poll(&ready, 1, recorder != nullptr ? 0 : 100) == 0) {
            if (recorder != nullptr) {
                recorder->poll(50);
            }
        }
        Counts counts;
        if (read(result_, &counts, sizeof(counts)) != static_cast<ssize_t>(sizeof(counts))) {
            throw lockscope::Error("read the results of", "child process", errno);
        }
        return counts;
    }

    void finish()
    {
        if (pid_ <= 0) {
            return;
        }
        close(go_);
        close(result_);
        int status = 0;
        waitpid(pid_, &status, 0);
        pid_ = -1;
    }

private:
    pid_t pid_ = -1;
    int go_ = -1;
    int result_ = -1;
};

// The hooks the programs run on, as their names say ("floor_sys_enter",
// "userlock_enter", "userlock_switch_chains", cut by the kernel to 15
// characters); the fork and exit programs of followed children are "other".
const char* const kHooks[] = {"sys_enter", "sys_exit", "sched_switch", "sched_waking", "other"};
constexpr std::size_t kHookCount = std::size(kHooks);

std::size_t hook_of(const char* name)
{
    const std::string n = name;
    const auto has = [&n](const char* part) { return n.find(part) != std::string::npos; };
    if (has("enter")) {
        return 0;
    }
    if (has("exit") && !has("exit_p")) {
        return 1;
    }
    // "floor_sched_swi", "userlock_switch"; "floor_sched_wak", "userlock_waking"
    if (has("_swi")) {
        return 2;
    }
    return has("_wak") ? 3 : 4;
}

// Run time and run count of the attached programs, all together and per hook.
struct ProgStats {
    uint64_t run_time_ns = 0;
    uint64_t runs = 0;
    uint64_t hook_ns[kHookCount] = {};
    uint64_t hook_runs[kHookCount] = {};

    uint64_t enter_runs() const { return hook_runs[0]; }
};

ProgStats operator-(const ProgStats& a, const ProgStats& b)
{
    ProgStats d{a.run_time_ns - b.run_time_ns, a.runs - b.runs};
    for (std::size_t h = 0; h < kHookCount; ++h) {
        d.hook_ns[h] = a.hook_ns[h] - b.hook_ns[h];
        d.hook_runs[h] = a.hook_runs[h] - b.hook_runs[h];
    }
    return d;
}

void add_prog_stats(int fd, ProgStats& stats)
{
    bpf_prog_info info{};
    uint32_t len = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0) {
        throw lockscope::Error("read the run-time statistics of", "BPF program", errno);
    }
    stats.run_time_ns += info.run_time_ns;
    stats.runs += info.run_cnt;
    const std::size_t hook = hook_of(info.name);
    stats.hook_ns[hook] += info.run_time_ns;
    stats.hook_runs[hook] += info.run_cnt;
}

// The kernel counts BPF run time while this descriptor is open, whatever
// kernel.bpf_stats_enabled says (another benchmark may switch it off).
class StatsOn {
public:
    StatsOn() : fd_(bpf_enable_stats(BPF_STATS_RUN_TIME))
    {
        if (fd_ < 0) {
            throw lockscope::Error("enable the kernel's BPF run-time statistics", "BPF_ENABLE_STATS", -fd_,
                                   "run as root");
        }
    }
    StatsOn(const StatsOn&) = delete;
    StatsOn& operator=(const StatsOn&) = delete;
    ~StatsOn() { close(fd_); }

private:
    int fd_;
};

// The programs of one kind, attached for one run; nothing for "bare". With
// `beside`, a recorder kind has the empty programs attached beside it too,
// on the same events (before it with `floor_first`, else after it: the
// first program on an event pays for what is cold).
class Attached {
public:
    Attached(const std::string& kind, pid_t workload, pid_t idle, bool beside, bool floor_first)
    {
        const bool recorder = kind != "floor" && kind != "bare";
        if (kind == "floor" || (recorder && beside && floor_first)) {
            attach_floor();
        }
        if (kind == "userlock-all") {
            recorder_.emplace(ul::Recorder::prepare({.all_processes = true}));
        } else if (kind == "userlock" || kind == "userlock-other") {
            recorder_.emplace(ul::Recorder::prepare({.tgids = {kind == "userlock" ? workload : idle}}));
        }
        if (recorder_) {
            recorder_->start();
            fds_ = recorder_->prog_fds();
        }
        if (recorder && beside && !floor_first) {
            attach_floor();
        }
        if (kind == "floor") {
            fds_ = floor_fds_;
        }
    }
    Attached(const Attached&) = delete;
    Attached& operator=(const Attached&) = delete;
    ~Attached() { syscall_floor_bpf::destroy(floor_); }

    ul::Recorder* recorder() { return recorder_ ? &*recorder_ : nullptr; }

    ProgStats stats() const { return stats_of(fds_); }
    // The empty programs' beside a recorder (nothing without them).
    ProgStats floor_stats() const { return recorder_ ? stats_of(floor_fds_) : ProgStats{}; }

private:
    void attach_floor()
    {
        floor_ = syscall_floor_bpf::open_and_load();
        if (floor_ == nullptr || syscall_floor_bpf::attach(floor_) != 0) {
            throw lockscope::Error("load and attach", "syscall floor programs", errno,
                                   "run as root on a kernel with BTF");
        }
        floor_fds_ = {bpf_program__fd(floor_->progs.floor_sys_enter), bpf_program__fd(floor_->progs.floor_sys_exit),
                      bpf_program__fd(floor_->progs.floor_sched_switch),
                      bpf_program__fd(floor_->progs.floor_sched_waking)};
    }

    static ProgStats stats_of(const std::vector<int>& fds)
    {
        ProgStats s;
        for (int fd : fds) {
            add_prog_stats(fd, s);
        }
        return s;
    }

    syscall_floor_bpf* floor_ = nullptr;
    std::optional<ul::Recorder> recorder_;
    std::vector<int> fds_;
    std::vector<int> floor_fds_;
};

// One run of one kind ("bare": nothing attached).
struct Run {
    double ops_per_s = 0;
    double contended_per_s = 0;
    uint64_t contended = 0;
    ProgStats mutex_bpf;
    ProgStats mutex_floor_bpf;  // the empty programs beside a recorder, same events
    double getppid_ns = 0;
    ProgStats getppid_bpf;
    std::optional<uint64_t> recorded_waits;  // userlock: the Recorder's futex waits of the workload
    uint64_t lost = 0;                       // userlock: waits or samples lost, all causes
};

// `only_target`: the workload was the only process recorded, so the waits
// left out (its threads' joins) are its own too.
uint64_t recorded_waits(const ul::Recording& recording, pid_t tgid, bool only_target)
{
    uint64_t waits = 0;
    for (const auto& lock : recording.locks) {
        waits += lock.tgid == tgid ? lock.waits : 0;
    }
    for (const auto& [reason, left] : recording.left_out) {
        waits += only_target ? left.waits : 0;
    }
    return waits;
}

// With `stats`, the kernel's BPF statistics are on through the run, and a
// recorder has the empty programs beside it (`floor_first`: attached first).
Run one_run(const Args& args, const std::string& kind, bool stats, bool floor_first = false)
{
    std::optional<StatsOn> stats_on;
    if (stats) {
        stats_on.emplace();
    }
    Child workload([&] { return mutex_phase(args.threads, args.duration_s, args.rate); });
    Child syscalls([&] { return syscall_loop(args.duration_s); });
    Child idle([] { return Counts{}; });
    Attached attached(kind, workload.pid(), idle.pid(), stats, floor_first);
    Run run;
    const ProgStats s0 = attached.stats();
    const ProgStats f0 = attached.floor_stats();
    const Counts work = workload.run(attached.recorder());
    const ProgStats s1 = attached.stats();
    run.mutex_floor_bpf = attached.floor_stats() - f0;
    const Counts calls = syscalls.run(attached.recorder());
    const ProgStats s2 = attached.stats();
    run.ops_per_s = static_cast<double>(work.ops) * 1e9 / static_cast<double>(work.elapsed_ns);
    run.contended_per_s = static_cast<double>(work.contended) * 1e9 / static_cast<double>(work.elapsed_ns);
    run.contended = work.contended;
    run.mutex_bpf = s1 - s0;
    run.getppid_ns = static_cast<double>(calls.elapsed_ns) / static_cast<double>(calls.ops);
    run.getppid_bpf = s2 - s1;
    // A figure from programs that never ran, or a recorder that saw none of
    // the workload's waits, would be no measurement: stop instead.
    if (stats && kind != "bare" && (run.mutex_bpf.runs == 0 || run.getppid_bpf.enter_runs() < calls.ops)) {
        throw std::runtime_error(kind +
                                 ": the programs ran fewer times than the getppid() loop made syscalls; "
                                 "the kernel's BPF statistics did not count");
    }
    if (kind == "userlock" || kind == "userlock-all") {
        attached.recorder()->stop();
        const ul::Recording recording = attached.recorder()->read();
        run.recorded_waits = recorded_waits(recording, workload.pid(), kind == "userlock");
        run.lost = recording.counts.lost_keys + recording.counts.lost_samples + recording.counts.lost_inflight;
        if (*run.recorded_waits == 0 && work.contended > 0) {
            throw std::runtime_error("the recorder counted none of the mutex workload's " +
                                     std::to_string(work.contended) + " contended acquisitions");
        }
    }
    return run;
}

double ratio(double a, double b)
{
    return b != 0 ? a / b : 0.0;
}

// The figures of one round of a kind: its run with the statistics off
// against the bare run before it (throughput, the getppid() loop's time),
// and its run with them on (the programs' run time).
std::map<std::string, double> figures(const Run& bare, const Run& run, const Run& timed)
{
    const double contended = static_cast<double>(timed.contended);
    const ProgStats& bpf = timed.mutex_bpf;
    std::map<std::string, double> f{
        {"throughput_ratio", ratio(run.ops_per_s, bare.ops_per_s)},
        {"ops_per_s", run.ops_per_s},
        {"contended_per_s", run.contended_per_s},
        {"bpf_ns_per_wait", ratio(static_cast<double>(bpf.run_time_ns), contended)},
        {"runs_per_wait", ratio(static_cast<double>(bpf.enter_runs()), contended)},
        {"bpf_ns_per_run", ratio(static_cast<double>(bpf.run_time_ns), static_cast<double>(bpf.runs))},
        {"bare_getppid_ns", bare.getppid_ns},
        {"getppid_ns", run.getppid_ns},
        {"getppid_ratio", ratio(run.getppid_ns, bare.getppid_ns)},
        {"getppid_extra_ns", run.getppid_ns - bare.getppid_ns},
        {"getppid_bpf_ns_per_syscall", ratio(static_cast<double>(timed.getppid_bpf.run_time_ns),
                                             static_cast<double>(timed.getppid_bpf.enter_runs()))},
    };
    for (std::size_t h = 0; h < kHookCount; ++h) {
        if (bpf.hook_runs[h] != 0) {
            f[std::string("bpf_ns_per_wait_") + kHooks[h]] = ratio(static_cast<double>(bpf.hook_ns[h]), contended);
            f[std::string("bpf_ns_per_run_") + kHooks[h]] =
                ratio(static_cast<double>(bpf.hook_ns[h]), static_cast<double>(bpf.hook_runs[h]));
        }
    }
    const ProgStats& beside = timed.mutex_floor_bpf;
    if (beside.run_time_ns != 0) {
        // the recorder against empty programs on the very same events
        f["bpf_vs_floor_same_window"] =
            ratio(static_cast<double>(bpf.run_time_ns), static_cast<double>(beside.run_time_ns));
        f["floor_same_window_ns_per_run"] =
            ratio(static_cast<double>(beside.run_time_ns), static_cast<double>(beside.runs));
        for (std::size_t h = 0; h < 4; ++h) {
            if (beside.hook_ns[h] != 0) {
                f[std::string("bpf_vs_floor_same_window_") + kHooks[h]] =
                    ratio(static_cast<double>(bpf.hook_ns[h]), static_cast<double>(beside.hook_ns[h]));
            }
        }
        if (timed.recorded_waits) {
            f["bpf_ns_above_floor_per_recorded_wait"] =
                ratio(static_cast<double>(bpf.run_time_ns) - static_cast<double>(beside.run_time_ns),
                      static_cast<double>(*timed.recorded_waits));
        }
    }
    if (timed.recorded_waits) {
        f["recorded_waits_per_contended"] = ratio(static_cast<double>(*timed.recorded_waits), contended);
        f["bpf_ns_per_recorded_wait"] =
            ratio(static_cast<double>(bpf.run_time_ns), static_cast<double>(*timed.recorded_waits));
        f["lost"] = static_cast<double>(run.lost + timed.lost);
    }
    return f;
}

struct Row {
    const char* label;
    const char* key;
    int decimals;
};

const Row kRows[] = {
    {"mutex workload's throughput / nothing attached", "throughput_ratio", 3},
    {"BPF ns per contended acquisition (futex wait)", "bpf_ns_per_wait", 0},
    {"program runs (syscalls) per contended acquisition", "runs_per_wait", 1},
    {"BPF ns per program run, mutex phase", "bpf_ns_per_run", 0},
    {"  of which sys_enter, per contended acquisition", "bpf_ns_per_wait_sys_enter", 0},
    {"  of which sys_exit, per contended acquisition", "bpf_ns_per_wait_sys_exit", 0},
    {"  of which sched_switch, per contended acquisition", "bpf_ns_per_wait_sched_switch", 0},
    {"  of which sched_waking, per contended acquisition", "bpf_ns_per_wait_sched_waking", 0},
    {"sys_enter, BPF ns per run", "bpf_ns_per_run_sys_enter", 0},
    {"sys_exit, BPF ns per run", "bpf_ns_per_run_sys_exit", 0},
    {"sched_switch, BPF ns per run", "bpf_ns_per_run_sched_switch", 0},
    {"sched_waking, BPF ns per run", "bpf_ns_per_run_sched_waking", 0},
    {"BPF time / empty programs on the same events (same window)", "bpf_vs_floor_same_window", 2},
    {"  on sys_enter", "bpf_vs_floor_same_window_sys_enter", 2},
    {"  on sys_exit", "bpf_vs_floor_same_window_sys_exit", 2},
    {"  on sched_switch", "bpf_vs_floor_same_window_sched_switch", 2},
    {"  on sched_waking", "bpf_vs_floor_same_window_sched_waking", 2},
    {"BPF ns above the empty programs per futex wait recorded", "bpf_ns_above_floor_per_recorded_wait", 0},
    {"futex waits recorded / contended acquisitions", "recorded_waits_per_contended", 2},
    {"BPF ns per futex wait recorded", "bpf_ns_per_recorded_wait", 0},
    {"contended acquisitions per second", "contended_per_s", 0},
    {"getppid() ns per syscall, nothing attached", "bare_getppid_ns", 0},
    {"getppid() ns per syscall, attached", "getppid_ns", 0},
    {"getppid() ns per syscall / nothing attached", "getppid_ratio", 3},
    {"getppid() ns per syscall above nothing attached", "getppid_extra_ns", 0},
    {"BPF ns per getppid() syscall (all the programs)", "getppid_bpf_ns_per_syscall", 0},
    {"waits or samples lost", "lost", 0},
};

void print_table(const Args& args, const std::map<std::string, std::map<std::string, bench::Spread>>& summary)
{
    std::printf("mutex workload at %u threads, rate %u, %u pairs of %g s per phase; median (min-max) over pairs\n\n",
                args.threads, args.rate, args.pairs, args.duration_s);
    std::printf("| |");
    for (const auto& kind : args.kinds) {
        std::printf(" %s |", kind.c_str());
    }
    std::printf("\n|---|");
    for (std::size_t i = 0; i < args.kinds.size(); ++i) {
        std::printf("--:|");
    }
    std::printf("\n");
    for (const Row& row : kRows) {
        std::printf("| %s |", row.label);
        for (const auto& kind : args.kinds) {
            std::printf(" %s |", bench::cell(summary.at(kind), row.key, row.decimals).c_str());
        }
        std::printf("\n");
    }
}

double number(const char* option, const char* text, double low, double high, bool whole = true)
{
    char* end = nullptr;
    errno = 0;
    const double value = std::strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !(value >= low && value <= high) ||
        (whole && value != static_cast<double>(static_cast<long>(value)))) {
        const int decimals = whole ? 0 : 1;
        const std::string range = std::string(whole ? "a whole number" : "a number") + " from " +
                                  bench::fixed(low, decimals) + " to " + bench::fixed(high, decimals);
        throw lockscope::UsageError(std::string(option) + " wants " + range + ", not '" + text + "'");
    }
    return value;
}

std::vector<std::string> kinds_of(const std::string& list)
{
    std::vector<std::string> kinds;
    std::size_t start = 0;
    while (start <= list.size()) {
        const std::size_t comma = std::min(list.find(',', start), list.size());
        const std::string kind = list.substr(start, comma - start);
        if (std::find(std::begin(kKinds), std::end(kKinds), kind) == std::end(kKinds)) {
            throw lockscope::UsageError("--kinds: unknown kind '" + kind +
                                        "' (choose from floor, userlock, userlock-all, userlock-other)");
        }
        if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
            kinds.push_back(kind);
        }
        start = comma + 1;
    }
    return kinds;
}

// Returns nullopt for --help (printed).
std::optional<Args> parse(int argc, char** argv)
{
    Args args;
    for (int i = 1; i < argc; ++i) {
        const std::string opt = argv[i];
        if (opt == "-h" || opt == "--help") {
            std::fputs(kUsage, stdout);
            return std::nullopt;
        }
        if (i + 1 >= argc) {
            throw lockscope::UsageError(opt.rfind("--", 0) == 0 ? opt + " wants a value"
                                                                : "unknown option '" + opt + "'");
        }
        const char* value = argv[++i];
        if (opt == "--pairs") {
            args.pairs = static_cast<unsigned>(number("--pairs", value, 1, 1000));
        } else if (opt == "--duration") {
            args.duration_s = number("--duration", value, 0.1, 3600, false);
        } else if (opt == "--threads") {
            args.threads = static_cast<unsigned>(number("--threads", value, 2, 256));
        } else if (opt == "--rate") {
            args.rate = static_cast<unsigned>(number("--rate", value, 0, 1000000));
        } else if (opt == "--kinds") {
            args.kinds = kinds_of(value);
        } else if (opt == "--json") {
            args.json = value;
        } else {
            throw lockscope::UsageError("unknown option '" + opt + "'");
        }
    }
    return args;
}

void measure(const Args& args)
{
    bench::Runs runs;
    const std::size_t total = args.pairs * args.kinds.size();
    std::size_t done = 0;
    for (unsigned r = 0; r < args.pairs; ++r) {
        for (std::size_t k = 0; k < args.kinds.size(); ++k) {
            const std::string& kind = args.kinds[(r + k) % args.kinds.size()];
            const Run bare = one_run(args, "bare", false);
            const Run run = one_run(args, kind, false);
            const Run timed = one_run(args, kind, true, r % 2 == 1);
            runs[kind].push_back(figures(bare, run, timed));
            const auto& f = runs[kind].back();
            std::fprintf(stderr,
                         "[%zu/%zu] %s: throughput %.3f of bare, %.0f BPF ns per contended acquisition, "
                         "getppid %.0f ns (bare %.0f)\n",
                         ++done, total, kind.c_str(), f.at("throughput_ratio"), f.at("bpf_ns_per_wait"),
                         f.at("getppid_ns"), f.at("bare_getppid_ns"));
        }
    }
    std::map<std::string, std::map<std::string, bench::Spread>> summary;
    for (const auto& [kind, list] : runs) {
        summary[kind] = bench::summarize(list);
    }
    print_table(args, summary);
    if (!args.json.empty()) {
        char head[128];
        std::snprintf(head, sizeof(head), "\"threads\": %u, \"rate\": %u, \"duration_s\": %g, \"pairs\": %u",
                      args.threads, args.rate, args.duration_s, args.pairs);
        bench::write_json(args.json, head, runs, summary);
    }
}

}  // namespace

int main(int argc, char** argv)
{
    try {
        const auto args = parse(argc, argv);
        if (!args) {
            return lockscope::kExitOk;
        }
        if (geteuid() != 0) {
            throw lockscope::Error("load BPF programs", "userlock_cost", EPERM, "run as root");
        }
        signal(SIGPIPE, SIG_IGN);
        measure(*args);
    } catch (const lockscope::UsageError& e) {
        std::fprintf(stderr, "userlock_cost: %s (try --help)\n", e.what());
        return lockscope::kExitUsage;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "userlock_cost: %s\n", e.what());
        return lockscope::kExitFailure;
    }
    return lockscope::kExitOk;
}
