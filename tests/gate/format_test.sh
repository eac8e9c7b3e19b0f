#!/usr/bin/env bash
# The formatted directories stay formatted, and the check fails on a file
# that is not.
set -euo pipefail
check="$1"
"$check" || exit 1
repo=$(cd "$(dirname "$check")/.." && pwd)
work=$(mktemp -d "$repo/collector/.format-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
printf 'int  f( ) {return 1;}\n' > "$work/bad.cpp"
if out=$("$check" "${work#"$repo"/}"); then
  echo "FAIL: the check passed a badly formatted file" >&2; exit 1
fi
grep -q "not formatted: .*bad.cpp" <<<"$out" || { echo "FAIL: not named: $out" >&2; exit 1; }
echo "format check: ok"
