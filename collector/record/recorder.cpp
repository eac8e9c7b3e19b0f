#include "record/recorder.h"

#include <malloc.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <future>
#include <map>
#include <optional>

#include "core/analysis/estimate.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/host/metadata.h"
#include "core/host/symbols.h"
#include "core/session_vocabulary.h"
#include "core/storage/session_store.h"
#include "identity/kernel_data.h"
#include "pipeline/rollup.h"
#include "pipeline/session_files.h"
#include "probe/features.h"
#include "record/children.h"
#include "record/user_locks.h"

namespace lockscope::record {

using pipeline::SessionFiles;
using probe::CgroupTarget;
using probe::Probe;
using probe::ProbeOptions;

namespace {

// Kernel-lock waiters' user stacks a second, at most: each is an 8 KiB copy
// made as the wait ends (with the lock just taken), and an unwind.
constexpr uint32_t kUserStacksPerSec = 100;

std::string format_rate(double v)
{
    char buf[32];
    if (v >= 1e6)
        std::snprintf(buf, sizeof buf, "%.1fM", v / 1e6);
    else if (v >= 1e3)
        std::snprintf(buf, sizeof buf, "%.1fk", v / 1e3);
    else
        std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
}

// The live line on a terminal's stderr, rewritten once per interval.
void print_status(const std::string& label, double elapsed_s, const IntervalTotals& totals, uint64_t lost)
{
    const double secs = std::max(totals.seconds(), 1e-9);
    std::fprintf(stderr, "\r\033[K  %s  %5.1f s  events %s/s  contentions %s/s  lost %llu", label.c_str(), elapsed_s,
                 format_rate(totals.events / secs).c_str(), format_rate(totals.counters.contentions / secs).c_str(),
                 (unsigned long long)lost);
    std::fflush(stderr);
}

std::map<std::string, std::string> session_meta(const RecordOptions& o)
{
    auto meta = collect_host_metadata();
    meta["recorder"] = "kernel";
    meta["interval_ms"] = std::to_string(std::lround(o.interval_s * 1000));
    meta["stack_period"] = std::to_string(o.probe.stack_period);
    set_timing_meta(meta, o.probe.time_period);
    meta["holder_period"] = probe::holder_stacks_available() ? std::to_string(o.probe.holder_period) : "unavailable";
    meta["running_holder_hz"] = std::to_string(o.probe.holder_period ? o.probe.running_holder_hz : 0);
    if (o.probe.trace) {
        meta["trace"] = "on";
        meta["trace_buffer_mib"] = std::to_string(o.probe.trace_buffer_mib);
    }
    meta["repeat"] = std::to_string(o.repeat);
    if (o.with_workload) {
        meta[kScopeKey] = kScopeSystem;
        meta["workload"] = o.workload.name;
        meta["workload.threads"] = std::to_string(o.workload.threads);
        char d[32];
        std::snprintf(d, sizeof d, "%g", o.workload.duration_s);
        meta["workload.duration_s"] = d;
        if (const workload::WorkloadInfo* w = workload::find(o.workload.name))
            meta["workload.lock"] = w->lock;
        if (o.workload.name == "pipes")
            meta["workload.locks"] = std::to_string(o.workload.locks);
    } else if (!o.command.empty()) {
        std::string cmd;
        for (const std::string& a : o.command)
            cmd += (cmd.empty() ? "" : " ") + a;
        meta["command"] = cmd;
        meta[kScopeKey] = kScopeCommandPrefix + cmd;
    } else if (o.pid) {
        meta[kScopeKey] = kScopePidPrefix + std::to_string(o.pid);
    } else {
        meta[kScopeKey] = kScopeSystem;
    }
    return meta;
}

std::string process_name(uint32_t tgid)
{
    std::ifstream in("/proc/" + std::to_string(tgid) + "/comm");
    std::string comm;
    std::getline(in, comm);
    return comm;
}

// "3: 1234 sh, 1240 lockscope, 1241 lockscope"; the first 64 of them.
std::string describe_followed(const std::map<uint32_t, std::string>& followed)
{
    std::string out = std::to_string(followed.size());
    size_t n = 0;
    for (const auto& [tgid, comm] : followed) {
        if (n++ == 64) {
            out += ", …";
            break;
        }
        out += (n == 1 ? ": " : ", ") + std::to_string(tgid) + (comm.empty() ? "" : " " + comm);
    }
    return out;
}

// Lock names come from kernel data where the kernel offers it (identity/);
// what is unavailable here is said once and kept in the session.
Rollup make_rollup(SessionFiles& files, const Probe& probe, KernelSymbols syms)
{
    std::vector<std::string> warnings;
    std::string why;
    const std::vector<uint64_t> runqueues = probe.percpu_runqueues(&why);
    if (!why.empty())
        warnings.push_back("per-CPU locks are not named: " + why);
    // kptr_restrict or perf_event_paranoid >= 2 hide kernel addresses from
    // all but CAP_SYSLOG: counts stay right, callers and many names do not.
    if (syms.empty())
        warnings.push_back(
            "/proc/kallsyms shows no kernel addresses, so callers, stacks and many locks cannot be "
            "named (needs CAP_SYSLOG as well as CAP_BPF + CAP_PERFMON, or root)");
    auto kernel_data =
        identity::KernelData::for_running_kernel(syms, runqueues, probe::kmem_cache_kfunc_available(), warnings);
    for (const std::string& w : warnings)
        std::fprintf(stderr, "lockscope: %s\n", w.c_str());
    files.set_meta({{"lock_identity", kernel_data->summary()}});
    return Rollup(std::move(syms), std::move(kernel_data));
}

}  // namespace

void block_stop_signals()
{
    sigset_t set = stop_signals();
    sigprocmask(SIG_BLOCK, &set, nullptr);
}

void validate(const RecordOptions& o)
{
    if (!(o.interval_s >= 0.01) || !std::isfinite(o.interval_s))
        throw UsageError("--interval must be at least 0.01 seconds");
    if (o.duration_s < 0 || !std::isfinite(o.duration_s))
        throw UsageError("--duration must be a positive number of seconds");
    if (o.repeat < 1)
        throw UsageError("--repeat must be at least 1");
    const int targets = int(o.with_workload) + int(!o.command.empty()) + int(o.pid != 0);
    if (targets > 1)
        throw UsageError("choose one target: --workload, -p PID or -- COMMAND");
    if (o.repeat > 1 && !o.with_workload && o.command.empty())
        throw UsageError("--repeat needs a --workload or a command to run again");
    if (o.with_workload)
        workload::validate(o.workload);
    if (!o.command.empty() && command_path(o.command[0]).empty())
        throw Error("command not found", o.command[0], 0, "check the name and PATH");
    if (o.pid && !process_alive(pid_t(o.pid)))
        throw Error("no process with PID " + std::to_string(o.pid), "");
    if (o.output.empty() && !o.rotation && !o.on_interval)
        throw UsageError("an output file is needed (-o FILE)");
    if (o.rotation) {
        if (!o.output.empty())
            throw UsageError("choose -o FILE or --session-dir DIR, not both");
        if (o.with_workload || !o.command.empty())
            throw UsageError("--session-dir is for always-on recording: system-wide, -p PID or --cgroup");
        if (!(o.rotation->every_s >= o.interval_s) || !std::isfinite(o.rotation->every_s))
            throw UsageError("--rotate-every must be at least one --interval");
        if (!o.rotation->keep && !o.rotation->max_bytes)
            throw UsageError("--session-dir needs --keep N or --max-mib M: a series without a limit fills the disk");
    }
    probe::require_recording_features();
}

namespace {

// One `record`: its runs, one after the other, into the same session files.
class Recording {
public:
    explicit Recording(const RecordOptions& o)
        : o_(o),
          files_(o.output, o.overwrite, o.rotation, [&o] { return session_meta(o); }),
          signals_(stop_signals()),
          interval_ns_(uint64_t(o.interval_s * 1e9))
    {
        result_.output = files_.path();
        describe_scope();
    }

