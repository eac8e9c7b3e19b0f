#!/usr/bin/env python3
"""What a lock profiler costs the workload it watches, side by side.

For each workload, runs it bare and under each profiler, interleaved within
every round (bare, P1, bare, P2, ...; the profiler order rotates per round),
so that the machine's drifts hit all of them alike. Each profiler run is
paired with the bare run just before it: the throughput ratio P / bare is
taken per pair, and the table reports its median with the min-max over pairs.

The kernel's BPF run-time statistics are off in those runs, as a user runs a
profiler: they read the clock twice for every program run, which on a
virtual machine costs more than many programs do. After the rounds, one run
per profiler with them on (kernel.bpf_stats_enabled=1, restored afterwards)
gives its programs' BPF run time per handled event.

Workloads: pipe, unlink1, mmap1 (kernel locks: `lockscope workload`, the
profilers record system-wide) and mutex (a user lock: build/mutex_workload,
threads on one pthread mutex, futex-heavy; lockscope records it as
`record -p PID`, which records its user locks too).

Profilers:
  lockscope        lockscope record (system-wide, default aggregation, stacks;
                   -p PID for the mutex workload)
  lockscope-sample the same with --sample N (--sample, default 64): the
                   always-on mode, times one episode in N per CPU
  lockscope-no-running-holders
                   lockscope without the running holders' CPU-clock program
                   (--running-holder-hz 0): beside lockscope, what it costs
  bpftrace         a bpftrace script doing the same aggregation: begin/end
                   timing per lock, a log2 histogram, sum and count (for the
                   mutex workload: its futex waits, entry to exit, per word)
  bpftrace-kstack  the same, with wait time and count also per lock and kernel
                   stack (taken at the first contention_begin)
  perf-lock        perf lock record -a
  perf-lock-b      perf lock contention -a -b: perf's own BPF programs
                   (a perf built with its BPF skeletons, --perf-b;
                   bench/build_perf.sh)
  floor-empty      yardsticks, not profilers (bench/floor.bpf.c, run by
  floor-timed      bpf_floor): empty programs on the four hooks (and on the
  floor-hash       syscall tracepoints for the mutex workload, as lockscope
  floor-locks      then adds); who runs + clock read on the contention hooks
  floor-count      (empty ones on the sched hooks); clock + hash lookup by
                   thread id there (a per-task wait timer); the same plus
                   each wait added to a hash map by lock (the least a
                   per-lock profiler pays); and exact per-lock counts with no
                   clock (the always-on mode's yardstick). One program per
                   event on each hook, as lockscope has.

Figures per profiler: throughput ratio vs bare; BPF run time per handled
event from the stats run, over the profiler's own programs (perf lock record
uses no BPF); its user+system CPU as a share of one CPU; its peak RSS; its
output size per minute. Lost events: each profiler's own count where it
keeps one, and a separate pass in which `perf stat`, an independent counter,
counts the lock:contention_end tracepoint over the same tasks lockscope
records (kernel-lock workloads).

Needs root, bpftrace and perf (scripts/install-deps.sh --bench installs them;
--bench-perf also builds perf with its BPF skeletons). Writes overhead.md and
overhead.json to --out.

usage: bench/overhead.py [--lockscope build/lockscope] [--workloads pipe,unlink1,mmap1,mutex]
                         [--threads 4] [--duration 5] [--pairs 5]
                         [--profilers lockscope,bpftrace,bpftrace-kstack,perf-lock,perf-lock-b,floor-empty,...]
                         [--floor build/bpf_floor] [--mutex-workload build/mutex_workload]
                         [--perf-b build/perf/perf] [--sample N] [--out DIR]

With lockscope-sample and floor-empty both measured, the table is followed by
the difference of their throughput ratios (the always-on mode's target: at
most 0.02 below the empty programs').
"""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import kernel_bpf_stats

