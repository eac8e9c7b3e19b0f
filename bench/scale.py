#!/usr/bin/env python3
"""How lockscope's cost grows with the event rate and with the number of
distinct contended locks.

Event rate: `lockscope record --workload pipe` at 1, 2, 3, 4 ... threads.
Distinct locks: `--workload pipes --locks N` (all threads on one pipe at a
time, moving through N pipes), N from tens to tens of thousands.

For each point: handled events per second, BPF run time per event (kernel
BPF statistics), the recorder's CPU share of one CPU, its peak RSS, the
session's size per minute, the distinct locks kept, and what was lost.
Needs root. Writes scale.md and scale.json to --out.

With --repeat R the points run R rounds, interleaved (the order rotates
each round), and the per-event cost of each lock count is also given as a
ratio to the smallest count's in the same round: the issue's scale target
(at most 10% growth from 1 to 10,000 locks) is that ratio.

usage: bench/scale.py [--lockscope build/lockscope] [--duration 5] [--repeat 1]
                      [--threads 1,2,4,8] [--locks 10,100,1000,10000,19000] [--out DIR]
                      [--floor [PATH]] [--floor-mode locks|hist]
                      [--record-arg=--holder-period=0 ...]
  --threads '' skips the single-pipe points.
"""
import argparse
import json
import os
import statistics
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bpf_cost import REFERENCES, bpf_stats, per_event  # noqa: E402
from overhead import (bpf_delta, bpf_progs_of, bpf_stats_enabled, cpu_seconds, die,  # noqa: E402
                      lockscope_lost, peak_rss_mib)

# lockscope's contention programs, and the per-lock floors bpf_cost.py also
# runs (bench/floor.bpf.c), by --floor-mode
CONTENTION = ("on_contention_b", "on_contention_e")
FLOORS = {mode: REFERENCES[mode] for mode in ("locks", "hist")}


def point(args, workdir, workload, threads, locks):
    out = os.path.join(workdir, f"scale-{workload}-{threads}-{locks}.lockscope")
    cmd = [args.lockscope, "record", "--workload", workload, "-t", str(threads), "-d", str(args.duration),
           "-o", out, "-f"]
    if workload == "pipes":
        cmd += ["--locks", str(locks)]
    cmd += args.record_arg
    rec = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    line = rec.stderr.readline()
    if "recording" not in line:
        rec.wait()
        die(f"lockscope did not start: {line}{rec.stderr.read()[-300:]}")
    floor = None
    if args.floor:
        # attached after lockscope's programs: both see the same events
        floor = subprocess.Popen([args.floor, str(int(args.duration * 0.9) + 1), args.floor_mode],
                                 stderr=subprocess.PIPE, text=True)
        if "attached" not in floor.stderr.readline():
            die("bpf_floor did not attach")
    time.sleep(args.duration * 0.2)
    s0, c0, t0 = bpf_progs_of(rec.pid), cpu_seconds(rec.pid), time.monotonic()
    floor_progs = FLOORS[args.floor_mode][0]
    f0 = bpf_stats(CONTENTION + floor_progs)
    time.sleep(args.duration * 0.6)
    s1, c1, t1 = bpf_progs_of(rec.pid), cpu_seconds(rec.pid), time.monotonic()
    f1 = bpf_stats(CONTENTION + floor_progs)
    time.sleep(args.duration * 0.1)
    rss = peak_rss_mib(rec.pid)
    if floor:
        floor.wait()
    _, err = rec.communicate(timeout=120)
    if rec.returncode != 0:
        die(f"lockscope record failed: {err.strip()[-300:]}")
    _, ns, cnt = bpf_delta(s0, s1)
    contention_ns = floor_ns = None
    if floor:
        mine = set(s1)
        contention_ns = per_event({k: v for k, v in f0.items() if k in mine},
                                  {k: v for k, v in f1.items() if k in mine and v[0].startswith(CONTENTION)})[1]
        floor_ns = per_event({k: v for k, v in f0.items() if k not in mine},
                             {k: v for k, v in f1.items() if k not in mine and v[0].startswith(floor_progs)})[1]
    lost, contentions = lockscope_lost(args, out)
    with sqlite3.connect(f"file:{out}?mode=ro", uri=True) as db:
        kept = db.execute("SELECT count(DISTINCT address) FROM locks WHERE name IN ('pipe_inode_info.mutex', 'pipe->mutex')").fetchone()[0]
        seconds = db.execute("SELECT (max(end_ns) - min(start_ns)) / 1e9 FROM intervals").fetchone()[0] or 1
    size = os.path.getsize(out)
    os.unlink(out)
    return {"workload": workload, "threads": threads, "locks": locks if workload == "pipes" else 1,
            "events_per_s": cnt / (t1 - t0), "bpf_ns_per_event": ns / cnt if cnt else None,
            "cpu_pct": 100 * (c1 - c0) / (t1 - t0), "rss_mib": rss, "mib_per_min": size / 2**20 / seconds * 60,
            "pipe_mutexes_kept": kept, "contentions": contentions, "lost": lost,
            "contention_ns_per_event": contention_ns, "floor_ns_per_event": floor_ns}


