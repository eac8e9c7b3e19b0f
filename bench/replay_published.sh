#!/usr/bin/env bash
# Three published kernel lock reports replayed in user space, one interleaved
# `lockscope bench` session per report, each comparison read from
# `lockscope diff` of that session against itself with the runs picked by
# label. Prints, per report, its figure, the replay's throughput ratio
# with its 95% interval (Welch over run means, Fieller's interval) and a
# verdict on direction:
#   reproduced       the interval lies on the report's side of 1
#   opposite         the interval lies on the other side
#   not resolved     the interval contains 1: at these CPUs and repeats the
#                    effect is below what this machine can resolve
#
# Reports (by name; the numbers 000, 002, 003 are accepted too):
#   unlink      Hansen 2016, 4.7 i_rwsem vs the 4.6 i_mutex on unlink1 at 4 threads
#        on a 4-core Skylake: rwsem -27.7%, rwsem with the owner-NULL check
#        hacked out -2.5%. mutex@4.6 vs rwsem@4.2 vs rwsem@4.7-hacked,
#        write-only, once with the release window WINDOW_NS and once at
#        natural timing (window 0).
#        The window is a knob, not a measurement: up_write (and the 4.6
#        mutex_unlock) busy-waits that long between clearing the owner and
#        releasing the count, widening exactly the condition 4.7's check
#        fires on (on a big machine other CPUs hammering the count's line
#        make that release slow; on a small VM it is two stores).
#   xfs-repair  Low 2014, xfs_repair (mixed readers and writers of mmap_sem): 5x
#        slower on 3.16-rc2 than on 3.15; the fix took it from 4m24s back
#        to 1m26s. rwsem@3.15 vs rwsem@3.16-rc2 vs rwsem@3.16, READ_PCT reads.
#   aim7        Long 2019, AIM7 shared_memory on 44 threads: 8.09M (5.2-rc6, whose
#        rwsem is rwsem@4.8's), 7.57M (+ the tip rwsem rework =
#        rwsem@5.3-rc-tip), 7.95M (+ the handoff writer spins = rwsem@5.4)
#        jobs/min. Both steps and the whole way, write-only.
#
# usage: bench/replay_published.sh [REPORT ...]   (default: unlink xfs-repair aim7)
# environment: LOCKSCOPE (binary; default: build/lockscope, else PATH),
#   THREADS (default from the CPU count: 4, 8, 16 ... up to the CPUs, or the
#   CPU count when below 4; xfs-repair and aim7 run twice as many: a writer
#   spinning on readers costs only when it takes a CPU a runnable thread
#   needs, and waiters must queue long enough to request handoffs), REPEAT (10), DURATION (1 s), WINDOW_NS (500),
#   READ_PCT (50), CS_NS (1000), OUTSIDE_NS (500), ORACLE (budget, or bpf as
#   root), OUT (directory for the sessions; default a temporary one, removed).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/bench/find_lockscope.sh"