AGGREGATE = r"""
tracepoint:lock:contention_begin /!@start[tid]/ { @start[tid] = nsecs; @lock[tid] = args->lock_addr; }
tracepoint:lock:contention_end /@start[tid]/ {
  $d = nsecs - @start[tid];
  @wait_hist[@lock[tid]] = hist($d);
  @wait_ns[@lock[tid]] = sum($d);
  @contentions[@lock[tid]] = count();
  delete(@start[tid]); delete(@lock[tid]);
}
"""
AGGREGATE_KSTACK = r"""
tracepoint:lock:contention_begin /!@start[tid]/ { @start[tid] = nsecs; @lock[tid] = args->lock_addr; @stack[tid] = kstack; }
tracepoint:lock:contention_end /@start[tid]/ {
  $d = nsecs - @start[tid];
  @wait_hist[@lock[tid]] = hist($d);
  @wait_ns[@lock[tid], @stack[tid]] = sum($d);
  @contentions[@lock[tid], @stack[tid]] = count();
  delete(@start[tid]); delete(@lock[tid]); delete(@stack[tid]);
}
"""
# The mutex workload's user-lock waits, timed as lockscope times them: the
# futex wait calls of one process (FUTEX_WAIT, FUTEX_WAIT_BITSET, FUTEX_LOCK_PI
# and LOCK_PI2), entry to exit, per futex word. PID is the workload's.
AGGREGATE_FUTEX = r"""
tracepoint:syscalls:sys_enter_futex /pid == PID/ {
  $op = args->op & 127;
  if ($op == 0 || $op == 9 || $op == 6 || $op == 13) { @start[tid] = nsecs; @word[tid] = args->uaddr; }
}
tracepoint:syscalls:sys_exit_futex /@start[tid]/ {
  $d = nsecs - @start[tid];
  @wait_hist[@word[tid]] = hist($d);
  @wait_ns[@word[tid]] = sum($d);
  @waits[@word[tid]] = count();
  delete(@start[tid]); delete(@word[tid]);
}
"""
PROFILERS = ("lockscope", "lockscope-sample", "lockscope-no-running-holders", "bpftrace", "bpftrace-kstack", "perf-lock",
             "perf-lock-b", "floor-empty", "floor-timed", "floor-hash", "floor-locks", "floor-count")
# Workloads that are user-space locks: a profiler records the workload's process.
USER_LOCK_WORKLOADS = ("mutex",)


LOCKSCOPE_KINDS = ("lockscope", "lockscope-sample", "lockscope-no-running-holders")


def die(msg):
    sys.exit(f"overhead: {msg}")


def bpf_stats_enabled():
    """The kernel's BPF run-time statistics on for the block (bench/kernel_bpf_stats.py)."""
    return kernel_bpf_stats.enabled()


