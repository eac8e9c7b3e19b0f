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
command -v clang-format >/dev/null || { echo "check_format: clang-format is not installed (scripts/install-deps.sh)" >&2; exit 2; }
bad=0
while IFS= read -r -d '' f; do
  if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "not formatted: $f (clang-format -i $f)"
    bad=1
  fi
done < <(find "${dirs[@]}" -type f \( -name '*.cpp' -o -name '*.h' \) -print0 | sort -z)
[ $bad -eq 0 ] && echo "format: ok (${dirs[*]})"
exit $bad