cpus=$(nproc)
sweep() {  # thread counts for $1 threads per CPU
    local per=$1 t out=""
    if ((cpus < 4)); then echo $((cpus * per)); return; fi
    for ((t = 4; t <= cpus; t *= 2)); do out+="${out:+,}$((t * per))"; done
    echo "$out"
}
threads=${THREADS:-$(sweep 1)}
threads_2x=${THREADS:+$(echo "$THREADS" | tr ',' '\n' | awk '{printf "%s%d", (NR > 1 ? "," : ""), 2 * $1}')}
threads_2x=${threads_2x:-$(sweep 2)}
repeat=${REPEAT:-10}
duration=${DURATION:-1}
window=${WINDOW_NS:-500}
oracle=${ORACLE:-budget}
reports=("$@")
((${#reports[@]})) || reports=(unlink xfs-repair aim7)

out=${OUT:-}
if [[ -z $out ]]; then
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"

load=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$load" -v c="$cpus" 'BEGIN { exit !(l > c / 2) }'; then
    echo "replay_published.sh: load average $load on $cpus CPUs: other work competes with the bench;" \
         "expect wide intervals" >&2
fi

# bench NAME THREADS LOCKS [bench options]: one interleaved session, its table on stdout.
bench() {
    local name=$1 t=$2 locks=$3
    shift 3
    "$lockscope" bench --lock "$locks" -t "$t" -d "$duration" --repeat "$repeat" --oracle "$oracle" \
        --cs "${CS_NS:-1000}" --outside "${OUTSIDE_NS:-500}" -F markdown -f -o "$out/$name.lockscope" "$@" \
        2> >(grep -v '^  \[' >&2)
    echo
}

# compare NAME THREADS A B REPORTED_RATIO REPORTED_TEXT: one table row from lockscope diff.
compare() {
    local name=$1 t=$2 a=$3 b=$4 reported_ratio=$5 reported_text=$6 tc
    for tc in ${t//,/ }; do
        "$lockscope" diff "$out/$name.lockscope" "$out/$name.lockscope" -F json \
            --runs-a "$a t=$tc #*" --runs-b "$b t=$tc #*" |
            python3 -c '
import json, sys
a, b, t, reported, text, cpus = sys.argv[1:7]
reported = float(reported)
m = next(m for m in json.load(sys.stdin)["totals"] if m["metric"] == "throughput")
rel, (lo, hi) = m["relative_change"], m["relative_ci"]
if rel is None or lo is None or hi is None:
    reason = m.get("reason", "")
    print(f"| `{a}` → `{b}` | {t} | {text} | – | – | not enough data ({reason}) |")
    sys.exit()
r, lo, hi = 1 + rel, 1 + lo, 1 + hi
if (reported < 1 and hi < 1) or (reported > 1 and lo > 1):
    verdict = "reproduced"
elif (reported < 1 and lo > 1) or (reported > 1 and hi < 1):
    verdict = "opposite direction: not reproduced"
else:
    verdict = f"not resolved: the interval holds 1; below what {cpus} CPUs and these repeats can resolve"
print(f"| `{a}` → `{b}` | {t} | {text} ({reported:.3f}) | {r:.3f} | [{lo:.3f}, {hi:.3f}] | {verdict} |")
' "$a" "$b" "$tc" "$reported_ratio" "$reported_text" "$cpus"
    done
}

header() {
    echo "| comparison | threads | reported (ratio) | replay ratio | 95% interval | verdict |"
    echo "|---|--:|---|--:|---|---|"
}

echo "# Published reports replayed"
echo
echo "\`bench/replay_published.sh\` on $cpus CPUs ($(uname -r)), $repeat interleaved repeats of ${duration} s," \
     "critical section ${CS_NS:-1000} ns, outside ${OUTSIDE_NS:-500} ns, owner oracle $oracle." \
     "Ratios are B's throughput over A's (means over runs); intervals from \`lockscope diff\`."
echo
for report in "${reports[@]}"; do
    case $report in
    unlink | 000)
        for w in "$window" 0; do
            name=unlink-window$w
            echo "## Hansen 2016: 4.7 rwsem vs 4.6 mutex (unlink1), release window $w ns"
            echo
            bench "$name" "$threads" mutex@4.6,rwsem@4.7-hacked,rwsem@4.2 --release-window "$w"
            header
            compare "$name" "$threads" mutex@4.6 rwsem@4.2 0.723 "689,179 → 498,325 ops/s (4 threads, 4 cores)"
            compare "$name" "$threads" mutex@4.6 rwsem@4.7-hacked 0.975 "689,179 → 671,706 ops/s"
            compare "$name" "$threads" rwsem@4.7-hacked rwsem@4.2 0.742 "671,706 → 498,325 ops/s"
            echo
        done
        ;;
    xfs-repair | 002)
        name=xfs-repair
        echo "## Low 2014: 3.16 writers spinning on reader-owned rwsems (xfs_repair), ${READ_PCT:-50}% reads"
        echo
        bench "$name" "$threads_2x" rwsem@3.15,rwsem@3.16-rc2,rwsem@3.16 --read-pct "${READ_PCT:-50}"
        header
        compare "$name" "$threads_2x" rwsem@3.15 rwsem@3.16-rc2 0.2 "5x slower on 3.16-rc2"
        compare "$name" "$threads_2x" rwsem@3.16-rc2 rwsem@3.16 3.07 "4m24s → 1m26s with the fix"
        echo
        ;;
    aim7 | 003)
        name=aim7
        echo "## Long 2019: the rwsem rework with handoff, then the handoff writer spinning (AIM7 shared_memory)"
        echo
        bench "$name" "$threads_2x" rwsem@4.8,rwsem@5.3-rc-tip,rwsem@5.4
        header
        compare "$name" "$threads_2x" rwsem@4.8 rwsem@5.3-rc-tip 0.935 "8,092,486 → 7,567,568 jobs/min"
        compare "$name" "$threads_2x" rwsem@5.3-rc-tip rwsem@5.4 1.051 "7,567,568 → 7,954,545 jobs/min"
        compare "$name" "$threads_2x" rwsem@4.8 rwsem@5.4 0.983 "8,092,486 → 7,954,545 jobs/min"
        echo
        ;;
    *)
        echo "replay_published.sh: unknown report '$report' (unlink, xfs-repair, aim7)" >&2
        exit 2
        ;;
    esac
done