def bpf_progs_of(pid):
    """run_time_ns and run_cnt of the BPF programs held by process `pid`."""
    mine = kernel_bpf_stats.prog_ids_of(pid)
    out = subprocess.run(["bpftool", "-j", "prog", "show"], check=True, capture_output=True, text=True).stdout
    progs = {}
    for p in json.loads(out):
        if p["id"] in mine:
            progs[p["id"]] = (p.get("name", "?"), p.get("run_time_ns", 0), p.get("run_cnt", 0))
    return progs


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def peak_rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Workload:
    """One run of a workload. A kernel-lock workload runs whole in go(); the
    mutex workload starts first and waits, so that a profiler can record its
    process (pid) before go() releases it."""

    def __init__(self, args, name):
        self.name = name
        self.proc = None
        if name in USER_LOCK_WORKLOADS:
            self.proc = subprocess.Popen([args.mutex_workload, "--threads", str(args.threads), "--duration",
                                          str(args.duration), "--wait"], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if self.proc.stdout.readline().strip() != "ready":
                die(f"workload {name} did not start: {self.proc.stderr.read().strip()[-300:]}")
            self.cmd = None
            return
        self.cmd = [args.lockscope, "workload", name, "-t", str(args.threads), "-d", str(args.duration),
                    "-i", str(args.duration)]
        if name.startswith("unlink"):
            self.cmd += ["--dir", args.scratch]

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def go(self):
        """Runs it; its throughput in ops/s, and the CPU seconds its process
        used a wall second (its own rusage: what a profiler's programs cost
        in its syscalls and switches is in it)."""
        if not self.proc:
            self.proc = subprocess.Popen(self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True)
        t0 = time.monotonic()
        self.proc.stdin.write("go\n")
        self.proc.stdin.close()
        out = self.proc.stdout.read()
        err = self.proc.stderr.read()
        _, status, usage = os.wait4(self.proc.pid, 0)
        wall = time.monotonic() - t0
        self.proc.returncode = code = os.waitstatus_to_exitcode(status)
        m = re.search(r"= ([0-9.]+) ops/s", out + err)
        if code != 0 or not m:
            die(f"workload {self.name} failed: {err.strip()[-300:]}")
        return float(m.group(1)), (usage.ru_utime + usage.ru_stime) / wall


def run_workload(args, workload):
    return Workload(args, workload).go()


class Profiler:
    """One profiler process: started, measured over the workload, stopped."""

    def __init__(self, args, kind, workdir, tag, target=None):
        """target: the pid of a user-lock workload's process, for lockscope to
        record (with its user locks) and bpftrace to filter on."""
        self.kind = kind
        self.output = None
        if kind in LOCKSCOPE_KINDS:
            self.output = os.path.join(workdir, f"{tag}.lockscope")
            cmd = [args.lockscope, "record", "-o", self.output, "-f"]
            if target:
                cmd += ["-p", str(target)]
            if kind == "lockscope-sample":
                cmd += ["--sample", str(args.sample)]
            if kind == "lockscope-no-running-holders":
                cmd += ["--running-holder-hz", "0"]
            ready = "recording"
        elif kind.startswith("bpftrace"):
            script = os.path.join(workdir, f"{kind}.bt")
            with open(script, "w") as f:
                if target:
                    f.write(AGGREGATE_FUTEX.replace("PID", str(target)))
                else:
                    f.write(AGGREGATE_KSTACK if kind == "bpftrace-kstack" else AGGREGATE)
            self.output = os.path.join(workdir, f"{tag}.bt.out")
            cmd = ["bpftrace", "-o", self.output, script]
            ready = None  # bpftrace -o writes "Attaching N probes..." to the file
        elif kind == "perf-lock":
            self.output = os.path.join(workdir, f"{tag}.perf.data")
            cmd = ["perf", "lock", "record", "-a", "-o", self.output]
            ready = None
        elif kind == "perf-lock-b":
            # its report (on stderr when stopped) is its output
            self.output = os.path.join(workdir, f"{tag}.perf-b.out")
            cmd = [args.perf_b, "lock", "contention", "-a", "-b", "--output", self.output]
            ready = None
        elif kind.startswith("floor-"):
            # the mode's programs alone on the contention hooks: one program
            # per event, as lockscope runs; for a user-lock workload also on
            # the syscall hooks, which lockscope then adds
            cmd = [args.floor, "100000", kind[len("floor-"):], "syscalls" if target else "only"]
            ready = "attached"
        else:
            die(f"unknown profiler {kind}")
        self.started = time.monotonic()
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if ready:
            line = self.proc.stderr.readline()
            if ready not in line:
                self.proc.kill()
                die(f"{kind} did not start: {line}{self.proc.stderr.read()[-300:]}")
        elif kind.startswith("bpftrace"):
            deadline = time.monotonic() + 30
            while not (os.path.exists(self.output) and "Attaching" in open(self.output).read()):
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.proc.kill()
                    die(f"{kind} did not attach: {self.proc.stderr.read()[-300:]}")
                time.sleep(0.05)
        elif kind == "perf-lock-b":
            # it says nothing when ready: wait for its programs
            deadline = time.monotonic() + 60
            while not bpf_progs_of(self.proc.pid):
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.proc.kill()
                    die(f"{kind} did not attach: {self.proc.stderr.read()[-300:]}")
                time.sleep(0.1)
        time.sleep(1.0)  # perf prints nothing when ready; everyone gets the same settle time

    def snapshot(self):
        return bpf_progs_of(self.proc.pid), cpu_seconds(self.proc.pid), time.monotonic()

    def stop(self):
        rss = peak_rss_mib(self.proc.pid)
        self.proc.send_signal(signal.SIGINT)
        err = ""
        for wait_s in (300, 10):  # bpftrace prints its maps; perf may miss a first SIGINT while it sets up
            try:
                _, err = self.proc.communicate(timeout=wait_s)
                break
            except subprocess.TimeoutExpired:
                self.proc.send_signal(signal.SIGINT)
        else:
            self.proc.kill()
            die(f"{self.kind} did not stop on SIGINT")
        if self.proc.returncode not in (0, -signal.SIGINT, 130):
            die(f"{self.kind} exited {self.proc.returncode}: {err.strip()[-300:]}")
        wall = time.monotonic() - self.started
        size = os.path.getsize(self.output) if self.output and os.path.exists(self.output) else 0
        return rss, size / (1024 * 1024) / wall * 60, err


def bpf_delta(s0, s1):
    ns = cnt = 0
    per_prog = {}
    for pid, (name, rt1, c1) in s1.items():
        _, rt0, c0 = s0.get(pid, (name, 0, 0))
        per_prog[name] = {"run_time_ns": rt1 - rt0, "run_cnt": c1 - c0}
        ns += rt1 - rt0
        cnt += c1 - c0
    return per_prog, ns, cnt


def lockscope_lost(args, session):
    rep = subprocess.run([args.lockscope, "report", session, "--format", "json"], capture_output=True, text=True)
    if rep.returncode != 0:
        die(f"lockscope report failed: {rep.stderr.strip()}")
    totals = json.loads(rep.stdout)["totals"]
    return totals.get("lost", 0), totals.get("contentions", 0)


def perf_lost(data):
    rep = subprocess.run(["perf", "report", "-i", data, "--stats"], capture_output=True, text=True)
    m = re.search(r"LOST events:\s+(\d+)", rep.stdout)
    return int(m.group(1)) if m else 0


def measured_run(args, workload, kind, workdir, tag):
    work = Workload(args, workload)
    prof = Profiler(args, kind, workdir, tag, target=work.pid)
    s0, c0, t0 = prof.snapshot()
    ops, util = work.go()
    s1, c1, t1 = prof.snapshot()
    per_prog, ns, cnt = bpf_delta(s0, s1)
    rss, mib_per_min, _ = prof.stop()
    lost = None
    if kind in LOCKSCOPE_KINDS:
        lost, _ = lockscope_lost(args, prof.output)
    elif kind == "perf-lock":
        lost = perf_lost(prof.output)
    if prof.output and os.path.exists(prof.output):
        os.unlink(prof.output)
    return {"ops": ops, "cpu_per_s": util, "bpf_ns_per_event": ns / cnt if cnt else None,
            "events_per_s": cnt / (t1 - t0),
            "per_program": per_prog, "cpu_pct": 100 * (c1 - c0) / (t1 - t0), "rss_mib": rss,
            "mib_per_min": mib_per_min, "lost": lost}


def stats_were_on():
    with open(kernel_bpf_stats.SYSCTL) as f:
        return f.read().strip() != "0"


def agreement_pass(args, workload, workdir):
    """lockscope's count of episodes against perf stat's count of the
    lock:contention_end tracepoint over the same tasks: perf stat runs
    `lockscope record -- lockscope workload ...`, which records only the
    workload process, and perf counts the recorder and the workload (its
    child). So perf may count a few more (the recorder's own), never fewer
    unless lockscope dropped some."""
    session = os.path.join(workdir, f"{workload}-agree.lockscope")
    stat_out = os.path.join(workdir, "perf-stat.csv")
    cmd = ["perf", "stat", "-x", ",", "-o", stat_out, "-e", "lock:contention_end", "--",
           args.lockscope, "record", "-o", session, "-f", "--", args.lockscope, "workload", workload,
           "-t", str(args.threads), "-d", str(args.duration)]
    if workload.startswith("unlink"):
        cmd += ["--dir", args.scratch]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        die(f"agreement pass failed: {res.stderr.strip()[-300:]}")
    lost, contentions = lockscope_lost(args, session)
    counted = None
    with open(stat_out) as f:
        for line in f:
            parts = line.strip().split(",")
            if len(parts) > 2 and parts[2] == "lock:contention_end":
                counted = int(parts[0])
    if counted is None:
        die("perf stat did not count lock:contention_end")
    return {"lockscope_contentions": contentions, "perf_stat_contention_end": counted, "lockscope_lost": lost}


def summarize(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def fmt(s, spec="{:.3f}", unit=""):
    if s is None:
        return "-"
    return f"{spec.format(s['median'])}{unit} ({spec.format(s['min'])}–{spec.format(s['max'])})"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lockscope", default="build/lockscope")
    p.add_argument("--workloads", default="pipe,unlink1,mmap1,mutex")
    p.add_argument("--threads", type=int, default=4)
    p.add_argument("--duration", type=float, default=5)
    p.add_argument("--pairs", type=int, default=5)
    # the A/B of one lockscope feature is asked for by name, not run by default
    p.add_argument("--profilers", default=",".join(x for x in PROFILERS if x != "lockscope-no-running-holders"))
    p.add_argument("--floor", help="bpf_floor (default: next to --lockscope)")
    p.add_argument("--mutex-workload", help="the mutex workload (default: mutex_workload next to --lockscope)")
    p.add_argument("--perf-b", help="perf with its BPF skeletons, for perf-lock-b (default: perf/perf next to "
                                    "--lockscope, where bench/build_perf.sh puts it)")
    p.add_argument("--sample", type=int, default=64, help="N of the lockscope-sample profiler (record --sample N)")
    p.add_argument("--out", default="overhead-results")
    p.add_argument("--max-cpu-skew", type=float, default=0.15,
                   help="a pair whose runs' CPU use differs by more than this share is run again (twice at most)")
    args = p.parse_args()
    if os.geteuid() != 0:
        die("needs root (BPF programs, kernel BPF statistics, perf -a)")
    if not os.access(args.lockscope, os.X_OK):
        die(f"{args.lockscope} is not an executable; build first (scripts/build.sh) or pass --lockscope")
    args.floor = args.floor or os.path.join(os.path.dirname(args.lockscope), "bpf_floor")
    args.mutex_workload = args.mutex_workload or os.path.join(os.path.dirname(args.lockscope), "mutex_workload")
    args.perf_b = args.perf_b or os.path.join(os.path.dirname(args.lockscope), "perf", "perf")
    profilers = [x for x in args.profilers.split(",") if x]
    workloads = [x for x in args.workloads.split(",") if x]
    if any(w in USER_LOCK_WORKLOADS for w in workloads) and not os.access(args.mutex_workload, os.X_OK):
        die(f"{args.mutex_workload} is not an executable; build it (scripts/build.sh --all) or pass "
            "--mutex-workload")
    if "perf-lock-b" in profilers and not os.access(args.perf_b, os.X_OK):
        die(f"{args.perf_b} is not an executable: bench/build_perf.sh builds it, or pass --perf-b")
    if any(x.startswith("floor-") for x in profilers) and not os.access(args.floor, os.X_OK):
        die(f"{args.floor} is not an executable; build it (scripts/build.sh --all) or pass --floor")
    for x in profilers:
        if x not in PROFILERS:
            die(f"unknown profiler '{x}' (choose from {', '.join(PROFILERS)})")
    # perf: perf lock record, and the independent count of lockscope's pass
    needed = {"bpftool": True, "bpftrace": any(x.startswith("bpftrace") for x in profilers),
              "perf": "perf-lock" in profilers or "lockscope" in profilers}
    for tool in (t for t, need in needed.items() if need):
        if not shutil.which(tool):
            die(f"{tool} not found: run scripts/install-deps.sh --bench")
    if args.pairs < 1 or args.duration <= 0 or args.threads < 1:
        die("--pairs, --duration and --threads must be positive")
    os.makedirs(args.out, exist_ok=True)

    results = {"threads": args.threads, "duration_s": args.duration, "pairs": args.pairs,
               "max_cpu_skew": args.max_cpu_skew,
               "kernel": os.uname().release, "cpus": os.cpu_count(), "workloads": {}}
    total = len(workloads) * (args.pairs * 2 + 1) * len(profilers)
    done = 0
    with tempfile.TemporaryDirectory(prefix="lockscope-overhead-") as workdir:
        args.scratch = workdir
        for workload in workloads:
            runs = {k: [] for k in profilers}
            stats_on = 0  # throughput runs that found the statistics on (another user's)
            repeated = 0
            for r in range(args.pairs):
                order = profilers[r % len(profilers):] + profilers[:r % len(profilers)]
                for kind in order:
                    for attempt in range(3):
                        stats_on += stats_were_on()
                        bare, bare_util = run_workload(args, workload)
                        m = measured_run(args, workload, kind, workdir, f"{workload}-{kind}-{r}")
                        m["bare_ops"], m["bare_cpu_per_s"] = bare, bare_util
                        m["ratio"] = m["ops"] / bare
                        # work per CPU second of the workload's own, against bare's
                        m["cpu_ratio"] = (m["ops"] / m["cpu_per_s"]) / (bare / bare_util)
                        # A pair whose two runs got unequal shares of the machine (another
                        # job took CPUs from one of them) compares nothing: run it again.
                        m["disturbed"] = abs(m["cpu_per_s"] / bare_util - 1) > args.max_cpu_skew
                        if not m["disturbed"]:
                            break
                        repeated += 1
                        print(f"{workload} round {r + 1}: {kind} pair disturbed (CPU {bare_util:.2f} bare, "
                              f"{m['cpu_per_s']:.2f} profiled); again", file=sys.stderr, flush=True)
                    done += 2
                    runs[kind].append(m)
                    print(f"[{done}/{total}] {workload} round {r + 1}: {kind} {m['ops']:.0f} ops/s, "
                          f"bare {bare:.0f}, ratio {m['ratio']:.3f}, per CPU second {m['cpu_ratio']:.3f}",
                          file=sys.stderr, flush=True)
            # The programs' own time, in runs of their own with the statistics on.
            timed = {}
            with bpf_stats_enabled():
                for kind in profilers:
                    timed[kind] = measured_run(args, workload, kind, workdir, f"{workload}-{kind}-stats")
                    done += 1
                    print(f"[{done}/{total}] {workload} statistics: {kind} "
                          f"{timed[kind]['bpf_ns_per_event'] or 0:.0f} BPF ns/event", file=sys.stderr, flush=True)
            summary = {}
            for kind, ms in runs.items():
                summary[kind] = {key: summarize([m[key] for m in ms])
                                 for key in ("ratio", "cpu_ratio", "cpu_pct", "rss_mib", "mib_per_min", "lost")}
                for key in ("bpf_ns_per_event", "events_per_s"):
                    summary[kind][key] = summarize([timed[kind][key]])
            agree = (agreement_pass(args, workload, workdir)
                     if "lockscope" in profilers and workload not in USER_LOCK_WORKLOADS else None)
            results["workloads"][workload] = {"runs": runs, "stats_runs": timed, "summary": summary,
                                              "agreement": agree, "throughput_runs_with_stats_on": stats_on,
                                              "pairs_repeated": repeated,
                                              "pairs_disturbed": sum(m["disturbed"] for ms in runs.values()
                                                                     for m in ms)}

    with open(os.path.join(args.out, "overhead.json"), "w") as f:
        json.dump(results, f, indent=1)
    lines = [f"{args.threads} threads, {args.pairs} pairs of {args.duration:g} s per profiler, "
             f"kernel {results['kernel']}, {results['cpus']} CPUs; median (min–max) over pairs; BPF ns/event "
             "and events/s from one run per profiler with the kernel's BPF statistics on.", ""]
    for workload, w in results["workloads"].items():
        lines += [f"**{workload}**", "",
                  "| profiler | throughput vs bare | per CPU second vs bare | BPF ns/event | events/s | CPU % | "
                  "peak RSS MiB | MiB/min | lost |",
                  "|---|--:|--:|--:|--:|--:|--:|--:|--:|"]
        for kind, s in w["summary"].items():
            lines.append(f"| {kind} | {fmt(s['ratio'])} | {fmt(s['cpu_ratio'])} | {fmt(s['bpf_ns_per_event'], '{:.0f}')} | "
                         f"{fmt(s['events_per_s'], '{:.3g}')} | {fmt(s['cpu_pct'], '{:.2f}')} | "
                         f"{fmt(s['rss_mib'], '{:.1f}')} | {fmt(s['mib_per_min'], '{:.2f}')} | "
                         f"{fmt(s['lost'], '{:.0f}')} |")
        for floor, what in (("floor-empty", "empty programs"), ("floor-count", "exact per-lock counts, no clock")):
            s, e = w["summary"].get("lockscope-sample"), w["summary"].get(floor)
            if s and e:
                # per round, the same machine state: the difference of the two ratios
                diffs = [e_run["ratio"] - s_run["ratio"]
                         for s_run, e_run in zip(w["runs"]["lockscope-sample"], w["runs"][floor])]
                d = summarize(diffs)
                target = "; target at most 0.02" if floor == "floor-empty" else ""
                lines += ["", f"lockscope --sample {args.sample} vs {what} ({floor}), throughput ratio difference "
                              f"({floor} − sampled, per round): {fmt(d)}{target}."]
        a = w["agreement"]
        if a:
            lines += ["", f"Independent count ({workload}): lockscope {a['lockscope_contentions']:,} contentions, "
                          f"perf stat lock:contention_end {a['perf_stat_contention_end']:,}, "
                          f"lockscope lost {a['lockscope_lost']}."]
        lines.append("")
    table = "\n".join(lines)
    with open(os.path.join(args.out, "overhead.md"), "w") as f:
        f.write(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
