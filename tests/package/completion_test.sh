#!/usr/bin/env bash
# The generated bash completion completes what a user types, in a scripted
# bash (no terminal): commands, a command's options, workload names and
# lock variants with their rwsem policies.
# Usage: completion_test.sh COMPLETION_FILE [--gui]   (--gui: built with lockscope-gui)
set -uo pipefail
source "$1" || { echo "FAIL: cannot source $1"; exit 1; }
gui=${2:-}

failures=0
# complete LINE: what completing at the end of LINE offers, space-separated and sorted.
complete_line() {
  COMP_LINE=$1
  COMP_POINT=${#COMP_LINE}
  read -r -a COMP_WORDS <<<"$COMP_LINE"
  [[ $COMP_LINE == *" " ]] && COMP_WORDS+=("")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  local fn=_lockscope
  [[ ${COMP_WORDS[0]} == lockscope-gui ]] && fn=_lockscope_gui
  "$fn" lockscope "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]:-}"
  printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}
expect() {
  local got
  got=$(complete_line "$1")
  if [[ $got != "$2" ]]; then
    echo "FAIL: '$1<TAB>' offers '$got', expected '$2'"
    failures=$((failures + 1))
  fi
}
expect_has() {
  local got
  got=$(complete_line "$1")
  if [[ " $got " != *" $2 "* ]]; then
    echo "FAIL: '$1<TAB>' offers '$got', which lacks '$2'"
    failures=$((failures + 1))
  fi
}

expect "lockscope re" "record report"
expect "lockscope con" "con contention"
expect "lockscope con --lock-o" "--lock-owner"
expect "lockscope contention --field" "--field-separator"
expect_has "lockscope report --" "--lock-owner"
expect "lockscope wo" "workload"
expect "lockscope record --session" "--session-dir"
expect "lockscope record --prometheus-t" "--prometheus-top"
expect "lockscope record --workload pipe" "pipe pipes"
expect "lockscope workload unl" "unlink1 unlink2"
# '@' breaks words for readline: only the part after it is offered.
expect "lockscope bench --lock rwsem@4" "4.2 4.7-hacked 4.8"
expect "lockscope bench --lock mutex,pthread_rw" "mutex,pthread_rwlock"
expect_has "lockscope bench --lock " "rwsem@5.19"
expect_has "lockscope bench --lock " "mutex@4.6"
expect_has "lockscope report --" "--format"
expect "lockscope record --prometheus " ""
if [ "$gui" = --gui ]; then
  expect_has "lockscope-gui --" "--screenshot"
  expect "lockscope-gui --page lo" "locks"
fi

if [ "$failures" -ne 0 ]; then
  exit 1
fi
echo "ok: completion offers commands, options, workloads and lock variants"
