#!/usr/bin/env bash
# docs/building.md's layout tables name the tree as it is
# (scripts/check_layout.py on this tree), and the check itself catches a
# folder the tables leave out and a folder they name that the tree lacks.
set -euo pipefail
check="$1"
repo="$2"
python3 "$check" "$repo" >/dev/null 2>&1 || { python3 "$check" "$repo"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/docs" "$work/collector/named" "$work/collector/forgotten" "$work/gui/views" "$work/.ci"
touch "$work/collector/named/a.cpp" "$work/collector/forgotten/b.cpp" "$work/gui/views/c.cpp" "$work/.ci/run"
cat >"$work/docs/building.md" <<'MD'
# Building

## Layout

| directory | what |
|---|---|
| `collector/named` | named |
| `gui/views`, `docs/` | several in a row |
| `collector/gone` | a folder the tree lacks |

## After
| `collector/forgotten` | a table outside the layout section does not count |
MD
status=0
out=$(python3 "$check" "$work" 2>&1) || status=$?
fail() { echo "FAIL: $*"; echo "$out"; exit 1; }
[ "$status" -eq 1 ] || fail "exit $status, not 1, on a layout that differs from the tree"
grep -q "does not name collector/forgotten/" <<<"$out" || fail "the folder left out is not named"
grep -q "names collector/gone/, which the tree lacks" <<<"$out" || fail "the missing folder is not named"
! grep -q "name collector/named/\|gui/views/\|name docs/\|\.ci" <<<"$out" || fail "a folder the table names, or a hidden one, is reported"
[ "$(grep -c '^docs/building.md:' <<<"$out")" -eq 2 ] || fail "not exactly the two differences"
echo "ok: the layout holds here, and a forgotten and a missing folder are both caught"
