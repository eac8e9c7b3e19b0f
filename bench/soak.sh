#!/usr/bin/env bash
# Soak: records system-wide for a long time while three kernel workloads
# (pipe, unlink1 and mmap1, the highest event rates lockscope's workloads
# reach) contend at once, samples the recorder's resident memory every few
# seconds, and checks the session it leaves: memory must stay flat, lost
# events must be zero or reported, the session must load with the expected
# number of intervals.
#
# usage: bench/soak.sh [DURATION_S]   (default 600; needs root)
# environment: LOCKSCOPE (binary; default: build/lockscope, else PATH),
#   THREADS (per workload, default 2), INTERVAL (s, default 1),
#   SAMPLE (s between RSS samples, default 5), OUT (session file; default a
#   temporary file that is removed), RSS_GROWTH_MAX (KiB the recorder may
#   grow between the first and the last minute before it counts as not flat,
#   default 1024).
# exit status: 0 all checks held, 1 a check failed, 2 cannot run.
set -euo pipefail

duration=${1:-600}
threads=${THREADS:-2}
interval=${INTERVAL:-1}
sample=${SAMPLE:-5}
growth_max=${RSS_GROWTH_MAX:-1024}

here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/bench/find_lockscope.sh"
source "$here/bench/soak_setup.sh" 30
out=${OUT:-$work/soak.lockscope}

echo "soak: recording ${duration} s system-wide into $out; workloads pipe, unlink1, mmap1 at $threads threads each"
"$lockscope" record -d "$duration" -i "$interval" -o "$out" 2>"$work/record.err" &
recorder=$!
pids+=("$recorder")
# The recorder attaches before it prints this line.
for _ in $(seq 100); do
    grep -q "lockscope: recording" "$work/record.err" && break
    kill -0 "$recorder" 2>/dev/null || break
    sleep 0.1
done
if ! grep -q "lockscope: recording" "$work/record.err"; then
    echo "soak: the recorder did not start:" >&2
    cat "$work/record.err" >&2
    exit 1
fi
for w in pipe unlink1 mmap1; do
    "$lockscope" workload "$w" -t "$threads" -d "$duration" --dir "$work" >"$work/$w.out" 2>&1 &
    pids+=("$!")
done

# time_s rss_kib, one line per sample, while the recorder lives.
start=$(date +%s)
while kill -0 "$recorder" 2>/dev/null; do
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$recorder/status" 2>/dev/null || true)
    [[ -n $rss ]] && echo "$(( $(date +%s) - start )) $rss" >>"$work/rss"
    sleep "$sample"
done
status=0
wait "$recorder" || status=$?
if (( status != 0 )); then
    echo "soak: FAIL: the recorder exited with status $status:" >&2
    cat "$work/record.err" >&2
    exit 1
fi

"$lockscope" report "$out" --format json >"$work/report.json" ||
    { echo "soak: FAIL: report cannot read the session" >&2; exit 1; }
size=$(stat -c %s "$out")
python3 - "$work/report.json" "$work/rss" "$duration" "$interval" "$size" "$growth_max" <<'EOF'
import json, sys
report_file, rss_file = sys.argv[1], sys.argv[2]
duration, interval, size, growth_max = float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
report = json.load(open(report_file))
t = report["totals"]
samples = [tuple(map(int, line.split())) for line in open(rss_file) if line.strip()]
rss = [kib for _, kib in samples]
# Flat: the last minute's peak against the first minute's peak (start-up
# allocations, lock naming and the first map reads happen early).
first = max(kib for s, kib in samples if s <= 60)
last = max(kib for s, kib in samples if s >= samples[-1][0] - 60)
expected = int(duration / interval)
checks = {
    "memory flat (last minute within %d KiB of the first)" % growth_max: last - first <= growth_max,
    "intervals as expected (%d, at least %d)" % (t["intervals"], expected - 2): t["intervals"] >= expected - 2,
    "contentions recorded": t["contentions"] > 0,
}
mib = lambda kib: kib / 1024
print("soak: %d s, %d RSS samples" % (samples[-1][0], len(samples)))
print("soak: recorder RSS start %.1f MiB, end %.1f MiB, max %.1f MiB (first-minute peak %.1f, last-minute peak %.1f)"
      % (mib(rss[0]), mib(rss[-1]), mib(max(rss)), mib(first), mib(last)))
print("soak: %d intervals, %d contentions, %d events (%.0f/s), lost %d"
      % (t["intervals"], t["contentions"], t["events"], t["events"] / max(t["duration_s"], 1), t["lost"]))
if t["lost"]:
    print("soak: lost by cause: " + ", ".join("%s %d" % kv for kv in t["lost_by_cause"].items() if kv[1]))
print("soak: session %.2f MiB (%.3f MiB per minute)" % (size / 2**20, size / 2**20 / (duration / 60)))
ok = True
for name, held in checks.items():
    print("soak: %s %s" % ("ok  " if held else "FAIL", name))
    ok = ok and held
sys.exit(0 if ok else 1)
EOF