    RecordResult run_all()
    {
        for (unsigned r = 0; r < o_.repeat && !result_.interrupted; r++)
            if (!record_run(r))
                break;
        files_.close();
        return result_;
    }

private:
    enum class Tick { none, interval, last };

    // What one run keeps between its intervals.
    struct Run {
        std::string label;
        int64_t id = 0;
        uint64_t base_ns = 0;     // the baseline snapshot
        uint64_t file_start = 0;  // of the run in the current file
        uint64_t end = UINT64_MAX;
        uint64_t next_tick = 0;
        uint64_t now = 0;
        uint64_t last_ops = 0;
        int64_t index = 0;
        std::string status = "complete";
        std::map<uint32_t, std::string> followed;  // processes of the traced tree seen
        std::optional<workload::SharedOps> ops;
        Child child;
        ProbeOptions po;           // what the probe was attached with
        size_t locks_in_use = 0;   // the probe's lock table at the last snapshot
        size_t stacks_in_use = 0;  // and its (lock, stack) sample table
        std::optional<Probe> probe;
        std::optional<UserLockRecording> user_locks;
        // The exporter alone: a fresh probe loading off the recording thread
        // (a run that ends meanwhile waits for it, then lets it go).
        std::future<Probe> loading;
    };

    void describe_scope()
    {
        if (!o_.filter.empty())
            files_.set_meta({{"filters", o_.filter.describe()}});
        if (!o_.probe.cgroups.empty()) {
            std::string list;
            for (const CgroupTarget& c : o_.probe.cgroups)
                list += (list.empty() ? "" : ", ") + c.path;
            files_.set_meta({{"cgroups", list}});
        }
    }

