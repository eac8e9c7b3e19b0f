#!/usr/bin/env python3
"""How often `lockscope diff` calls a change that is not there, and how often
it calls the ones that are: measured on real recordings of this machine.

False alarms (A/A): records --sessions sessions of one workload, each of
--repeat runs (`record --workload pipe -t 2 -d 1 --repeat 8`), and makes two
kinds of A/A diff, where whatever the diff calls is a false alarm:
  odd-even      each session's odd runs against its even runs (`diff S S
                --runs-a 'run [1357]' --runs-b 'run [2468]'`): the same
                kernel and workload, interleaved;
  next-session  each session against the one recorded before it, all runs:
                what a CI gate comparing two recordings of one kernel sees,
                the machine's drift between them included. Each session is
                in two of these diffs, so they are not independent.
A diff "calls something" when --fail-on any-change would trip: any total or
lock metric judged better, worse, higher or lower, or any call path that
moved. Each rate is given with its 95% interval (Wilson's, which takes the
diffs as independent), at the default options and with --min-effect 0 (the
family-wise control alone).

Power (A/B): --pairs pairs of sessions of known, real differences, recorded
one after the other, with each number of runs a side in --ab-repeats:
  pipe-threads   pipe at 1 thread against 4 (`record --workload pipe -t N -d 1
                 --repeat R`): the pipe's mutex contends far more at 4.
                 Called when the totals' contentions per second or wait per
                 op is judged worse.
  unlink         unlink1 against unlink2 at 4 threads (`-d 1 --repeat R`):
                 one shared directory against one per thread. Called when
                 the totals' contentions per second or wait per op is judged
                 better. (inode.i_rwsem itself is a lock of A only: unlink2
                 does not contend on it.)

Needs root (recording loads BPF programs). Other load on the machine is
welcome: surviving it is the point. An 8-run session takes 10 to 15 s, so
the defaults (47 A/A diffs, 8 A/B pairs) take 7 to 10 minutes.

usage: bench/diff_calibration.py [--lockscope build/lockscope] [--sessions 24]
                                 [--repeat 8] [--pairs 4] [--ab-repeats 4]
                                 [--out DIR] [--skip-power] [--skip-aa]

The load average (1 min) is read before each recording, and at the end; its
range is reported, since the machine's other work is part of the noise.

Writes diff_calibration.md and diff_calibration.json to --out (default: the
current directory), and the sessions to --out/sessions.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time


def find_lockscope(given):
    if given:
        return given
    here = os.path.dirname(os.path.abspath(__file__))
    built = os.path.join(here, "..", "build", "lockscope")
    if os.access(built, os.X_OK):
        return os.path.normpath(built)
    found = shutil.which("lockscope")
    if not found:
        sys.exit("diff_calibration: lockscope not found; build it or pass --lockscope PATH")
    return found


def wilson(k, n, z=1.959964):
    """95% Wilson score interval of k successes in n."""
    if n == 0:
        return (float("nan"), float("nan"))
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (max(0.0, centre - half), min(1.0, centre + half))


LOADS = []


def read_load():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def record(lockscope, path, workload, threads, repeat):
    LOADS.append(read_load())
    cmd = [lockscope, "record", "--workload", workload, "-t", str(threads), "-d", "1",
           "--repeat", str(repeat), "-o", path, "--force"]
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit("diff_calibration: %s failed: %s" % (" ".join(cmd), done.stderr.strip()))


def diff(lockscope, a, b, extra):
    cmd = [lockscope, "diff", a, b, "--format", "json"] + extra
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit("diff_calibration: %s failed: %s" % (" ".join(cmd), done.stderr.strip()))
    return json.loads(done.stdout)


CALLED = {"better", "worse", "higher", "lower"}


def calls(j):
    """What a --fail-on any-change gate trips on, as short labels."""
    out = []
    for m in j["totals"]:
        if m["verdict"] in CALLED:
            out.append("total %s %s" % (m["metric"], m["verdict"]))
    for lock in j["locks"]:
        for m in lock["metrics"]:
            if m["verdict"] in CALLED:
                out.append("%s %s %s" % (lock["name"], m["metric"], m["verdict"]))
    for sh in j["stack_shifts"]:
        out.append("%s path %s" % (sh["name"], " <- ".join(sh["functions"][:2])))
    return out


def false_alarms(lockscope, args, sessions_dir):
    odd = "run [%s]" % "".join(str(i) for i in range(1, args.repeat + 1, 2))
    even = "run [%s]" % "".join(str(i) for i in range(2, args.repeat + 1, 2))
    settings = {"default": [], "min-effect 0": ["--min-effect", "0"]}
    kinds = {
        "odd-even": "lockscope diff S S --runs-a '%s' --runs-b '%s'" % (odd, even),
        "next-session": "lockscope diff S(i) S(i+1), all runs of two sessions recorded one after the other",
    }
    results = {(kind, name): {"alarms": 0, "diffs": 0, "examples": []} for kind in kinds for name in settings}

    def tally(kind, a, b, extra_runs):
        for name, extra in settings.items():
            r = results[(kind, name)]
            c = calls(diff(lockscope, a, b, extra_runs + extra))
            r["diffs"] += 1
            if c:
                r["alarms"] += 1
                r["examples"].append(c[0])

    previous = None
    for i in range(args.sessions):
        path = os.path.join(sessions_dir, "aa-%02d.lockscope" % i)
        record(lockscope, path, "pipe", 2, args.repeat)
        tally("odd-even", path, path, ["--runs-a", odd, "--runs-b", even])
        if previous:
            tally("next-session", previous, path, [])
        previous = path
        print("A/A %d/%d: %s" % (i + 1, args.sessions,
                                 ", ".join("%s %s %d/%d" % (k, n, r["alarms"], r["diffs"])
                                           for (k, n), r in results.items())),
              file=sys.stderr)
    rows = []
    for (kind, name), r in results.items():
        r["rate"] = r["alarms"] / r["diffs"] if r["diffs"] else float("nan")
        r["interval"] = wilson(r["alarms"], r["diffs"])
        rows.append(dict(r, kind=kind, options=name, what=kinds[kind]))
    return {"command": "lockscope record --workload pipe -t 2 -d 1 --repeat %d" % args.repeat, "rows": rows}


def totals_verdict(j, verdict):
    return any(m["metric"] in ("contentions_per_s", "wait_per_op") and m["verdict"] == verdict
               for m in j["totals"])


def power(lockscope, args, sessions_dir):
    cases = {
        "pipe-threads": (("pipe", 1), ("pipe", 4), "worse",
                         "pipe -t 1 (A) against -t 4 (B); called: total contentions/s or wait per op worse"),
        "unlink": (("unlink1", 4), ("unlink2", 4), "better",
                   "unlink1 (A) against unlink2 (B), -t 4; called: total contentions/s or wait per op better"),
    }
    out = []
    for repeat in args.ab_repeats:
        for name, (a, b, verdict, what) in cases.items():
            hits, total_calls = 0, 0
            for i in range(args.pairs):
                pa = os.path.join(sessions_dir, "%s-r%d-a-%02d.lockscope" % (name, repeat, i))
                pb = os.path.join(sessions_dir, "%s-r%d-b-%02d.lockscope" % (name, repeat, i))
                record(lockscope, pa, a[0], a[1], repeat)
                record(lockscope, pb, b[0], b[1], repeat)
                j = diff(lockscope, pa, pb, [])
                hits += totals_verdict(j, verdict)
                total_calls += len(calls(j))
                print("%s, %d runs a side, %d/%d: called %d" % (name, repeat, i + 1, args.pairs, hits),
                      file=sys.stderr)
            out.append({"case": name, "what": what, "runs": repeat, "pairs": args.pairs, "called": hits,
                        "rate": hits / args.pairs, "interval": wilson(hits, args.pairs),
                        "calls_per_diff": total_calls / args.pairs})
    return out


def percent(x):
    return "%.1f%%" % (100 * x)


def markdown(result):
    lines = []
    aa = result.get("false_alarms")
    if aa:
        lines += ["False alarms: %s sessions, `%s`" % (aa["sessions"], aa["command"]), "",
                  "| A/A diff | options | diffs | calling anything | rate | 95% interval |",
                  "|---|---|---|---|---|---|"]
        for r in aa["rows"]:
            lines.append("| %s | %s | %d | %d | %s | %s-%s |" % (
                r["what"], r["options"], r["diffs"], r["alarms"], percent(r["rate"]),
                percent(r["interval"][0]), percent(r["interval"][1])))
        lines.append("")
        for r in aa["rows"]:
            if r["examples"]:
                lines.append("Called (%s, %s): %s." % (r["kind"], r["options"], "; ".join(r["examples"])))
        lines.append("")
    pw = result.get("power")
    if pw:
        lines += ["Power: `lockscope record --workload W -t N -d 1 --repeat R` for A and for B, then "
                  "`lockscope diff A B`", "",
                  "| A/B | runs a side | pairs | called | rate | 95% interval | calls per diff |",
                  "|---|---|---|---|---|---|---|"]
        for r in pw:
            lines.append("| %s | %d | %d | %d | %s | %s-%s | %.1f |" % (
                r["what"], r["runs"], r["pairs"], r["called"], percent(r["rate"]), percent(r["interval"][0]),
                percent(r["interval"][1]), r["calls_per_diff"]))
        lines.append("")
    if result.get("load"):
        lines.append("Load average (1 min) before the recordings: %.1f to %.1f, median %.1f; %.1f at the start, "
                     "%.1f at the end. %d s in all." % (tuple(result["load"]) + tuple(result["load_first_last"]) +
                                                      (result["seconds"],)))
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--lockscope")
    p.add_argument("--sessions", type=int, default=24)
    p.add_argument("--repeat", type=int, default=8)
    p.add_argument("--pairs", type=int, default=4)
    p.add_argument("--ab-repeats", default="4",
                   type=lambda text: [int(x) for x in text.split(",") if x])
    p.add_argument("--out", default=".")
    p.add_argument("--skip-power", action="store_true")
    p.add_argument("--skip-aa", action="store_true")
    args = p.parse_args()
    if os.geteuid() != 0:
        sys.exit("diff_calibration: recording needs root (it loads BPF programs)")
    if args.repeat < 6 or args.repeat > 9:
        sys.exit("diff_calibration: --repeat must be 6 to 9 (odd and even runs make two sides of 3 or more)")
    if not args.ab_repeats or min(args.ab_repeats) < 3:
        sys.exit("diff_calibration: --ab-repeats takes run counts of 3 or more, such as 4,8")
    lockscope = find_lockscope(args.lockscope)
    sessions_dir = os.path.join(args.out, "sessions")
    os.makedirs(sessions_dir, exist_ok=True)
    started = time.time()
    result = {"lockscope": lockscope}
    if not args.skip_aa:
        result["false_alarms"] = false_alarms(lockscope, args, sessions_dir)
        result["false_alarms"]["sessions"] = args.sessions
    if not args.skip_power:
        result["power"] = power(lockscope, args, sessions_dir)
    result["seconds"] = round(time.time() - started)
    result["load_first_last"] = [LOADS[0], read_load()] if LOADS else []
    if LOADS:
        ordered = sorted(LOADS)
        result["load"] = [ordered[0], ordered[-1], ordered[len(ordered) // 2]]
    with open(os.path.join(args.out, "diff_calibration.json"), "w") as f:
        json.dump(result, f, indent=2)
    text = markdown(result)
    with open(os.path.join(args.out, "diff_calibration.md"), "w") as f:
        f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
