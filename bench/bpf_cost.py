#!/usr/bin/env python3
"""Measures what recording costs: BPF run time per handled event (kernel BPF
stats), events lost, the recorder's own CPU, and session size per minute.

Runs `lockscope record --workload WORKLOAD` and samples, over the middle of
the run, each lockscope program's run_time_ns / run_cnt from the kernel
(kernel.bpf_stats_enabled=1, restored afterwards) and the recorder's
utime+stime from /proc. Reference programs (bench/floor.bpf.c, run by
build/bpf_floor) give the yardsticks: empty programs on the same hooks
through the same window, the floor any tp_btf program pays; programs on the
contention hooks that only ask who runs and read the clock, the least a
program timing waits per task pays, both in the same window (attached after
lockscope's, so they see the same events, and lockscope's programs read the
clock first on each) and, in a run of the same workload right after without
lockscope, alone. The ratio of lockscope's contention programs to the
same-window clock floor is the machine-independent figure. Needs root.
Prints a Markdown table, writes JSON.

Programs on one tracepoint run in the order they were attached, and the
first on an event pays for what is cold (the clock's first read, the
current task's and the lock's cache lines), so the same-window ratio
depends on the order. --order after (the default) attaches the floors after
lockscope, which errs against lockscope; --order both alternates the order
run by run (floors after in even runs, before in odd ones) and reports the
ratio in each order and their geometric mean, the order-free figure.

With --perf-b PERF (a perf built with its BPF skeletons, bench/build_perf.sh),
`perf lock contention -a -b` runs in the same window too, attached in the
same order as the reference programs, and its own contention programs' time
per event is reported beside lockscope's.

With --sample N, lockscope records in its always-on mode (record --sample N)
and the summary says how far its per-event cost lies above the empty programs
of the same window (the mode's target: at most 25 ns).

usage: bench/bpf_cost.py [--lockscope build/lockscope] [--workload pipe]
                         [--threads 4] [--duration 12] [--repeat 3] [--sample N]
                         [--order after|both] [--reference timed|locks|hist|count]
                         [--perf-b build/perf/perf] [--json out.json]
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import kernel_bpf_stats

PROGRAMS = ("on_contention_b", "on_contention_e", "on_sched_switc", "on_sched_wakin")
FLOOR = ("floor_contentio", "floor_sched_swi", "floor_sched_wak")
# perf lock contention -b's programs on the contention hooks (its
# lock_contention.bpf.c), cut to 15 characters as the kernel keeps names
PERF_B = ("contention_begi", "contention_end")
# The reference programs on the contention hooks (bench/floor.bpf.c; names as
# the kernel keeps them, cut to 15 characters), by --reference:
REFERENCES = {
    "timed": (("timed_contentio",), "who runs + clock read"),
    "locks": (("hash_contention", "locks_contentio"), "per-lock floor (clock, hash by thread and by lock)"),
    "hist": (("hash_contention", "hist_contention"), "per-lock histogram floor (clock, hash by thread, "
             "a per-CPU histogram by lock)"),
    "count": (("count_contentio",), "exact per-lock count, no clock"),
}


def bpf_stats(prefixes, *pids):
    # without pids: every program of those names on the machine
    mine = set().union(*(kernel_bpf_stats.prog_ids_of(p) for p in pids)) if pids else None
    out = subprocess.run(["bpftool", "-j", "prog", "show"], check=True, capture_output=True, text=True).stdout
    progs = {}
    for p in json.loads(out):
        name = p.get("name", "")
        if name.startswith(prefixes) and (mine is None or p["id"] in mine):
            progs[p["id"]] = (name, p.get("run_time_ns", 0), p.get("run_cnt", 0))
    return progs


def per_event(s0, s1):
    # Summed by name: where bpftool shows only the kernel's 15 characters of
    # a name (no BTF for the program), a begin and an end program share one
    # ("timed_contentio"), and both belong in the figure.
    per_prog = {}
    for pid, (name, rt1, cnt1) in s1.items():
        _, rt0, cnt0 = s0.get(pid, (name, 0, 0))
        rt, cnt = per_prog.get(name, (0, 0))
        per_prog[name] = (rt + rt1 - rt0, cnt + cnt1 - cnt0)
    total_ns = sum(v[0] for v in per_prog.values())
    total_cnt = sum(v[1] for v in per_prog.values())
    return per_prog, (total_ns / total_cnt if total_cnt else 0.0), total_cnt


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime, this process only


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def start_floor(args, which, seconds):
    floor = subprocess.Popen([args.floor, str(int(seconds)), which], stderr=subprocess.PIPE, text=True)
    if "attached" not in floor.stderr.readline():
        sys.exit("bpf_cost: bpf_floor did not attach")
    return floor


def start_perf_b(args):
    """perf lock contention -a -b, once its programs are attached (it says
    nothing when ready); stopped with SIGINT, it prints its report."""
    perf = subprocess.Popen([args.perf_b, "lock", "contention", "-a", "-b"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not bpf_stats(PERF_B, perf.pid):
        if perf.poll() is not None or time.monotonic() > deadline:
            perf.kill()
            sys.exit("bpf_cost: perf lock contention -b did not attach")
        time.sleep(0.1)
    return perf


def one_run(args, workdir, index):
    out = os.path.join(workdir, f"cost-{index}.lockscope")
    # perf takes seconds to attach on a busy machine: the recording runs on
    # until the window is over and is then stopped
    extra = 60 if args.perf_b else 0
    cmd = [args.lockscope, "record", "--workload", args.workload, "-t", str(args.threads),
           "-d", str(args.duration + extra), "-o", out, "-f"] + args.record_arg
    if args.sample:
        cmd += ["--sample", str(args.sample)]
    settle = args.duration * 0.2
    window = args.duration * 0.6
    # Empty programs on the same hooks through the same window: the floor any
    # tp_btf program pays here, on the very same events; and on the
    # contention hooks, who runs + clock read. Attached after lockscope's,
    # they run after them on each event and leave lockscope's own cost as it
    # is alone (and it, not they, pays the first clock read of an event);
    # attached before, they pay it.
    floor_first = args.order == "both" and index % 2 == 1
    perf = None
    if floor_first:
        floor = start_floor(args, args.reference, args.duration + extra + 10)
        perf = start_perf_b(args) if args.perf_b else None
    rec = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    line = rec.stderr.readline()
    if "recording" not in line:
        rec.wait()
        sys.exit(f"bpf_cost: lockscope did not start: {line}{rec.stderr.read()}")
    started = time.monotonic()
    if not floor_first:
        floor = start_floor(args, args.reference, args.duration + extra + 5)
        perf = start_perf_b(args) if args.perf_b else None
        if perf:
            started = time.monotonic()  # the window starts once everything is attached
    ref = REFERENCES[args.reference][0]
    # Timed from the recorder's start, not from the floor's: on a busy
    # machine the floor takes a while to load, and a window that ran past
    # the workload's end would find the recorder's programs gone.
    time.sleep(max(0.0, started + settle - time.monotonic()))
    window = max(0.5, min(window, started + args.duration * 0.85 - time.monotonic()))
    s0, f0, c0, t0 = (bpf_stats(PROGRAMS, rec.pid), bpf_stats(FLOOR + ref, floor.pid), cpu_seconds(rec.pid),
                      time.monotonic())
    p0 = bpf_stats(PERF_B, perf.pid) if perf else {}
    time.sleep(window)
    s1, f1, c1, t1 = (bpf_stats(PROGRAMS, rec.pid), bpf_stats(FLOOR + ref, floor.pid), cpu_seconds(rec.pid),
                      time.monotonic())
    p1 = bpf_stats(PERF_B, perf.pid) if perf else {}
    hwm = rss_kib(rec.pid)
    if extra:
        rec.send_signal(signal.SIGINT)
    rec.stderr.read()
    if rec.wait() != 0:
        sys.exit("bpf_cost: lockscope record failed")
    floor.kill()
    floor.wait()
    if perf:
        perf.send_signal(signal.SIGINT)
        perf.wait()

    # The same workload without lockscope, under the reference programs
    # alone (for "timed", who runs + clock: the least any per-task wait timer
    # pays). Alone on the hooks, because the first program on an event to
    # read the clock pays for it more than a later one does.
    alone = start_floor(args, args.reference, args.duration + 5)
    work = subprocess.Popen([args.lockscope, "workload", args.workload, "-t", str(args.threads),
                             "-d", str(args.duration)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(settle)
    m0 = bpf_stats(ref, alone.pid)
    time.sleep(window)
    m1 = bpf_stats(ref, alone.pid)
    work.wait()
    alone.kill()
    alone.wait()

    per_prog, ns_per_event, total_cnt = per_event(s0, s1)
    floor_prog, floor_ns, _ = per_event({k: v for k, v in f0.items() if v[0].startswith(FLOOR)},
                                        {k: v for k, v in f1.items() if v[0].startswith(FLOOR)})
    _, same_ref_ns, _ = per_event({k: v for k, v in f0.items() if v[0].startswith(ref)},
                                  {k: v for k, v in f1.items() if v[0].startswith(ref)})
    alone_prog, alone_ns, _ = per_event(m0, m1)
    perf_prog, perf_ns, _ = per_event(p0, p1)
    empty_contention = [v for n, v in floor_prog.items() if n.startswith("floor_contentio")]
    empty_contention_ns = (sum(v[0] for v in empty_contention) / max(1, sum(v[1] for v in empty_contention)))
    lockscope_contention = [per_prog[n] for n in per_prog if n.startswith("on_contention_")]
    contention_ns = sum(v[0] for v in lockscope_contention)
    contention_cnt = sum(v[1] for v in lockscope_contention)
    report = json.loads(subprocess.run([args.lockscope, "report", out, "--format", "json"], check=True,
                                       capture_output=True, text=True).stdout)
    duration = report["totals"].get("duration_s") or args.duration
    return {
        "floor_first": floor_first,
        "ns_per_event": ns_per_event,
        "floor_ns_per_event": floor_ns,
        "above_floor_ns": ns_per_event - floor_ns,
        "vs_floor": ns_per_event / floor_ns if floor_ns else 0.0,
        "floor_per_program": {n: (rt / cnt if cnt else 0.0) for n, (rt, cnt) in floor_prog.items()},
        "contention_ns_per_event": contention_ns / contention_cnt if contention_cnt else 0.0,
        "contention_above_floor_ns": (contention_ns / contention_cnt if contention_cnt else 0.0) - empty_contention_ns,
        "reference_alone_ns_per_event": alone_ns,
        "reference_same_run_ns_per_event": same_ref_ns,
        "contention_vs_reference_same_run": (contention_ns / contention_cnt / same_ref_ns
                                             if contention_cnt and same_ref_ns else 0.0),
        "reference_alone_per_program": {n: (rt / cnt if cnt else 0.0) for n, (rt, cnt) in alone_prog.items()},
        "perf_b_ns_per_event": perf_ns if perf else None,
        "perf_b_per_program": {n: (rt / cnt if cnt else 0.0) for n, (rt, cnt) in perf_prog.items()},
        "contention_vs_perf_b": (contention_ns / contention_cnt / perf_ns
                                 if perf and contention_cnt and perf_ns else None),
        "per_program": {n: {"ns_per_event": (rt / cnt if cnt else 0.0), "events_per_s": cnt / (t1 - t0)}
                        for n, (rt, cnt) in per_prog.items()},
        "events_per_s": total_cnt / (t1 - t0),
        "recorder_cpu_percent": 100.0 * (c1 - c0) / (t1 - t0),
        "recorder_peak_rss_mib": hwm / 1024.0,
        "session_mib_per_minute": os.path.getsize(out) / (1 << 20) / duration * 60.0,
        "lost": report["totals"]["lost"],
        "lost_by_cause": report["totals"].get("lost_by_cause", {}),
        "contentions_per_s": report["totals"]["contentions"] / duration,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lockscope", default=os.path.join(os.path.dirname(__file__), "..", "build", "lockscope"))
    ap.add_argument("--floor", default=os.path.join(os.path.dirname(__file__), "..", "build", "bpf_floor"))
    ap.add_argument("--workload", default="pipe")
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--duration", type=float, default=12)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--record-arg", action="append", default=[], help="extra option for lockscope record")
    ap.add_argument("--sample", type=int, default=0, help="record --sample N: the always-on mode")
    ap.add_argument("--perf-b", help="a perf built with its BPF skeletons: perf lock contention -a -b in the "
                                     "same window")
    ap.add_argument("--order", choices=("after", "both"), default="after",
                    help="attach the same-window floors after lockscope, or alternate run by run")
    ap.add_argument("--reference", choices=sorted(REFERENCES),
                    help="the same-window reference on the contention hooks: timed (who runs + clock, "
                         "the default), locks (the least a per-lock profiler pays: clock, hash by thread "
                         "and by lock), hist (the same with a per-CPU log2 histogram per lock, as large as "
                         "lockscope's row), count (exact per-lock counts, no clock; the default with --sample)")
    args = ap.parse_args()
    if not args.reference:
        args.reference = "count" if args.sample else "timed"
    ref_name = REFERENCES[args.reference][1]
    if os.geteuid() != 0:
        sys.exit("bpf_cost: needs root (BPF stats and recording)")
    for path, how in ((args.lockscope, "build it (scripts/build.sh) or pass --lockscope"),
                      (args.floor, "build it (scripts/build.sh --all) or pass --floor"),
                      (args.perf_b, "scripts/install-deps.sh --bench-perf builds it, or pass another --perf-b")):
        if path and not os.access(path, os.X_OK):
            sys.exit(f"bpf_cost: {path} is not an executable; {how}")
    runs = []
    with tempfile.TemporaryDirectory() as workdir:
        with kernel_bpf_stats.enabled():
            for i in range(args.repeat):
                for attempt in range(3):
                    run = one_run(args, workdir, i)
                    if run["events_per_s"] > 0 and run["ns_per_event"] > 0:
                        break
                    # A recorder that had not attached yet, or had already
                    # stopped, over the window measures nothing: run it again
                    # rather than count a zero.
                    print(f"run {i + 1}/{args.repeat}: no event reached lockscope's programs in the "
                          f"measured window; running it again", file=sys.stderr)
                else:
                    sys.exit("bpf_cost: three runs in a row measured no event; is the machine overloaded?")
                runs.append(run)
                print(f"run {i + 1}/{args.repeat}: {runs[-1]['ns_per_event']:.0f} ns/event", file=sys.stderr)

    def col(key):
        vals = [r[key] for r in runs]
        return statistics.median(vals), min(vals), max(vals)

    rows = [("BPF run time per handled event (ns)", "ns_per_event", "{:.0f}"),
            ("empty tp_btf program on the same hooks (ns)", "floor_ns_per_event", "{:.0f}"),
            ("lockscope's work above that floor (ns)", "above_floor_ns", "{:.0f}"),
            ("lockscope / that floor (x)", "vs_floor", "{:.2f}"),
            ("lockscope on the contention hooks only (ns)", "contention_ns_per_event", "{:.0f}"),
            (f"{ref_name}, contention hooks, same run (ns)", "reference_same_run_ns_per_event", "{:.0f}"),
            ("lockscope's contention hooks / that, same run (x)", "contention_vs_reference_same_run", "{:.2f}"),
            (f"{ref_name}, same hooks, alone (ns)", "reference_alone_ns_per_event", "{:.0f}"),
            ("lockscope's contention hooks above the empty programs (ns)", "contention_above_floor_ns", "{:.0f}"),
            ("handled events per second", "events_per_s", "{:,.0f}"),
            ("contentions per second", "contentions_per_s", "{:,.0f}"),
            ("recorder CPU (% of one CPU)", "recorder_cpu_percent", "{:.2f}"),
            ("recorder peak RSS (MiB)", "recorder_peak_rss_mib", "{:.1f}"),
            ("session size (MiB per minute)", "session_mib_per_minute", "{:.3f}"),
            ("events lost", "lost", "{:.0f}")]
    if args.perf_b:
        rows += [("perf lock contention -b's contention programs, same run (ns)", "perf_b_ns_per_event", "{:.0f}"),
                 ("lockscope's contention hooks / perf's, same run (x)", "contention_vs_perf_b", "{:.2f}")]
    mode = f", lockscope --sample {args.sample}" if args.sample else ""
    print(f"\n`{args.workload}` workload, {args.threads} threads, {args.repeat} runs of {args.duration:g} s{mode} "
          f"(median [min - max])\n")
    print("| measure | median | min | max |\n|---|---|---|---|")
    for label, key, fmt in rows:
        med, lo, hi = col(key)
        print(f"| {label} | {fmt.format(med)} | {fmt.format(lo)} | {fmt.format(hi)} |")
    print("\nper program (median ns/event, events/s):")
    for name in sorted(runs[0]["per_program"]):
        ns = statistics.median(r["per_program"][name]["ns_per_event"] for r in runs if name in r["per_program"])
        ev = statistics.median(r["per_program"][name]["events_per_s"] for r in runs if name in r["per_program"])
        print(f"  {name:18s} {ns:7.0f} ns  {ev:12,.0f}/s")
    print("empty programs:", ", ".join(f"{n} {statistics.median(r['floor_per_program'].get(n, 0) for r in runs):.0f} ns"
                                      for n in sorted(runs[0]["floor_per_program"])))
    print(f"{ref_name}, alone:", ", ".join(f"{n} {statistics.median(r['reference_alone_per_program'].get(n, 0) for r in runs):.0f} ns"
                                             for n in sorted(runs[0]["reference_alone_per_program"])))
    causes = {}
    for r in runs:
        for cause, n in r["lost_by_cause"].items():
            causes[cause] = causes.get(cause, 0) + n
    if any(causes.values()):
        print("events lost, all runs, by cause:",
              ", ".join(f"{c} {n}" for c, n in sorted(causes.items()) if n))
    if args.order == "both":
        key = "contention_vs_reference_same_run"
        after = [r[key] for r in runs if not r["floor_first"]]
        before = [r[key] for r in runs if r["floor_first"]]
        if after and before:
            a, b = statistics.median(after), statistics.median(before)
            print(f"lockscope's contention programs / {ref_name}, same run: floors attached after "
                  f"{a:.2f} ({min(after):.2f}-{max(after):.2f}, {len(after)} runs), before {b:.2f} "
                  f"({min(before):.2f}-{max(before):.2f}, {len(before)} runs); geometric mean {(a * b) ** 0.5:.2f}")
    if args.sample:
        above = col("above_floor_ns")[0]
        verdict = "met" if above <= 25 else f"missed by {above - 25:.0f} ns"
        print(f"always-on target (at most 25 ns per event above the empty programs, same window): "
              f"{above:.0f} ns, {verdict}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"workload": args.workload, "threads": args.threads, "runs": runs}, f, indent=2)


if __name__ == "__main__":
    main()
