#include "record/recorder.h"

#include <malloc.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>

#include "core/analysis/estimate.h"
#include "core/analysis/rollup.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/host/metadata.h"
#include "core/host/symbols.h"
#include "core/session_vocabulary.h"
#include "core/storage/session_store.h"
#include "identity/data_namer.h"
#include "probe/features.h"
#include "record/children.h"
#include "record/session_files.h"

namespace lockscope::record {

using probe::CgroupTarget;
using probe::Probe;
using probe::ProbeOptions;

namespace {

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
Rollup make_rollup(SessionFiles& files)
{
    std::vector<std::string> warnings;
    std::string why;
    const std::vector<uint64_t> runqueues = probe::percpu_runqueues(&why);
    if (!why.empty())
        warnings.push_back("per-CPU locks are not named: " + why);
    KernelSymbols syms = KernelSymbols::load();
    // kptr_restrict or perf_event_paranoid >= 2 hide kernel addresses from
    // all but CAP_SYSLOG: counts stay right, callers and many names do not.
    if (syms.empty())
        warnings.push_back(
            "/proc/kallsyms shows no kernel addresses, so callers, stacks and many locks cannot be "
            "named (needs CAP_SYSLOG as well as CAP_BPF + CAP_PERFMON, or root)");
    auto namer =
        identity::KernelDataNamer::for_running_kernel(syms, runqueues, probe::kmem_cache_kfunc_available(), warnings);
    for (const std::string& w : warnings)
        std::fprintf(stderr, "lockscope: %s\n", w.c_str());
    files.set_meta({{"lock_identity", namer->summary()}});
    return Rollup(std::move(syms), std::move(namer));
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
    if (!o.command.empty() && !executable_in_path(o.command[0]))
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

RecordResult record(const RecordOptions& o)
{
    validate(o);
    // Loading BPF objects parses the kernel's BTF (5-6 MiB) once per object
    // and frees it. glibc would raise its mmap threshold to that size after
    // the first free and serve the next copies from the heap, which it then
    // keeps: a fixed threshold gives every such buffer back when freed.
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);
    block_stop_signals();
    // Without a file (live consumers only) the data path is the same.
    SessionFiles files(o.output, o.overwrite, o.rotation, [&o] { return session_meta(o); });
    std::vector<LockInfo> lock_catalog;
    // Made after the first probe is loaded: loading keeps a copy of the
    // kernel's BTF (libbpf's, for CO-RE) until it is done, and the lock
    // namer keeps one of its own; one at a time, the recorder's peak memory
    // is one copy lower (5-6 MiB).
    std::optional<Rollup> made;
    if (!o.filter.empty())
        files.set_meta({{"filters", o.filter.describe()}});
    if (!o.probe.cgroups.empty()) {
        std::string list;
        for (const CgroupTarget& c : o.probe.cgroups)
            list += (list.empty() ? "" : ", ") + c.path;
        files.set_meta({{"cgroups", list}});
    }
    const sigset_t signals = stop_signals();
    RecordResult result;
    result.output = files.path();
    const uint64_t interval_ns = uint64_t(o.interval_s * 1e9);

    for (unsigned r = 0; r < o.repeat && !result.interrupted; r++) {
        std::optional<workload::SharedOps> ops;
        Child child;
        if (o.with_workload) {
            ops.emplace(o.workload.threads);
            child = spawn_workload(o.workload, *ops);
        } else if (!o.command.empty()) {
            child = spawn_command(o.command);
        }
        ProbeOptions po = o.probe;
        po.kind_bits = o.filter.kind_bits();
        po.tgid = o.pid ? o.pid : (!o.command.empty() && !o.all_cpus ? uint32_t(child.pid) : 0);
        std::optional<Probe> probe;
        try {
            probe.emplace(Probe::attach(po));
        } catch (...) {
            if (child.pid > 0) {
                kill(child.pid, SIGKILL);
                child.reap(true);
            }
            throw;
        }
        if (!made) {
            made.emplace(make_rollup(files));
            made->set_filter(o.filter);
        }
        Rollup& rollup = *made;
        rollup.reset_stacks();
        RawSnapshot base = probe->snapshot();
        rollup.baseline(base);
        if (po.tgid)
            probe->attach_user_probes(po.tgid);
        const std::string label = o.repeat > 1 ? "run " + std::to_string(r + 1) : "run";
        int64_t run_id = files.active() ? files.begin_run(label, base.taken_ns) : int64_t(r + 1);
        uint64_t file_start = base.taken_ns;  // of the run in the current file
        if (r == 0)
            std::fprintf(stderr, "lockscope: recording %s %s%s (Ctrl-C to stop)\n",
                         po.tgid ? ("process " + std::to_string(po.tgid)).c_str() : "system-wide",
                         files.active() ? "into " : "without a session file", files.path().c_str());
        if (r == 0) {
            // Said once: whether rwsem rows include the writers' optimistic spin.
            std::fprintf(stderr, "lockscope: rwsem spin observation: %s\n", probe->rwsem_spin_status().c_str());
            files.set_meta({{"rwsem_spin_observation", probe->rwsem_spin_status()},
                            {"running_holders", probe->running_holders_status()}});
            if (probe->running_holders_status().starts_with("unavailable"))
                std::fprintf(stderr, "lockscope: running holders' stacks: %s\n",
                             probe->running_holders_status().c_str());
        }
        child.release();
        if (int err = child.exec_error()) {
            child.reap(true);
            throw Error("cannot run command", o.command[0], err);
        }

        std::map<uint32_t, std::string> followed;  // processes of the traced tree seen
        const uint64_t start = base.taken_ns;
        const double limit_s = o.with_workload ? o.workload.duration_s + 5.0 : o.duration_s;
        const uint64_t end = limit_s > 0 ? start + uint64_t(limit_s * 1e9) : UINT64_MAX;
        uint64_t next_tick = start + interval_ns;
        uint64_t last_ops = 0;
        int64_t index = 0;
        bool final = false;
        std::string status = "complete";
        while (!final) {
            const uint64_t now = monotonic_ns();
            const uint64_t wake = std::min<uint64_t>({next_tick, end, now + 100000000ull});
            if (wake > now) {
                timespec ts{time_t((wake - now) / 1000000000ull), long((wake - now) % 1000000000ull)};
                siginfo_t info{};
                const int sig = sigtimedwait(&signals, &info, &ts);
                if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
                    result.interrupted = true;
                    status = "interrupted";
                    final = true;
                }
            }
            if (child.pid > 0 && child.reap(false))
                final = true;
            if (o.pid && !process_alive(pid_t(o.pid)))
                final = true;
            const uint64_t t = monotonic_ns();
            if (t >= end)
                final = true;
            if (t < next_tick && !final)
                continue;
            if (final)
                child.stop();  // before the last snapshot: its exit is part of the run
            // The last counters include the episodes still pending on a CPU,
            // and agree with the last traced episodes.
            if (final)
                probe->detach();
            // Taken before the snapshot, so every episode's lock has a row by then.
            std::vector<Episode> episodes = probe->take_episodes();
            RawSnapshot snap = probe->snapshot();
            for (const auto& [tgid, parent] : probe->traced_processes())
                followed.try_emplace(tgid, process_name(tgid));
            IntervalBatch batch = rollup.next(snap, run_id, index++);
            // Episodes that ended before the baseline are not in the run's counters.
            std::erase_if(episodes, [&](const Episode& e) { return e.end_ns < base.taken_ns; });
            batch.episodes = std::move(episodes);
            if (ops) {
                const uint64_t total = ops->total();
                batch.totals.ops = double(total - last_ops);
                batch.run.ops = double(total);
                last_ops = total;
            }
            files.write_interval(batch, lock_catalog);
            lock_catalog.insert(lock_catalog.end(), batch.new_locks.begin(), batch.new_locks.end());
            if (o.on_interval)
                o.on_interval(IntervalView{batch, lock_catalog, label});
            result.intervals++;
            result.contentions += batch.totals.counters.contentions;
            result.events += batch.totals.events;
            result.lost += batch.totals.lost;
            if (o.status_line)
                print_status(label, (snap.taken_ns - start) / 1e9, batch.totals, result.lost);
            next_tick += interval_ns;
            while (next_tick <= t)
                next_tick += interval_ns;
            if (!final && files.rotation_due(snap.taken_ns)) {
                // The next file's run starts at this snapshot: no event falls between files.
                RunInfo done = rollup.run_progress();
                done.label = label;
                done.start_ns = file_start;
                done.end_ns = snap.taken_ns;
                done.status = "complete";
                run_id = files.rotate(done, label, snap.taken_ns);
                rollup.baseline(snap);
                file_start = snap.taken_ns;
                index = 0;
                result.output = files.path();
            }
        }
        if (po.tgid)
            files.set_meta({{"children", po.children ? "followed" : "not followed"},
                            {"processes_followed", describe_followed(followed)}});
        RunInfo run = rollup.run_progress();
        run.label = label;
        run.start_ns = file_start;
        run.end_ns = monotonic_ns();
        run.status = status;
        if (ops)
            run.ops = double(ops->total());
        if (child.pid > 0 && child.exited) {
            result.command_status = child.status;
            if (o.with_workload && !(WIFEXITED(child.status) && WEXITSTATUS(child.status) == 0) && !result.interrupted)
                run.status = "failed";
        }
        files.end_run(run);
        result.runs++;
        if (o.status_line)
            std::fputc('\n', stderr);
        if (run.status == "failed")
            break;
    }
    files.close();
    return result;
}

}  // namespace lockscope::record