    // The run's target (a workload or a command, held until released) and
    // the probe attached to it; the target is killed if attaching fails.
    ProbeOptions start_target(Run& run)
    {
        if (o_.with_workload) {
            run.ops.emplace(o_.workload.threads);
            run.child = spawn_workload(o_.workload, *run.ops);
        } else if (!o_.command.empty()) {
            run.child = spawn_command(o_.command);
        }
        // /proc/kallsyms, read on a thread of its own while the probe loads:
        // some 90 ms of every start that the target would otherwise wait for.
        // Only once the target is forked: a child forked while another
        // thread holds a lock (the allocator's, a stream's) could never take
        // it, and the workload runs in the forked child without an exec.
        if (!rollup_ && !symbols_.valid())
            symbols_ = std::async(std::launch::async, [] { return KernelSymbols::load(); });
        ProbeOptions po = o_.probe;
        po.kind_bits = o_.filter.kind_bits();
        // The user code above the kernel locks' waits, unwound with the user
        // locks' samples. Not where a fresh probe may take over (its stack
        // ids start again).
        if (o_.user_locks && !o_.renew_probe && !o_.rotation)
            po.user_stacks_per_sec = kUserStacksPerSec;
        po.tgid = o_.pid ? o_.pid : (!o_.command.empty() && !o_.all_cpus ? uint32_t(run.child.pid) : 0);
        try {
            run.probe.emplace(Probe::attach(po));
        } catch (...) {
            if (run.child.pid > 0) {
                kill(run.child.pid, SIGKILL);
                run.child.reap(true);
            }
            throw;
        }
        start_user_locks(run);
        return po;
    }

    // Before the target is released: its first lock wait is recorded.
    void start_user_locks(Run& run)
    {
        if (!o_.user_locks)
            return;
        const pid_t target = o_.pid ? pid_t(o_.pid) : run.child.pid;
        // --trace: the user locks' waits one by one too, in a ring buffer
        // the size of the kernel's.
        uint32_t trace_bytes = 0;
        if (o_.probe.trace)
            for (trace_bytes = 4096;
                 trace_bytes < (uint64_t(o_.probe.trace_buffer_mib) << 20) && trace_bytes < (1u << 30);)
                trace_bytes <<= 1;
        if (o_.user_locks_all)
            run.user_locks.emplace(std::vector<pid_t>{}, run.probe->contention_state_fds(), false, true, trace_bytes);
        else if (target > 0)
            run.user_locks.emplace(std::vector<pid_t>{target}, run.probe->contention_state_fds(), o_.probe.children,
                                   false, trace_bytes);
    }

    // Said once, on the first run: what is recorded and what this kernel allows.
    void announce(const Run& run, const ProbeOptions& po)
    {
        std::fprintf(stderr, "lockscope: recording %s %s%s (Ctrl-C to stop)\n",
                     po.tgid ? ("process " + std::to_string(po.tgid)).c_str() : "system-wide",
                     files_.active() ? "into " : "without a session file", files_.path().c_str());
        // Whether rwsem rows include the writers' optimistic spin.
        std::fprintf(stderr, "lockscope: rwsem spin observation: %s\n", run.probe->rwsem_spin_status().c_str());
        files_.set_meta({{"rwsem_spin_observation", run.probe->rwsem_spin_status()},
                         {"running_holders", run.probe->running_holders_status()}});
        if (run.probe->running_holders_status().starts_with("unavailable"))
            std::fprintf(stderr, "lockscope: running holders' stacks: %s\n",
                         run.probe->running_holders_status().c_str());
    }

