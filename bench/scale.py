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

usage: bench/scale.py [--lockscope build/lockscope] [--duration 5]
                      [--threads 1,2,4,8] [--locks 10,100,1000,10000,19000] [--out DIR]
"""
import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overhead import (bpf_delta, bpf_progs_of, bpf_stats_enabled, cpu_seconds, die,  # noqa: E402
                      lockscope_lost, peak_rss_mib)


def point(args, workdir, workload, threads, locks):
    out = os.path.join(workdir, f"scale-{workload}-{threads}-{locks}.lockscope")
    cmd = [args.lockscope, "record", "--workload", workload, "-t", str(threads), "-d", str(args.duration),
           "-o", out, "-f"]
    if workload == "pipes":
        cmd += ["--locks", str(locks)]
    rec = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    line = rec.stderr.readline()
    if "recording" not in line:
        rec.wait()
        die(f"lockscope did not start: {line}{rec.stderr.read()[-300:]}")
    time.sleep(args.duration * 0.2)
    s0, c0, t0 = bpf_progs_of(rec.pid), cpu_seconds(rec.pid), time.monotonic()
    time.sleep(args.duration * 0.6)
    s1, c1, t1 = bpf_progs_of(rec.pid), cpu_seconds(rec.pid), time.monotonic()
    time.sleep(args.duration * 0.1)
    rss = peak_rss_mib(rec.pid)
    _, err = rec.communicate(timeout=120)
    if rec.returncode != 0:
        die(f"lockscope record failed: {err.strip()[-300:]}")
    _, ns, cnt = bpf_delta(s0, s1)
    lost, contentions = lockscope_lost(args, out)
    with sqlite3.connect(f"file:{out}?mode=ro", uri=True) as db:
        kept = db.execute("SELECT count(DISTINCT address) FROM locks WHERE name = 'pipe->mutex'").fetchone()[0]
        seconds = db.execute("SELECT (max(end_ns) - min(start_ns)) / 1e9 FROM intervals").fetchone()[0] or 1
    size = os.path.getsize(out)
    os.unlink(out)
    return {"workload": workload, "threads": threads, "locks": locks if workload == "pipes" else 1,
            "events_per_s": cnt / (t1 - t0), "bpf_ns_per_event": ns / cnt if cnt else None,
            "cpu_pct": 100 * (c1 - c0) / (t1 - t0), "rss_mib": rss, "mib_per_min": size / 2**20 / seconds * 60,
            "pipe_mutexes_kept": kept, "contentions": contentions, "lost": lost}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lockscope", default="build/lockscope")
    p.add_argument("--duration", type=float, default=5)
    p.add_argument("--threads", default="1,2,4,8")
    p.add_argument("--locks", default="10,100,1000,10000,19000")
    p.add_argument("--out", default="scale-results")
    args = p.parse_args()
    if os.geteuid() != 0:
        die("needs root")
    os.makedirs(args.out, exist_ok=True)
    rows = []
    with bpf_stats_enabled(), tempfile.TemporaryDirectory(prefix="lockscope-scale-") as workdir:
        for t in [int(x) for x in args.threads.split(",")]:
            rows.append(point(args, workdir, "pipe", t, 1))
            print(f"pipe -t {t}: {rows[-1]['events_per_s']:.3g} events/s", file=sys.stderr, flush=True)
        for n in [int(x) for x in args.locks.split(",")]:
            rows.append(point(args, workdir, "pipes", 4, n))
            print(f"pipes --locks {n}: {rows[-1]['pipe_mutexes_kept']} kept", file=sys.stderr, flush=True)
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
    table = "\n".join(lines)
    with open(os.path.join(args.out, "scale.md"), "w") as f:
        f.write(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