def growth_table(rows, locks, rounds, floor_mode):
    """Per-event cost at each lock count as a ratio to the smallest count's in
    the same round: all of lockscope's programs, its contention programs and
    the per-lock floor's (when measured)."""
    metrics = [("bpf_ns_per_event", "lockscope, all programs"),
               ("contention_ns_per_event", "lockscope, contention programs"),
               ("floor_ns_per_event", FLOORS[floor_mode][1])]
    metrics = [(k, name) for k, name in metrics if any(r.get(k) for r in rows)]
    pipes = [r for r in rows if r["workload"] == "pipes"]
    out = [f"Per-event BPF cost against {min(locks)} lock(s) in the same round: median ns, and the ratio's "
           f"median (min-max) over {rounds} round(s).", "",
           "| pipes | " + " | ".join(name for _, name in metrics) + " |",
           "|--:|" + "--:|" * len(metrics)]
    for n in locks:
        cells = []
        for key, _ in metrics:
            ns = [r[key] for r in pipes if r["locks"] == n and r.get(key)]
            ratios = []
            for rnd in range(rounds):
                base = [r[key] for r in pipes if r["round"] == rnd and r["locks"] == min(locks) and r.get(key)]
                this = [r[key] for r in pipes if r["round"] == rnd and r["locks"] == n and r.get(key)]
                if base and this:
                    ratios.append(this[0] / base[0])
            cells.append(f"{statistics.median(ns):.0f}, {statistics.median(ratios):.2f} "
                         f"({min(ratios):.2f}-{max(ratios):.2f})" if ns and ratios else "-")
        out.append(f"| {n:,} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lockscope", default="build/lockscope")
    p.add_argument("--duration", type=float, default=5)
    p.add_argument("--threads", default="1,2,4,8")
    p.add_argument("--locks", default="10,100,1000,10000,19000")
    p.add_argument("--repeat", type=int, default=1, help="interleaved rounds")
    p.add_argument("--floor", nargs="?", const=os.path.join(os.path.dirname(__file__), "..", "build", "bpf_floor"),
                   help="attach bpf_floor's per-lock floor (path, default build/bpf_floor) in each window")
    p.add_argument("--floor-mode", choices=sorted(FLOORS), default="locks",
                   help="which per-lock floor: locks (a count and a wait per lock) or hist (a per-CPU entry "
                        "with a log2 histogram, as large as a lockscope row)")
    p.add_argument("--out", default="scale-results")
    p.add_argument("--record-arg", action="append", default=[],
                   help="extra option for lockscope record (e.g. --record-arg=--holder-period=0)")
    args = p.parse_args()
    if os.geteuid() != 0:
        die("needs root")
    if args.floor and not os.access(args.floor, os.X_OK):
        die(f"{args.floor} is not an executable; build it (scripts/build.sh --all) or pass --floor PATH")
    os.makedirs(args.out, exist_ok=True)
    rows = []
    threads = [int(x) for x in args.threads.split(",") if x]
    locks = [int(x) for x in args.locks.split(",") if x]
    points = [("pipe", t, 1) for t in threads] + [("pipes", 4, n) for n in locks]
    with bpf_stats_enabled(), tempfile.TemporaryDirectory(prefix="lockscope-scale-") as workdir:
        for r in range(args.repeat):
            shift = r % len(points)
            for workload, t, n in points[shift:] + points[:shift]:
                rows.append(point(args, workdir, workload, t, n))
                rows[-1]["round"] = r
                print(f"round {r + 1}/{args.repeat}: {workload} -t {t}"
                      f"{f' --locks {n}' if workload == 'pipes' else ''}: "
                      f"{rows[-1]['events_per_s']:.3g} events/s, {rows[-1]['pipe_mutexes_kept']} kept",
                      file=sys.stderr, flush=True)
    with open(os.path.join(args.out, "scale.json"), "w") as f:
        json.dump(rows, f, indent=1)
    lines = [f"`lockscope record`, {args.duration:g} s per point, kernel {os.uname().release}, "
             f"{os.cpu_count()} CPUs.", "",
             "| workload | threads | pipes | events/s | BPF ns/event | recorder CPU % | peak RSS MiB | MiB/min "
             "| distinct pipe mutexes kept | lost |",
             "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for r in rows:
        ns = "-" if r["bpf_ns_per_event"] is None else f"{r['bpf_ns_per_event']:.0f}"
        lines.append(f"| {r['workload']} | {r['threads']} | {r['locks']} | {r['events_per_s']:,.0f} | {ns} | "
                     f"{r['cpu_pct']:.2f} | {r['rss_mib']:.1f} | {r['mib_per_min']:.2f} | "
                     f"{r['pipe_mutexes_kept']:,} | {r['lost']:,} |")
    if locks:
        lines += ["", growth_table(rows, locks, args.repeat, args.floor_mode)]
    table = "\n".join(lines)
    with open(os.path.join(args.out, "scale.md"), "w") as f:
        f.write(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
