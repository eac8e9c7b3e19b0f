#!/usr/bin/env bash
# Measures what recording costs and rewrites the generated part of
# docs/cost.md (between its cost-report markers) with one table, headed by
# the date, the machine (CPU model, CPUs, kernel, clock source, load) and
# the commit the lockscope binary was built from. Rerun it to refresh the
# table; the rest of docs/cost.md is left as it is.
#
# Runs, as root:
#   bench/bpf_cost.py     BPF run time per event (kernel BPF statistics) of
#                         lockscope's programs against yardstick programs
#                         (the per-lock floor) and perf lock contention -b's
#                         programs in the same window, the recorder's CPU,
#                         peak RSS, session size; full timing and --sample N
#   bench/overhead.py     the workloads' throughput bare and under each
#                         profiler, interleaved, with the kernel's BPF
#                         statistics off: lockscope, its sampled mode,
#                         lockscope without the running holders' CPU-clock
#                         timer, empty programs, and bpftrace, perf lock
#                         record and perf lock contention -b where installed
#                         (scripts/install-deps.sh --bench; --bench-perf
#                         builds the perf with BPF skeletons that -b needs);
#                         on a kernel-lock workload (pipe) and a user-lock one
#                         (mutex: threads on one pthread mutex); bpftrace
#                         with kernel stacks only when asked for in
#                         PROFILERS: on a busy machine it can take minutes to
#                         print its maps when stopped
#   userlock_cost         user-space lock recording (collector/probe/user_probe.h): per
#                         futex wait of a recorded mutex workload and per
#                         syscall of processes not recorded, against empty
#                         programs on its four hooks (the syscall
#                         tracepoints, sched_switch, sched_waking) and
#                         against nothing attached
# lockscope, bpf_floor, userlock_cost and mutex_workload come from
# scripts/build.sh --all, bpftrace and perf from scripts/install-deps.sh --bench,
# the perf that -b needs from scripts/install-deps.sh --bench-perf.
#
# usage: bench/cost_report.sh [--help]
# environment (defaults in brackets; the short settings in parentheses run
# in about a quarter of an hour on 2 CPUs):
#   PARTS          what to measure, comma-separated [bpf_cost,overhead,userlock];
#                  a partial run writes a table of only those parts (say
#                  PARTS=userlock OUT=- to see its rows without touching
#                  the page; userlock alone takes about 4 minutes at its
#                  defaults, under 2 at the short settings)
#   LOCKSCOPE      the binary [build/lockscope, else lockscope on PATH]
#   FLOOR          the yardstick programs [bpf_floor next to LOCKSCOPE]
#   USERLOCK_COST  the user-lock cost driver [userlock_cost next to LOCKSCOPE]
#   MUTEX_WORKLOAD the user-lock workload [mutex_workload next to LOCKSCOPE]
#   PERF_B         perf with its BPF skeletons [perf/perf next to LOCKSCOPE,
#                  where bench/build_perf.sh puts it; none: not measured]
#   REPEAT         bpf_cost.py runs per mode, even [4] (2)
#   DURATION       seconds per bpf_cost.py run [8] (6)
#   PAIRS          overhead.py pairs per profiler [6] (3)
#   PAIR_DURATION  seconds per overhead.py run [4] (3)
#   WORKLOADS      overhead.py workloads [pipe,mutex]
#   SAMPLE         N of the sampled mode [64]
#   PROFILERS      overhead.py's profilers [lockscope, its sampled mode, without
#                  running holders, empty programs, bpftrace, perf-lock,
#                  perf-lock-b]
#   USERLOCK_PAIRS     userlock_cost pairs per kind [6] (3)
#   USERLOCK_DURATION  seconds per userlock_cost phase [3] (2)
#   USERLOCK_RATE      userlock_cost --rate: 0 is futex-heavy [0]
#   OUT            the page to rewrite, or - to print the table [docs/cost.md]
#   KEEP           a directory to keep the raw JSON and tables in [none]
set -euo pipefail
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 0
fi
[[ $# -eq 0 ]] || { echo "cost_report.sh: takes no arguments, only environment settings (try --help)" >&2; exit 2; }

here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/bench/find_lockscope.sh"
lockscope=$(realpath "$lockscope")
floor=${FLOOR:-$(dirname "$lockscope")/bpf_floor}
repeat=${REPEAT:-4}
duration=${DURATION:-8}
pairs=${PAIRS:-6}
pair_duration=${PAIR_DURATION:-4}
workloads=${WORKLOADS:-pipe,mutex}
sample=${SAMPLE:-64}
out=${OUT:-$here/docs/cost.md}
parts=${PARTS:-bpf_cost,overhead,userlock}
userlock_cost=${USERLOCK_COST:-$(dirname "$lockscope")/userlock_cost}
userlock_pairs=${USERLOCK_PAIRS:-6}
userlock_duration=${USERLOCK_DURATION:-3}
userlock_rate=${USERLOCK_RATE:-0}
mutex_workload=${MUTEX_WORKLOAD:-$(dirname "$lockscope")/mutex_workload}
perf_b=${PERF_B:-$(dirname "$lockscope")/perf/perf}

die() { echo "cost_report.sh: $*" >&2; exit 1; }
# perf -b is measured where it was built; one asked for by name must be there.
if [[ $perf_b != none && ! -x $perf_b ]]; then
    [[ -z ${PERF_B:-} ]] || die "PERF_B=$PERF_B is not an executable: scripts/install-deps.sh --bench-perf builds it"
    perf_b=none
fi
[[ $(id -u) -eq 0 ]] || die "needs root (BPF programs and the kernel's BPF statistics)"
part() { [[ ,$parts, == *,$1,* ]]; }
# bpftrace and perf lock find the lock tracepoints through tracefs, which a
# fresh machine has not mounted (lockscope itself needs none).
if ! grep -qs ' tracefs ' /proc/mounts; then
    mount -t tracefs nodev /sys/kernel/tracing || die "cannot mount tracefs at /sys/kernel/tracing"
fi
for p in ${parts//,/ }; do
    [[ $p == bpf_cost || $p == overhead || $p == userlock ]] ||
        die "PARTS: unknown part '$p' (choose from bpf_cost, overhead, userlock)"
done
[[ -n ${parts//,/} ]] || die "PARTS is empty: name at least one of bpf_cost, overhead, userlock"
if part bpf_cost || part overhead; then
    [[ -x $floor ]] || die "$floor not found: build it (scripts/build.sh --all) or set FLOOR"
fi
if part overhead && [[ ,$workloads, == *,mutex,* ]]; then
    [[ -x $mutex_workload ]] ||
        die "$mutex_workload not found: build it (scripts/build.sh --all) or set MUTEX_WORKLOAD"
fi
if part userlock; then
    [[ -x $userlock_cost ]] ||
        die "$userlock_cost not found: build it (scripts/build.sh --all) or set USERLOCK_COST"
fi
[[ $out == - ]] || { grep -q '<!-- cost-report:begin -->' "$out" && grep -q '<!-- cost-report:end -->' "$out"; } ||
    die "$out has no cost-report markers to write between"
((repeat % 2 == 0)) || die "REPEAT must be even (the yardsticks are attached after lockscope in half the runs, before in the other half)"

profilers=${PROFILERS:-}
if [[ -z $profilers ]]; then
    profilers=lockscope,lockscope-sample,lockscope-no-running-holders,floor-empty
    command -v bpftrace >/dev/null && profilers+=,bpftrace
    command -v perf >/dev/null && profilers+=,perf-lock
    [[ $perf_b == none ]] || profilers+=,perf-lock-b
fi
! part overhead || command -v perf >/dev/null || die "perf not found (overhead.py checks lockscope's count with perf stat): scripts/install-deps.sh --bench"

work=${KEEP:-}
if [[ -z $work ]]; then
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"

# The commit measured: taken now, before the runs; the docs (this script's
# own output among them) do not change what is measured.
commit=$(git -C "$here" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
[[ -z $(git -C "$here" status --porcelain -- . ':!docs' ':!*.md' 2>/dev/null) ]] ||
    commit+=" with uncommitted changes"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u '+%Y-%m-%d %H:%M UTC')

if part bpf_cost; then
    echo "== bpf_cost.py, full timing" >&2
    perf_arg=()
    [[ $perf_b == none ]] || perf_arg=(--perf-b "$perf_b")
    python3 "$here/bench/bpf_cost.py" --lockscope "$lockscope" --floor "$floor" --repeat "$repeat" \
        --duration "$duration" --order both --reference locks "${perf_arg[@]}" --json "$work/full.json" \
        >"$work/full.md"
    echo "== bpf_cost.py, --sample $sample" >&2
    python3 "$here/bench/bpf_cost.py" --lockscope "$lockscope" --floor "$floor" --repeat "$repeat" \
        --duration "$duration" --sample "$sample" --json "$work/sample.json" >"$work/sample.md"
fi
if part overhead; then
    echo "== overhead.py: $profilers" >&2
    python3 "$here/bench/overhead.py" --lockscope "$lockscope" --floor "$floor" --workloads "$workloads" \
        --pairs "$pairs" --duration "$pair_duration" --sample "$sample" --profilers "$profilers" \
        --mutex-workload "$mutex_workload" --perf-b "$perf_b" --out "$work/overhead" >/dev/null
fi
if part userlock; then
    echo "== userlock_cost: floor, userlock, userlock-all, userlock-other" >&2
    "$userlock_cost" --pairs "$userlock_pairs" --duration "$userlock_duration" --rate "$userlock_rate" \
        --json "$work/userlock.json" >"$work/userlock.md"
fi

load_end=$(cut -d' ' -f1-3 /proc/loadavg)
export LS_STARTED="$started" LS_COMMIT="$commit" LS_VERSION="$("$lockscope" --version | head -1)" \
    LS_CPU="$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)" LS_CPUS="$(nproc)" \
    LS_KERNEL="$(uname -r)" LS_VIRT="$(systemd-detect-virt 2>/dev/null || true)" \
    LS_CLOCK="$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)" \
    LS_LOAD_START="$load_start" LS_LOAD_END="$load_end" LS_REPEAT="$repeat" LS_DURATION="$duration" \
    LS_PAIRS="$pairs" LS_PAIR_DURATION="$pair_duration" LS_SAMPLE="$sample" LS_WORK="$work" \
    LS_PROFILERS="$profilers" LS_WORKLOADS="$workloads" LS_PARTS="$parts" \
    LS_USERLOCK_PAIRS="$userlock_pairs" LS_USERLOCK_DURATION="$userlock_duration" \
    LS_USERLOCK_RATE="$userlock_rate" LS_PERF_B="$perf_b" \
    LS_PERF_B_VERSION="$([[ $perf_b == none ]] || "$perf_b" version 2>/dev/null | head -1)" \
    LS_PERF_B_PATCHED="$(cat "$(dirname "$perf_b")/perf.patched" 2>/dev/null || true)"
python3 - "$out" <<'EOF'
import json, os, statistics, sys

e = os.environ
work = e["LS_WORK"]
parts = e["LS_PARTS"].split(",")


def med(runs, key):
    vals = [r[key] for r in runs]
    return statistics.median(vals), min(vals), max(vals)


def cell(runs, key, spec):
    m, lo, hi = med(runs, key)
    return f"{spec.format(m)} ({spec.format(lo)}–{spec.format(hi)})"


def s_cell(s, spec):
    if s is None:
        return "–"
    return f"{spec.format(s['median'])} ({spec.format(s['min'])}–{spec.format(s['max'])})"


virt = f", virtualised ({e['LS_VIRT']})" if e["LS_VIRT"] not in ("", "none") else ""
settings = {"bpf_cost": f"REPEAT={e['LS_REPEAT']} DURATION={e['LS_DURATION']} SAMPLE={e['LS_SAMPLE']}",
            "overhead": f"PAIRS={e['LS_PAIRS']} PAIR_DURATION={e['LS_PAIR_DURATION']} WORKLOADS={e['LS_WORKLOADS']}",
            "userlock": f"USERLOCK_PAIRS={e['LS_USERLOCK_PAIRS']} USERLOCK_DURATION={e['LS_USERLOCK_DURATION']} "
                        f"USERLOCK_RATE={e['LS_USERLOCK_RATE']}"}
partial = f"PARTS={','.join(parts)} " if set(settings) - set(parts) else ""
L = [f"Measured {e['LS_STARTED']} by `bench/cost_report.sh` on commit `{e['LS_COMMIT']}` "
     f"(`{e['LS_VERSION']}`).",
     "",
     f"Machine: {e['LS_CPU']}, {e['LS_CPUS']} CPUs{virt}, Linux {e['LS_KERNEL']}, clock source "
     f"`{e['LS_CLOCK']}`; load average {e['LS_LOAD_START']} at the start, {e['LS_LOAD_END']} at the end.",
     "",
     f"Settings: `{partial}{' '.join(settings[p] for p in settings if p in parts)}`. "
     "Figures are the median "
     "(min–max) over runs.",
     ""]


WORKLOAD_TITLES = {"pipe": "kernel locks: `pipe`, 4 threads on a pipe's mutex",
                   "mutex": "a user lock: 4 threads on one pthread mutex, futex-heavy (`mutex_workload`)",
                   "unlink1": "kernel locks: `unlink1`", "mmap1": "kernel locks: `mmap1`"}
HEADLINE = [("lockscope", "`lockscope record`"), ("perf-lock-b", "`perf lock contention -b`"),
            ("bpftrace", "bpftrace"), ("floor-empty", "empty programs")]


def ratio_cell(s):
    return s_cell(s, "{:.2f}")


def pct(s):
    return f"{s['median']:.0%}"


def pct_range(s):
    return f"{s['median']:.0%} ({s['min']:.0%}–{s['max']:.0%})"


WORKLOAD_WORDS = {"pipe": "a kernel-lock workload (`pipe`)", "mutex": "a futex-heavy user-lock workload (`mutex`)"}


def headline_section():
    """The answer first: what recording costs the workload, beside the peers."""
    over = json.load(open(f"{work}/overhead/overhead.json"))
    wls = [w for w in ("pipe", "mutex") if w in over["workloads"]] or list(over["workloads"])
    summ = {w: over["workloads"][w]["summary"] for w in wls}
    cols = [(k, t) for k, t in HEADLINE if any(k in summ[w] for w in wls)]

    def got(kind, key="ratio"):
        return [(w, summ[w][kind][key]) for w in wls if kind in summ[w] and summ[w][kind].get(key)]

    text = "**What does recording cost me?**"
    mine = got("lockscope")
    if mine:
        text += (" On this machine a program recorded by `lockscope record` kept " +
                 " and ".join(f"{pct_range(r)}{' of its throughput' if i == 0 else ''} on {WORKLOAD_WORDS.get(w, w)}"
                              for i, (w, r) in enumerate(mine)) +
                 f" (the median ratio to the same workload run bare just before it, min–max over {over['pairs']} "
                 f"interleaved pair{'s' if over['pairs'] != 1 else ''} of {over['duration_s']:g} s, the kernel's "
                 "BPF statistics off as a user runs it).")
    peers = [(t, got(k)) for k, t in cols if k not in ("lockscope", "floor-empty") and got(k)]
    if peers:
        text += " The same workloads kept " + "; ".join(
            f"{pct(r[0][1]) if len(r) == 1 else ' and '.join(pct(x) for _, x in r)} under {t}" for t, r in peers) + "."
    empty, ours = dict(got("floor-empty")), dict(mine)
    if "mutex" in empty:
        text += f" Empty programs on the same hooks alone kept the user-lock workload at {pct(empty['mutex'])}"
        lost_empty = 1 - empty["mutex"]["median"]
        lost_ours = 1 - ours["mutex"]["median"] if "mutex" in ours else 0
        # said only where the table shows it: the empty programs cost at
        # least half of what lockscope costs the workload
        if lost_ours > 0 and lost_empty >= lost_ours / 2:
            text += (": much of what a futex-heavy program pays is the syscall tracepoints being on at all, "
                     "which any tool that times its futex waits attaches")
        text += "."
    per_cpu = got("lockscope", "cpu_ratio")
    if per_cpu:
        text += (" Counted as work per CPU second of the workload's own process, which other jobs on the machine "
                 "disturb less, lockscope kept " +
                 " and ".join(f"{pct_range(r)} on `{w}`" for w, r in per_cpu) + ".")
    L = [text, "",
         "| workload | " + " | ".join(t for _, t in cols) + " |",
         "|---|" + "--:|" * len(cols)]
    for key, what in (("ratio", "throughput"), ("cpu_ratio", "work per CPU second")):
        for w in wls:
            L.append(f"| {WORKLOAD_TITLES.get(w, w)}, {what} | " +
                     " | ".join(ratio_cell(summ[w][k].get(key)) if k in summ[w] else "–" for k, _ in cols) + " |")
    L.append("")
    if e["LS_PERF_B"] != "none":
        note = f"`perf lock contention -b` is {e['LS_PERF_B_VERSION'] or 'perf'} built with its BPF skeletons"
        if e["LS_PERF_B_PATCHED"]:
            note += f" ({e['LS_PERF_B_PATCHED']}; its run-queue locks go unnamed, nothing else changes)"
        L += [f"- {note}.", ""]
    return L


def per_program(runs, prefix):
    vals = [v["ns_per_event"] for r in runs for n, v in r["per_program"].items() if n.startswith(prefix)]
    return (statistics.median(vals), min(vals), max(vals)) if vals else None


def bpf_cost_section():
    full_doc = json.load(open(f"{work}/full.json"))
    full = full_doc["runs"]
    samp = json.load(open(f"{work}/sample.json"))["runs"]
    L = [f"**Per event** (`bench/bpf_cost.py`: the `{full_doc['workload']}` workload at {full_doc['threads']} "
         "threads, recorded system-wide; kernel BPF statistics over the middle 60% of each run)",
         "",
         f"| | `record` | `record --sample {e['LS_SAMPLE']}` |",
         "|---|--:|--:|"]
    rows = [("lockscope's programs on its four tracepoints, ns per handled event", "ns_per_event", "{:.0f}"),
            ("its `contention_begin`/`contention_end` programs, ns per event", "contention_ns_per_event", "{:.0f}"),
            ("empty programs on the same hooks, same window, ns", "floor_ns_per_event", "{:.0f}"),
            ("lockscope's contention programs above the empty ones, ns", "contention_above_floor_ns", "{:.0f}"),
            ("yardstick on the contention hooks, same window, ns (see below)", "reference_same_run_ns_per_event",
             "{:.0f}"),
            ("lockscope's contention programs / that yardstick", "contention_vs_reference_same_run", "{:.2f}"),
            ("handled events per second", "events_per_s", "{:,.0f}"),
            ("contentions per second", "contentions_per_s", "{:,.0f}"),
            ("recorder CPU, % of one CPU", "recorder_cpu_percent", "{:.2f}"),
            ("recorder peak RSS, MiB", "recorder_peak_rss_mib", "{:.1f}"),
            ("session size, MiB per minute", "session_mib_per_minute", "{:.3f}"),
            ("events lost", "lost", "{:.0f}")]
    for label, key, spec in rows:
        L.append(f"| {label} | {cell(full, key, spec)} | {cell(samp, key, spec)} |")
    for label, prefix in (("its `sched_switch` program, ns per context switch", "on_sched_switc"),
                          ("empty program on `sched_switch`, same window, ns per switch", "floor_sched_swi"),
                          ("its `sched_waking` program, ns per wakeup", "on_sched_wakin")):
        key = "floor_per_program" if prefix.startswith("floor") else "per_program"
        cells = []
        for runs in (full, samp):
            if key == "floor_per_program":
                vals = [v for r in runs for n, v in r[key].items() if n.startswith(prefix)]
                m = (statistics.median(vals), min(vals), max(vals)) if vals else None
            else:
                m = per_program(runs, prefix)
            cells.append(f"{m[0]:.0f} ({m[1]:.0f}–{m[2]:.0f})" if m else "–")
        L.append(f"| {label} | {cells[0]} | {cells[1]} |")
    if all(r.get("perf_b_ns_per_event") for r in full):
        L.append(f"| `perf lock contention -b`'s programs on the same hooks, same window, ns per event | "
                 f"{cell(full, 'perf_b_ns_per_event', '{:.0f}')} | – |")
        L.append(f"| lockscope's contention programs / perf's | {cell(full, 'contention_vs_perf_b', '{:.2f}')} | – |")
    return L + ["",
                "The yardstick is, for `record`, the per-lock floor: programs that time each wait per thread "
                "(who runs, the clock, a hash map by thread) and add it and a count to the lock's entry in a hash "
                "map by lock, the least a profiler that keeps waits per lock pays; for `--sample`, programs that "
                "keep an exact count per lock without reading the clock.",
                ""]


def overhead_section():
    over = json.load(open(f"{work}/overhead/overhead.json"))
    names = {"lockscope": "`lockscope record`",
             "lockscope-sample": f"`lockscope record --sample {e['LS_SAMPLE']}`",
             "lockscope-no-running-holders": "`lockscope record --running-holder-hz 0`",
             "bpftrace": "bpftrace, the same aggregation",
             "bpftrace-kstack": "bpftrace, with kernel stacks",
             "perf-lock": "`perf lock record -a`",
             "perf-lock-b": "`perf lock contention -a -b`",
             "floor-empty": "empty programs on lockscope's hooks"}
    L = [f"**The workload's throughput** (`bench/overhead.py`: each workload at {over['threads']} threads, "
         f"{over['pairs']} rounds of {over['duration_s']:g} s, bare and under each profiler in turn, with the kernel's "
         "BPF statistics off; the ratio of each profiled run to the bare run just before it, a pair whose two runs' "
         f"CPU use differed by more than {over.get('max_cpu_skew', 0.15):.0%} run again; BPF ns per event from "
         "one more run of each with the statistics on)",
         "",
         "| workload | profiler | throughput vs bare | per CPU second vs bare | BPF ns/event | profiler CPU % "
         "| peak RSS MiB | output MiB/min | lost |",
         "|---|---|--:|--:|--:|--:|--:|--:|--:|"]
    for wl, w in over["workloads"].items():
        for kind, s in w["summary"].items():
            L.append(f"| {wl} | {names.get(kind, kind)} | {s_cell(s['ratio'], '{:.3f}')} | "
                     f"{s_cell(s.get('cpu_ratio'), '{:.3f}')} | "
                     f"{s_cell(s['bpf_ns_per_event'], '{:.0f}')} | {s_cell(s['cpu_pct'], '{:.2f}')} | "
                     f"{s_cell(s['rss_mib'], '{:.1f}')} | {s_cell(s['mib_per_min'], '{:.2f}')} | "
                     f"{s_cell(s['lost'], '{:.0f}')} |")
    L.append("")
    for wl, w in over["workloads"].items():
        runs = w["runs"]
        if "lockscope" in runs and "lockscope-no-running-holders" in runs:
            d = [b["ratio"] - a["ratio"] for a, b in zip(runs["lockscope"], runs["lockscope-no-running-holders"])]
            L.append(f"- {wl}, the running holders' CPU-clock timer: throughput ratio without it minus with it, "
                     f"per round, {statistics.median(d):+.3f} ({min(d):+.3f} to {max(d):+.3f}).")
        a = w.get("agreement")
        if a:
            L.append(f"- {wl}, counted independently: lockscope {a['lockscope_contentions']:,} contentions "
                     f"and {a['lockscope_lost']} lost; `perf stat` {a['perf_stat_contention_end']:,} "
                     "`lock:contention_end` events over the same tasks (the recorder's own included).")
    for wl, w in over["workloads"].items():
        if w.get("pairs_repeated"):
            L.append(f"- {wl}: {w['pairs_repeated']} pairs run again because their two runs got unequal shares of "
                     f"the machine; {w.get('pairs_disturbed', 0)} still were after two more tries.")
        if w.get("throughput_runs_with_stats_on"):
            L.append(f"- {wl}: in {w['throughput_runs_with_stats_on']} rounds another program had the kernel's BPF "
                     "statistics on.")
    missing = [p for p in ("bpftrace", "perf-lock", "perf-lock-b") if p not in e["LS_PROFILERS"].split(",")]
    if missing:
        L.append(f"- Not measured: {', '.join(missing)}.")
    return L + [""]


def userlock_section():
    ul = json.load(open(f"{work}/userlock.json"))
    kinds = [("floor", "empty programs on its hooks"), ("userlock", "recording the workload"),
             ("userlock-all", "recording every process (`--user-locks=all`)"),
             ("userlock-other", "recording another process")]
    kinds = [(k, title) for k, title in kinds if k in ul["summary"]]
    held = ("each holding it for a short spin: futex-heavy" if not ul.get("rate")
            else f"each holding it asleep, about {ul['rate']:,} contended acquisitions a second")
    L = [f"**User-space lock recording** (`userlock_cost`: a pthread mutex contended by {ul['threads']} threads "
         f"in one process, {held}, then a `getppid()` loop in another, {ul['pairs']} rounds of "
         f"{ul['duration_s']:g} s per phase; nothing attached, then each kind in turn with the kernel's BPF "
         "statistics off (throughput, `getppid()`), then once more with them on (BPF time); ratios to the run "
         "with nothing attached just before it)",
         "",
         "| | " + " | ".join(title for _, title in kinds) + " |",
         "|---|" + "--:|" * len(kinds)]
    rows = [("the mutex workload's throughput vs nothing attached", "throughput_ratio", "{:.3f}"),
            ("BPF ns per futex wait (per contended lock acquisition)", "bpf_ns_per_wait", "{:.0f}"),
            ("syscalls entering the programs per futex wait, machine-wide", "runs_per_wait", "{:.1f}"),
            ("BPF ns per program run, mutex phase", "bpf_ns_per_run", "{:.0f}"),
            ("— on `sys_enter`, BPF ns per contended acquisition", "bpf_ns_per_wait_sys_enter", "{:.0f}"),
            ("— on `sys_exit`", "bpf_ns_per_wait_sys_exit", "{:.0f}"),
            ("— on `sched_switch`", "bpf_ns_per_wait_sched_switch", "{:.0f}"),
            ("— on `sched_waking`", "bpf_ns_per_wait_sched_waking", "{:.0f}"),
            ("`sys_enter` program, BPF ns per run", "bpf_ns_per_run_sys_enter", "{:.0f}"),
            ("`sys_exit` program, BPF ns per run", "bpf_ns_per_run_sys_exit", "{:.0f}"),
            ("`sched_switch` program, BPF ns per run", "bpf_ns_per_run_sched_switch", "{:.0f}"),
            ("`sched_waking` program, BPF ns per run", "bpf_ns_per_run_sched_waking", "{:.0f}"),
            ("BPF time against empty programs beside it on the same events (same window)",
             "bpf_vs_floor_same_window", "{:.2f}"),
            ("— on `sys_enter`", "bpf_vs_floor_same_window_sys_enter", "{:.2f}"),
            ("— on `sys_exit`", "bpf_vs_floor_same_window_sys_exit", "{:.2f}"),
            ("— on `sched_switch`", "bpf_vs_floor_same_window_sched_switch", "{:.2f}"),
            ("— on `sched_waking`", "bpf_vs_floor_same_window_sched_waking", "{:.2f}"),
            ("futex waits recorded per contended acquisition", "recorded_waits_per_contended", "{:.2f}"),
            ("BPF ns per futex wait recorded", "bpf_ns_per_recorded_wait", "{:.0f}"),
            ("— above the empty programs beside it", "bpf_ns_above_floor_per_recorded_wait", "{:.0f}"),
            ("contended acquisitions per second", "contended_per_s", "{:,.0f}"),
            ("a process making no futex calls: `getppid()` ns per syscall vs nothing attached", "getppid_ratio",
             "{:.3f}"),
            ("the same, ns per syscall above nothing attached", "getppid_extra_ns", "{:.0f}"),
            ("BPF ns per `getppid()` syscall (all its programs, machine-wide)", "getppid_bpf_ns_per_syscall",
             "{:.0f}"),
            ("waits or samples lost", "lost", "{:.0f}")]
    for label, key, spec in rows:
        L.append(f"| {label} | " + " | ".join(s_cell(ul["summary"][k].get(key), spec) for k, _ in kinds) + " |")
    L.append("")
    runs = ul["runs"]
    bare = [r["bare_getppid_ns"] for runs in ul["runs"].values() for r in runs]
    if bare:
        L.append(f"- `getppid()` with nothing attached: {statistics.median(bare):.0f} ns per syscall "
                 f"({min(bare):.0f}–{max(bare):.0f}).")
    for kind, title in (("userlock-other", "recording another process"), ("userlock", "recording the workload")):
        if kind in runs and "floor" in runs:
            # per round, the same machine state: the difference of the two runs
            d = [b["getppid_ns"] - a["getppid_ns"] for a, b in zip(runs["floor"], runs[kind])]
            L.append(f"- The recorder ({title}) against the empty programs, for a process not recorded: "
                     f"`getppid()` {statistics.median(d):+.0f} ns per syscall, the difference per round "
                     f"({min(d):+.0f} to {max(d):+.0f}).")
            break
    if "userlock-all" in runs and "floor" in runs:
        d = [b["getppid_ns"] - a["getppid_ns"] for a, b in zip(runs["floor"], runs["userlock-all"])]
        L.append(f"- The recorder recording every process (`--user-locks=all`) against the empty programs, for "
                 f"a process that makes no futex calls: `getppid()` {statistics.median(d):+.0f} ns per syscall "
                 f"({min(d):+.0f} to {max(d):+.0f}).")
    return L + [""]


if "overhead" in parts:
    L += headline_section()
sections = {"bpf_cost": bpf_cost_section, "overhead": overhead_section, "userlock": userlock_section}
for p in sections:
    if p in parts:
        L += sections[p]()
while L and not L[-1]:
    L.pop()

block = "<!-- cost-report:begin -->\n" + "\n".join(L) + "\n<!-- cost-report:end -->"
path = sys.argv[1]
if path == "-":
    print(block)
    sys.exit(0)
text = open(path).read()
head, rest = text.split("<!-- cost-report:begin -->", 1)
_, tail = rest.split("<!-- cost-report:end -->", 1)
with open(path, "w") as f:
    f.write(head + block + tail)
print(f"cost_report.sh: wrote {path}", file=sys.stderr)
EOF
