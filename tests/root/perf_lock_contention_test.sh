#!/usr/bin/env bash
# The cases of perf's own test of `perf lock contention` (the kernel's
# tools/perf/tests/shell/lock_contention.sh), run with lockscope in perf's
# place on perf's workload, `perf bench sched messaging -p` (two groups): record then
# report -i, record -o - piped into report -i -, the one-shot `con`, rows per
# thread (-t), per lock object (-l) and per cgroup (--lock-cgroup), the type
# (-Y), lock (-L), call-stack (-S) and cgroup (-G) filters, and -x CSV with
# --output. Each case checks what perf's checks: -E 1 -q prints one line,
# a filter keeps only what it names, the CSV's rows have the header's columns.
#
# Where lockscope answers differently, the case checks lockscope's answer
# (docs/perf-options.md): `report` prints on stdout where perf prints on
# stderr (`con` prints on stderr, as perf); -t with -S is refused, since
# lockscope keeps each task's totals over all its waits and not per lock;
# -F (a choice of columns) is refused; -S looks for "pipe" in the stacks,
# where perf's script looks for unix_stream, which its -p workload (pipes,
# not sockets) never calls.
# Usage: perf_lock_contention_test.sh LOCKSCOPE
set -uo pipefail
lockscope=$1
if [ "$(id -u)" -ne 0 ]; then
  echo "Skipped: recording needs root"
  exit 77
fi
if ! perf bench sched messaging -p -l 1 >/dev/null 2>&1; then
  echo "FAIL: 'perf bench sched messaging -p' does not run (scripts/install-deps.sh installs linux-perf)"
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
session=$work/perf.lockscope
result=$work/result
# Two groups of senders and receivers, not perf's ten: 80 tasks passing
# messages through pipes still contend on every lock type the cases filter
# for, and the cases run in about a fifth of the time.
workload=(perf bench sched messaging -p -g 2)
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
lines() { grep -c '' "$1"; }
# The one-shot form, as perf's script runs it: the workload's output thrown
# away, the report (stderr) kept.
con() { "$lockscope" con "$@" -- "${workload[@]}" >/dev/null 2>"$result"; }
one_line() {  # what: the result holds exactly one line
  [ "$(lines "$result")" = 1 ] || fail "$1 printed $(lines "$result") lines, not 1: $(cat "$result")"
}

echo "record, then report -i -E 1 -q"
"$lockscope" record -o "$session" -- "${workload[@]}" >/dev/null 2>"$work/record.err" ||
  { cat "$work/record.err"; echo "FAIL: record failed"; exit 1; }
"$lockscope" report -i "$session" -E 1 -q >"$result" 2>&1
one_line "report -i FILE -E 1 -q"

echo "con -a -b -E 1 -q"
con -a -b -E 1 -q
one_line "con -a -b -E 1 -q"

echo "record -o - | report -i - -E 1 -q"
"$lockscope" record -o - -- "${workload[@]}" 2>"$work/record.err" | "$lockscope" report -i - -E 1 -q >"$result" 2>&1
one_line "record -o - | report -i - -E 1 -q"
grep -q "sched/messaging" "$work/record.err" ||
  fail "with -o -, the command's output should go to stderr: $(cat "$work/record.err")"

echo "per thread: -t"
"$lockscope" report -i "$session" -t -E 1 -q >"$result" 2>&1
one_line "report -t -E 1 -q"
con -a -b -t -E 1 -q
one_line "con -a -b -t -E 1 -q"

echo "per lock object: -l"
"$lockscope" report -i "$session" -l -E 1 -q >"$result" 2>&1
one_line "report -l -E 1 -q"
grep -q ' #[0-9]' "$result" || fail "report -l: not a row of one lock object: $(cat "$result")"
con -a -b -l -E 1 -q
one_line "con -a -b -l -E 1 -q"

echo "per cgroup: --lock-cgroup"
con -a -b --lock-cgroup -E 1 -q
one_line "con -a -b --lock-cgroup -E 1 -q"

echo "type filter: -Y spinlock, -Y mutex"
for kind in spinlock mutex; do
  "$lockscope" report -i "$session" -Y $kind -q >"$result" 2>&1
  others=$(awk -v k=$kind '$2 !~ "^" k' "$result")
  [ -z "$others" ] || fail "report -Y $kind shows other kinds: $others"