    // false: stop repeating (the workload failed).
    bool record_run(unsigned r)
    {
        Run run;
        const ProbeOptions po = run.po = start_target(run);
        // Made after the first probe is loaded: loading keeps a copy of the
        // kernel's BTF (libbpf's, for CO-RE) until it is done, and the lock
        // identity keeps one of its own; one at a time, the recorder's peak
        // memory is one copy lower (5-6 MiB).
        if (!rollup_) {
            rollup_.emplace(make_rollup(files_, *run.probe, symbols_.get()));
            rollup_->set_filter(o_.filter);
        }
        rollup_->reset_stacks();
        RawSnapshot base = run.probe->snapshot();
        rollup_->baseline(base);
        // A command's probes are in the file it is about to run, not in the
        // copy of lockscope it still is.
        if (po.tgid)
            run.probe->attach_user_probes(po.tgid, o_.pid ? std::string() : command_path(o_.command[0]));
        run.label = o_.repeat > 1 ? "run " + std::to_string(r + 1) : "run";
        run.id = files_.active() ? files_.begin_run(run.label, base.taken_ns) : int64_t(r + 1);
        run.base_ns = run.file_start = base.taken_ns;
        if (r == 0)
            announce(run, po);
        run.child.release();
        if (int err = run.child.exec_error()) {
            run.child.reap(true);
            throw Error("cannot run command", o_.command[0], err);
        }
        if (run.user_locks)
            run.user_locks->target_running();

        const double limit_s = o_.with_workload ? o_.workload.duration_s + 5.0 : o_.duration_s;
        run.end = limit_s > 0 ? run.base_ns + uint64_t(limit_s * 1e9) : UINT64_MAX;
        run.next_tick = run.base_ns + interval_ns_;
        for (Tick tick = Tick::none; tick != Tick::last;)
            if ((tick = wait(run)) != Tick::none)
                drain(run, tick == Tick::last);
        if (po.tgid)
            files_.set_meta({{"children", po.children ? "followed" : "not followed"},
                             {"processes_followed", describe_followed(run.followed)}});
        if (po.user_stacks_per_sec)
            note_user_stacks(run.probe->user_stack_counts(), po.user_stacks_per_sec);
        return end_run(run);
    }

    // Meta kernel_user_stacks: how many kernel-lock waiters' user stacks
    // were taken over the runs so far, and why others were not.
    void note_user_stacks(const probe::UserStackCounts& c, uint32_t per_sec)
    {
        user_stacks_.sent += c.sent;
        user_stacks_.rate_limited += c.rate_limited;
        user_stacks_.lost += c.lost;
        user_stacks_.no_user += c.no_user;
        files_.set_meta({{"kernel_user_stacks", "on (at most " + std::to_string(per_sec) +
                                                    " a second): " + std::to_string(user_stacks_.sent) + " taken, " +
                                                    std::to_string(user_stacks_.rate_limited) + " over the limit, " +
                                                    std::to_string(user_stacks_.lost) + " lost (ring buffer full), " +
                                                    std::to_string(user_stacks_.no_user) + " of kernel threads"}});
    }

    // Sleeps until the next tick, a stop signal, the target's end or the
    // duration's end; says whether an interval is due, and if it is the last.
    Tick wait(Run& run)
    {
        bool last = false;
        const uint64_t now = monotonic_ns();
        const uint64_t wake = std::min<uint64_t>({run.next_tick, run.end, now + 100000000ull});
        if (wake > now) {
            timespec ts{time_t((wake - now) / 1000000000ull), long((wake - now) % 1000000000ull)};
            siginfo_t info{};
            const int sig = sigtimedwait(&signals_, &info, &ts);
            if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
                result_.interrupted = true;
                run.status = "interrupted";
                last = true;
            }
        }
        if (run.child.pid > 0 && run.child.reap(false))
            last = true;
        if (o_.pid && !process_alive(pid_t(o_.pid)))
            last = true;
        run.now = monotonic_ns();
        if (run.now >= run.end)
            last = true;
        if (last)
            return Tick::last;
        return run.now < run.next_tick ? Tick::none : Tick::interval;
    }

