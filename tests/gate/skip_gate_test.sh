#!/usr/bin/env bash
# The skip gate itself (scripts/skip_gate.py), on JUnit files that a real
# ctest writes: a gtest-style skip outside the allow-list fails in strict
# mode and is named with its reason; an allowed one passes; a skip inside
# a test that CTest counts as passed (one executable, many gtest tests) is
# found too; without --strict every skip is listed and nothing fails.
set -euo pipefail
gate="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir "$work/suite"
cat > "$work/suite/CTestTestfile.cmake" <<'CT'
add_test(Skips.NeedsAThing sh -c "printf '[ RUN      ] Skips.NeedsAThing\nx.cpp:3: Skipped\nneeds a <thing> & more\n[  SKIPPED ] Skips.NeedsAThing (0 ms)\n'")
set_tests_properties(Skips.NeedsAThing PROPERTIES SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
add_test(Skips.Busy sh -c "printf 'x.cpp:9: Skipped\nsomething else keeps the CPUs busy (idle 3%%)\n[  SKIPPED ] Skips.Busy (1 ms)\n'")
set_tests_properties(Skips.Busy PROPERTIES SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
add_test(whole_executable sh -c "printf '[ RUN      ] Lab.Boots\ny.cpp:1: Skipped\nno qemu here\n[  SKIPPED ] Lab.Boots (0 ms)\n[  PASSED  ] 0 tests.\n'")
add_test(Passes sh -c "echo fine")
CT
(cd "$work/suite" && ctest --output-junit "$work/all.xml" >/dev/null) || true

printf '# comment\nsomething else keeps the CPUs busy\n' > "$work/allow.txt"

if out=$(python3 "$gate" "$work/all.xml" --allow-list "$work/allow.txt" --strict 2>&1); then
  fail "strict mode passed with skips outside the allow-list: $out"
fi
grep -q 'NOT ALLOWED Skips.NeedsAThing: needs a <thing> & more' <<<"$out" || fail "reason not printed: $out"
grep -q 'NOT ALLOWED Lab.Boots: no qemu here' <<<"$out" || fail "skip inside a passing executable missed: $out"
grep -q 'allowed     Skips.Busy: something else keeps the CPUs busy' <<<"$out" || fail "allowed skip not listed: $out"

out=$(python3 "$gate" "$work/all.xml" --allow-list "$work/allow.txt") || fail "non-strict mode failed: $out"
grep -q '3 test(s) skipped' <<<"$out" || fail "non-strict mode did not list the skips: $out"

# Only allowed skips: strict passes.
cat > "$work/suite/CTestTestfile.cmake" <<'CT'
add_test(Skips.Busy sh -c "printf 'x.cpp:9: Skipped\nsomething else keeps the CPUs busy\n[  SKIPPED ] Skips.Busy (1 ms)\n'")
set_tests_properties(Skips.Busy PROPERTIES SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
add_test(Passes sh -c "echo fine")
CT
(cd "$work/suite" && ctest --output-junit "$work/allowed.xml" >/dev/null) || true
out=$(python3 "$gate" "$work/allowed.xml" --allow-list "$work/allow.txt" --strict 2>&1) ||
  fail "strict mode failed on an allowed skip: $out"

# No allow-list given: every skip fails in strict mode.
python3 "$gate" "$work/allowed.xml" --strict >/dev/null 2>&1 && fail "strict mode without an allow-list passed"
# A missing or broken file is a usage error, not a pass.
python3 "$gate" "$work/none.xml" >/dev/null 2>&1 && fail "a missing JUnit file passed"
echo "skip gate: ok"