done
[ "$(lines "$result")" -ge 1 ] || fail "report -Y mutex shows no row: the pipes' mutex contended"
con -a -b -Y spinlock -q
others=$(awk '$2 !~ "^spinlock"' "$result")
[ -z "$others" ] || fail "con -Y spinlock shows other kinds: $others"

echo "lock filter: -L"
# perf's script looks for tasklist_lock among the lock objects; where the
# kernel's symbols do not name it, the session's first lock stands in.
"$lockscope" report -i "$session" -l -q >"$result" 2>&1
lock=tasklist_lock
if [ "$(grep -c "^tasklist_lock " "$result")" != 1 ]; then
  lock=$("$lockscope" report -i "$session" -E 1 -q | awk '{ print $1 }')
fi
"$lockscope" report -i "$session" -L "$lock" -q >"$result" 2>&1
kind=$(head -1 "$result" | awk '{ print $2 }' | sed -e 's,/.*,,')
[ -n "$kind" ] || fail "report -L $lock shows nothing"
others=$(awk -v l="$lock" -v k="$kind" '$1 != l || $2 !~ "^" k' "$result")
[ -z "$others" ] || fail "report -L $lock shows other locks or kinds than $kind: $others"
con -a -b -L "$lock" -q
others=$(awk -v l="$lock" '$1 != l' "$result")
[ -z "$others" ] || fail "con -L $lock shows other locks: $others"

echo "call-stack filter: -S"
"$lockscope" report -i "$session" -v -q >"$result" 2>&1
[ "$(grep -c pipe "$result")" != 0 ] || fail "report -v shows no stack through a pipe: $(cat "$result")"
"$lockscope" report -i "$session" -E 1 -S pipe -q >"$result" 2>&1
one_line "report -E 1 -S pipe -q"
con -a -b -S pipe -E 1 -q
one_line "con -a -b -S pipe -E 1 -q"
"$lockscope" report -i "$session" -E 0 -S no_function_is_called_this -q >"$result" 2>&1
[ "$(lines "$result")" = 0 ] || fail "report -S with text in no stack shows rows: $(cat "$result")"

echo "call-stack filter with -t: refused"
"$lockscope" report -i "$session" -t -E 1 -S pipe -q >"$result" 2>&1
status=$?
[ $status = 2 ] && grep -q "cover every lock" "$result" ||
  fail "report -t -S: exit $status, not 2 with the reason: $(cat "$result")"
con -a -b -t -S pipe -E 1 -q
status=$?
[ $status = 2 ] && grep -q "cover every lock" "$result" ||
  fail "con -t -S: exit $status, not 2 with the reason: $(cat "$result")"

echo "cgroup filter: -G"
con -a -b --lock-cgroup -E 1 -F wait_total -q
status=$?
[ $status = 2 ] && grep -q -- "-F/--field" "$result" || fail "con -F wait_total: exit $status: $(cat "$result")"
con -a -b --lock-cgroup -E 1 -q
one_line "con -a -b --lock-cgroup -E 1 -q"
cgroup=$(awk '{ print $1 }' "$result")
con -a -b --lock-cgroup -E 1 -G "$cgroup" -q
one_line "con -a -b --lock-cgroup -E 1 -G $cgroup -q"
row=$(awk '{ print $1 }' "$result")
[[ $cgroup == / || $row == "$cgroup" || $row == "$cgroup"/* ]] ||
  fail "con -G $cgroup shows the cgroup $row, outside it"

echo "CSV: -x , --output"
csv_matches_header() {  # what: the first line is the header, one row follows with as many separators
  local header output
  header=$(head -1 "$result" | tr -d -c , | wc -c)
  output=$(sed -n '2,$p' "$result" | tr -d -c , | wc -c)
  [ "$header" -ge 5 ] || fail "$1: the header has $header commas: $(head -1 "$result")"
  [ "$(lines "$result")" = 2 ] || fail "$1: $(lines "$result") lines, not a header and one row"
  [ "$header" = "$output" ] || fail "$1: the row has $output commas, the header $header"
}
rm -f "$result"
"$lockscope" report -i "$session" -E 1 -x , --output "$result"
csv_matches_header "report -E 1 -x , --output"
"$lockscope" con -a -b -E 1 -x , --output "$result" -- "${workload[@]}" >/dev/null 2>&1
csv_matches_header "con -a -b -E 1 -x , --output"

[ "$failures" -eq 0 ] || exit 1
echo "ok: perf's lock contention cases pass with lockscope in perf's place"