    // One interval: the probe's snapshot rolled up, stored and handed to
    // live consumers; a series' next file begins here when one is due.
    void drain(Run& run, bool last)
    {
        if (last) {
            run.child.stop();  // before the last snapshot: its exit is part of the run
            // The last counters include the episodes still pending on a CPU,
            // and agree with the last traced episodes.
            run.probe->detach();
        }
        // Taken before the snapshot, so every episode's lock has a row by then.
        std::vector<Episode> episodes = run.probe->take_episodes();
        const bool rotating = !last && files_.rotation_due(monotonic_ns());
        // Attached before the old probe's last snapshot: no episode begins unseen.
        std::optional<Probe> fresh;
        if (rotating)
            fresh = fresh_probe(run);
        else if (!last && !files_.active() && o_.renew_probe)
            fresh = loaded_probe(run);
        RawSnapshot snap = run.probe->snapshot();
        run.locks_in_use = snap.locks.size();
        run.stacks_in_use = snap.stacks.size();
        for (const auto& [tgid, parent] : run.probe->traced_processes())
            run.followed.try_emplace(tgid, process_name(tgid));
        IntervalBatch batch = rollup_->next(snap, run.id, run.index++);
        if (run.user_locks) {
            const UserLockRecording::KernelSide kernel{
                .lock_id = [this](uint64_t address, uint32_t flags) -> std::optional<int64_t> {
                    const int64_t id = rollup_->kept_row(address, flags);
                    return id ? std::optional(id) : std::nullopt;
                },
                .stack_frames = [this](int32_t stack_id) { return rollup_->stack_frames(stack_id); }};
            if (last) {
                run.user_locks->finish(run.id, batch, kernel);
                for (const UserLockRow& row : batch.user_locks)  // the run's rows, whole
                    result_.user_lock_waits += row.waits;
            } else
                run.user_locks->interval(run.id, batch, kernel);
        }
        // Episodes that ended before the baseline are not in the run's counters.
        std::erase_if(episodes, [&](const Episode& e) { return e.end_ns < run.base_ns; });
        // After the user locks' traced waits, if any.
        batch.episodes.insert(batch.episodes.end(), std::make_move_iterator(episodes.begin()),
                              std::make_move_iterator(episodes.end()));
        if (run.ops) {
            const uint64_t total = run.ops->total();
            batch.totals.ops = double(total - run.last_ops);
            batch.run.ops = double(total);
            run.last_ops = total;
        }
        files_.write_interval(batch, lock_catalog_);
        lock_catalog_.insert(lock_catalog_.end(), batch.new_locks.begin(), batch.new_locks.end());
        if (o_.on_interval)
            o_.on_interval(IntervalView{batch, lock_catalog_, run.label});
        result_.intervals++;
        result_.contentions += batch.totals.counters.contentions;
        result_.events += batch.totals.events;
        result_.lost += batch.totals.lost;
        if (o_.status_line)
            print_status(run.label, (snap.taken_ns - run.base_ns) / 1e9, batch.totals, result_.lost);
        run.next_tick += interval_ns_;
        while (run.next_tick <= run.now)
            run.next_tick += interval_ns_;
        if (rotating)
            rotate(run, snap, std::move(fresh));
        else if (fresh) {
            const RawSnapshot base = fresh->snapshot();
            adopt(run, std::move(fresh), base);
        }
    }

    // The kernel's lock and stack tables are never emptied while a probe
    // runs: in a system-wide series (the exporter service) every lock and
    // stack ever seen keeps its row, until the tables are full and new ones
    // are lost. Once half full, the next file (or, for the exporter without
    // a file, an interval soon after) gets a fresh probe, attached before the
    // old one's last snapshot. Not for a traced process: its tree and user
    // probes belong to the first probe.
    static bool renewal_due(const Run& run)
    {
        const bool half_full = 2 * run.locks_in_use >= run.po.max_locks || 2 * run.stacks_in_use >= run.po.max_stacks;
        return half_full && !run.po.tgid;
    }

    // The next file's fresh probe, attached here: the file starts with it.
    std::optional<Probe> fresh_probe(const Run& run)
    {
        if (!renewal_due(run))
            return std::nullopt;
        return taking_over(
            run, [&run] { return Probe::attach(run.po); }, " with the next session");
    }

