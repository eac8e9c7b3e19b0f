#!/usr/bin/env bash
# Exporter soak: `lockscope record --prometheus` as the packaged service runs
# it (TLS and a password from a web-config file, a rolling session series
# with rotation on), scraped every few seconds like Prometheus, under a mix
# of kernel workloads that changes every PHASE seconds (pipe, unlink1,
# mmap1, pagefault, two at once, none). Every minute it prints the
# recorder's RSS, its open files, the session directory's size, the lost
# events the exporter reports, failed scrapes and how full the recorder's
# kernel tables are (locks, (lock, stack) samples, stacks, tasks: bpftool);
# at the end a verdict:
# flat or growing, with the slopes (least squares after the first fifth of
# the run, when start-up allocations are done).
#
# usage: bench/exporter_soak.sh [DURATION_S]   (default 3600; needs root)
# environment: LOCKSCOPE (binary; default: build/lockscope, else PATH),
#   PHASE (s per workload mix, default 120), ROTATE_EVERY (default 10m),
#   KEEP (session files kept, default 3), SCRAPE (s between scrapes,
#   default 5), RSS_SLOPE_MAX (KiB per hour that still counts as flat,
#   default 1024).
# exit status: 0 flat and no failed scrape, 1 otherwise, 2 cannot run.
set -euo pipefail

duration=${1:-3600}
phase=${PHASE:-120}
rotate=${ROTATE_EVERY:-10m}
keep=${KEEP:-3}
scrape_every=${SCRAPE:-5}
slope_max=${RSS_SLOPE_MAX:-1024}

here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/bench/find_lockscope.sh"
source "$here/bench/soak_setup.sh" 120
for tool in openssl htpasswd curl; do
    command -v "$tool" >/dev/null || { echo "exporter_soak.sh: needs $tool" >&2; exit 2; }
done

"$here/tests/exporter/make_certs.sh" "$work"
cat >"$work/web.yml" <<YAML
tls_server_config:
  cert_file: server.pem
  key_file: server-key.pem
basic_auth_users:
  prometheus: $(htpasswd -nbBC 10 prometheus soak | cut -d: -f2)
YAML
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
sessions=$work/sessions
"$lockscope" record --prometheus "127.0.0.1:$port" --web-config "$work/web.yml" -d "$duration" \
    --session-dir "$sessions" --rotate-every "$rotate" --keep "$keep" 2>"$work/record.err" &
recorder=$!
pids+=("$recorder")
scrape() { curl -sS --max-time 10 --cacert "$work/ca.pem" -u prometheus:soak "https://localhost:$port/metrics"; }
for _ in $(seq 100); do scrape >/dev/null 2>&1 && break; sleep 0.2; done
scrape >/dev/null || { echo "exporter_soak.sh: the exporter did not start:" >&2; cat "$work/record.err" >&2; exit 1; }
echo "soak: ${duration} s of record --prometheus over TLS with a password, sessions rotated every $rotate" \
     "(keep $keep), scraped every ${scrape_every} s, the workload mix changing every ${phase} s"

# The scraper: one line per scrape, "ok" or "failed", and the last body.
(
    while kill -0 "$recorder" 2>/dev/null; do
        if scrape >"$work/body.new" 2>/dev/null; then mv "$work/body.new" "$work/body"; echo ok; else echo failed; fi
        sleep "$scrape_every"
    done >"$work/scrapes"
) &
pids+=("$!")

# The workload mix: each phase runs for $phase s, then the next.
mixes=("pipe" "unlink1" "mmap1" "pipe unlink1" "pagefault" "" "mmap1 pipe")
(
    i=0
    while kill -0 "$recorder" 2>/dev/null; do
        mix=${mixes[$((i % ${#mixes[@]}))]}
        for w in $mix; do
            "$lockscope" workload "$w" -t 2 -d "$phase" --dir "$work" >/dev/null 2>&1 &
        done
        sleep "$phase"
        wait
        i=$((i + 1))
    done
) &
pids+=("$!")

start=$(date +%s)
printf 'soak: %6s %9s %10s %12s %6s %8s  %s\n' minute "RSS MiB" "open files" "sessions MiB" lost "failed" \
    "kernel tables in use (entries/size)"
while kill -0 "$recorder" 2>/dev/null; do
    sleep 60
    kill -0 "$recorder" 2>/dev/null || break
    minute=$(( ($(date +%s) - start) / 60 ))
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$recorder/status" 2>/dev/null || echo 0)
    fds=$(ls "/proc/$recorder/fd" 2>/dev/null | wc -l)
    bytes=$(du -sb "$sessions" 2>/dev/null | cut -f1)
    lost=$(awk '/^lockscope_lost_total/ {sum += $NF} END {printf "%d", sum}' "$work/body" 2>/dev/null || echo "?")
    failed=$(grep -c failed "$work/scrapes" 2>/dev/null || true)
    # The recorder's memory follows its kernel tables (each lock row and
    # stack is mirrored in user space): they fill as new locks and stacks
    # appear, and are not emptied while the recording runs.
    tables=$(python3 "$here/bench/bpf_map_fill.py" "$recorder" lock_index stack_samples stacks task_stats 2>/dev/null || echo "?")
    echo "$((minute * 60)) $rss $fds $bytes" >>"$work/samples"
    awk -v m="$minute" -v r="$rss" -v f="$fds" -v b="${bytes:-0}" -v l="$lost" -v x="${failed:-0}" -v t="$tables" \
        'BEGIN { printf "soak: %6d %9.1f %10d %12.1f %6s %8d  %s\n", m, r / 1024, f, b / 1048576, l, x, t }'
done
status=0
wait "$recorder" || status=$?
if (( status != 0 )); then
    echo "soak: FAIL: the recorder exited with status $status:" >&2
    tail -5 "$work/record.err" >&2
    exit 1
fi
scrapes=$(grep -c ok "$work/scrapes" || true)
failed=$(grep -c failed "$work/scrapes" || true)
python3 - "$work/samples" "$slope_max" "$scrapes" "$failed" <<'PY'
import sys
rows = [tuple(map(int, line.split())) for line in open(sys.argv[1]) if line.strip()]
slope_max, scrapes, failed = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rows = rows[len(rows) // 5:] if len(rows) >= 5 else rows
def slope(ys):  # least squares, per hour
    xs = [r[0] / 3600 for r in rows]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else 0.0
rss, fds = slope([r[1] for r in rows]), slope([r[2] for r in rows])
flat = rss <= slope_max and fds < 1
print(f"soak: {scrapes} scrapes, {failed} failed")
print(f"soak: verdict: {'flat' if flat else 'growing'}: RSS {rss:+.0f} KiB/h (flat up to {slope_max}), "
      f"open files {fds:+.1f}/h, over the last {len(rows)} minutes")
sys.exit(0 if flat and failed == 0 else 1)
PY
