#!/usr/bin/env bash
# Every door's output of five recorded sessions, byte for byte: the report
# (text, JSON, CSV, each grouping), the exports (folded, CSV, pprof, Chrome
# trace) and the diff, as cases.txt lists them, against expected/. A change
# to what any door prints, by a refactoring of the code between the session
# file and the output, fails here with the first lines that differ.
#
# When an output changes on purpose, write the new ones and read their diff
# before committing them:
#   tests/golden/golden_test.sh build/lockscope --update && git diff tests/golden/expected
#
# The sessions (sessions/) were recorded once and are kept as files:
#   a.lockscope      record -w pipe -t 2 -d 1 --repeat 3
#   b.lockscope      record -w pipe -t 4 -d 1 --repeat 3
#   trace.lockscope  record -w mmap1 -t 2 -d 0.3 --trace
#   user.lockscope   record -- stress-ng --mutex 2 -t 1 (Debian's stress-ng)
#   holders.lockscope  record -- ./holder_prog 2000 1 stats (tests/userlock:
#                    a pthread mutex's holder preempted by a SCHED_FIFO thread)
# Usage: golden_test.sh LOCKSCOPE [--update]
set -uo pipefail
lockscope=$(realpath "${1:?usage: golden_test.sh LOCKSCOPE [--update]}")
update=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
failures=0 cases=0
while read -r name args; do
  [[ -z $name || $name == \#* ]] && continue
  cases=$((cases + 1))
  # Paths relative to this folder: an output that names its file reads the
  # same in every checkout.
  args=${args//\{a\}/sessions/a.lockscope}
  args=${args//\{b\}/sessions/b.lockscope}
  args=${args//\{trace\}/sessions/trace.lockscope}
  args=${args//\{user\}/sessions/user.lockscope}
  args=${args//\{holders\}/sessions/holders.lockscope}
  # shellcheck disable=SC2086 # the case's words, as cases.txt spells them
  (cd "$here" && LC_ALL=C.UTF-8 TZ=UTC "$lockscope" $args >"$out/$name" 2>"$out/$name.err")
  status=$?
  if [ "$status" -ne 0 ]; then
    echo "FAIL $name: lockscope $args exited $status"
    sed 's/^/    /' "$out/$name.err" | head -5
    failures=$((failures + 1))
    continue
  fi
  if [ "$update" = --update ]; then
    cp "$out/$name" "$here/expected/$name"
  elif ! cmp -s "$out/$name" "$here/expected/$name"; then
    echo "FAIL $name: lockscope $args differs from expected/$name"
    if grep -qI . "$out/$name" 2>/dev/null; then
      diff -u "$here/expected/$name" "$out/$name" | head -20 | sed 's/^/    /'
    else
      echo "    (binary: $(cmp "$here/expected/$name" "$out/$name" 2>&1 | head -1))"
    fi
    failures=$((failures + 1))
  fi
done <"$here/cases.txt"
if [ "$update" = --update ]; then
  echo "golden: wrote $cases expected outputs into $here/expected"
  exit 0
fi
[ "$failures" -eq 0 ] || { echo "golden: $failures of $cases outputs differ"; exit 1; }
echo "golden: all $cases outputs are as expected"