    // The exporter's fresh probe. Loading and attaching one takes seconds on
    // a busy machine, while the old probe goes on counting: it loads off this
    // thread, so that the intervals (and the scraped series) go on at their
    // pace meanwhile, and takes over at the first interval after it is
    // attached. Nothing the old probe counted until then is lost.
    std::optional<Probe> loaded_probe(Run& run)
    {
        if (!run.loading.valid()) {
            if (renewal_due(run))
                run.loading = std::async(std::launch::async, [po = run.po] { return Probe::attach(po); });
            return std::nullopt;
        }
        if (run.loading.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
            return std::nullopt;
        return taking_over(
            run, [&run] { return run.loading.get(); }, "");
    }

    template <class Attach>
    static std::optional<Probe> taking_over(const Run& run, Attach attach, const char* when)
    {
        try {
            std::optional<Probe> fresh(attach());
            std::fprintf(stderr,
                         "lockscope: the kernel's tables hold %zu of %u locks and %zu of %u stack samples: a fresh "
                         "probe takes over%s\n",
                         run.locks_in_use, run.po.max_locks, run.stacks_in_use, run.po.max_stacks, when);
            return fresh;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "lockscope: cannot start a fresh probe, going on with this one: %s\n", e.what());
            return std::nullopt;
        }
    }

    // The next file's run starts at this snapshot: no event falls between
    // files (with a fresh probe, none but those of the moment its nearly
    // empty tables take to read).
    void rotate(Run& run, const RawSnapshot& snap, std::optional<Probe> fresh)
    {
        std::optional<RawSnapshot> fresh_base;
        if (fresh)
            fresh_base = fresh->snapshot();
        RunInfo done = rollup_->run_progress();
        done.label = run.label;
        done.start_ns = run.file_start;
        done.end_ns = snap.taken_ns;
        done.status = "complete";
        run.id = files_.rotate(done, run.label, snap.taken_ns);
        if (fresh)
            adopt(run, std::move(fresh), *fresh_base);
        else
            rollup_->baseline(snap);
        run.file_start = snap.taken_ns;
        run.index = 0;
        result_.output = files_.path();
    }

    // The fresh probe replaces the old one (which detaches as it goes); the
    // roll-up and the lock catalog start again from its first snapshot.
    void adopt(Run& run, std::optional<Probe> fresh, const RawSnapshot& base)
    {
        run.probe = std::move(fresh);
        rollup_->forget_locks();
        lock_catalog_.clear();
        rollup_->baseline(base);
        run.locks_in_use = base.locks.size();
        run.stacks_in_use = base.stacks.size();
    }

    bool end_run(Run& run)
    {
        RunInfo info = rollup_->run_progress();
        info.label = run.label;
        info.start_ns = run.file_start;
        info.end_ns = monotonic_ns();
        info.status = run.status;
        if (run.ops)
            info.ops = double(run.ops->total());
        if (run.child.pid > 0 && run.child.exited) {
            result_.command_status = run.child.status;
            if (o_.with_workload && !(WIFEXITED(run.child.status) && WEXITSTATUS(run.child.status) == 0) &&
                !result_.interrupted)
                info.status = "failed";
        }
        files_.end_run(info);
        result_.runs++;
        if (o_.status_line)
            std::fputc('\n', stderr);
        return info.status != "failed";
    }

    const RecordOptions& o_;
    SessionFiles files_;                  // without a file (live consumers only) the data path is the same
    std::future<KernelSymbols> symbols_;  // /proc/kallsyms, for the rollup (start_target)
    const sigset_t signals_;
    const uint64_t interval_ns_;
    std::vector<LockInfo> lock_catalog_;
    std::optional<Rollup> rollup_;
    probe::UserStackCounts user_stacks_;  // kernel-lock waiters' user stacks, over the runs
    RecordResult result_;
};

}  // namespace

RecordResult record(const RecordOptions& o)
{
    validate(o);
    // Loading BPF objects parses the kernel's BTF (5-6 MiB) once per object
    // and frees it. glibc would raise its mmap threshold to that size after
    // the first free and serve the next copies from the heap, which it then
    // keeps: a fixed threshold gives every such buffer back when freed.
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);
    block_stop_signals();
    return Recording(o).run_all();
}

}  // namespace lockscope::record
