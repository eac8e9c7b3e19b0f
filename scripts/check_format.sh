#!/usr/bin/env bash
# The style check: every C++ file under the given directories (default: all
# of the project's C++; bpf/ follows the kernel's style, bpf/.clang-format)
# is as clang-format would write it. Prints the files that are not, with
# `clang-format -i FILE` to fix them.
set -euo pipefail
cd "$(dirname "$0")/.."
FORMATTED=(collector gui tests bench)
dirs=("$@")
[ ${#dirs[@]} -gt 0 ] || dirs=("${FORMATTED[@]}")
command -v clang-format >/dev/null || { echo "check_format: clang-format is not installed (scripts/install-deps.sh --tests)" >&2; exit 2; }
# One clang-format per batch of files, a batch per CPU: one process per file
# spends most of its time starting up.
status=0
out=$(find "${dirs[@]}" -type f \( -name '*.cpp' -o -name '*.h' \) -print0 | sort -z |
      xargs -0 -r -n 40 -P "$(nproc)" clang-format --dry-run --Werror 2>&1) || status=$?
bad=$(printf '%s\n' "$out" | sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u)
if [ -n "$bad" ]; then
  while IFS= read -r f; do echo "not formatted: $f (clang-format -i $f)"; done <<<"$bad"
  exit 1
fi
if [ "$status" -ne 0 ]; then
  # clang-format failed for another reason (a file it cannot read, a bad .clang-format).
  printf '%s\n' "$out" >&2
  echo "check_format: clang-format failed (exit $status)" >&2
  exit 1
fi
echo "format: ok (${dirs[*]})"
