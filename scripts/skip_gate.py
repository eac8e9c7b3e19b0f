#!/usr/bin/env python3
"""Lists every skipped test with its reason, from a CTest JUnit file, and
fails (--strict) when a skip's reason is not on the allow-list.

A skipped test is not a passed test: as root on a kernel that can run
lockscope, scripts/test.sh runs this with --strict, so a test that skips
for a reason nobody accepted fails the suite instead of hiding in "100%
tests passed". Skips are found in every test's output (a gtest executable
run as one CTest test reports its skips only there), not only in tests
CTest itself marked as skipped.

usage: skip_gate.py JUNIT_XML [--allow-list FILE] [--strict]
exit status: 0 ok, 1 a skip outside the allow-list (with --strict), 2 usage
"""
import argparse
import re
import sys
import xml.etree.ElementTree as ET

SKIP_BLOCK = re.compile(r"^(?:.*: )?Skipped\n(.*?)\n?\[  SKIPPED \] (\S+)", re.M | re.S)
SKIPPED_LINE = re.compile(r"^\[  SKIPPED \] (\S+) \(", re.M)


def load_allow_list(path):
    if not path:
        return []
    with open(path, encoding="utf-8") as f:
        return [line.strip() for line in f if line.strip() and not line.lstrip().startswith("#")]


def skips_of(case):
    """(test name, reason) for each gtest skip in a CTest test case."""
    out = case.findtext("system-out") or ""
    found = [(name, " ".join(reason.split()) or "(no reason given)") for reason, name in SKIP_BLOCK.findall(out)]
    named = {name for name, _ in found}
    # A skip whose message gtest did not print in the usual form.
    for name in SKIPPED_LINE.findall(out):
        if name not in named:
            found.append((name, "(no reason found in the output)"))
            named.add(name)
    skipped = case.find("skipped") is not None or case.get("status") == "notrun"
    if skipped and not found and case.get("status") != "disabled":
        found.append((case.get("name"), "(no reason found in the output)"))
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("junit")
    ap.add_argument("--allow-list", help="file of accepted reasons (substrings), one a line, # comments")
    ap.add_argument("--strict", action="store_true", help="fail on a skip whose reason is not allowed")
    args = ap.parse_args()
    try:
        root = ET.parse(args.junit).getroot()
        allowed = load_allow_list(args.allow_list)
    except (OSError, ET.ParseError) as e:
        print(f"skip_gate: {e}", file=sys.stderr)
        return 2

    skips, disabled = [], []
    for case in root.iter("testcase"):
        if case.get("status") == "disabled":
            disabled.append(case.get("name"))
        for name, reason in skips_of(case):
            ok = any(a in reason for a in allowed)
            skips.append((name, reason, ok))

    if disabled:
        print(f"\n{len(disabled)} test(s) disabled in the source (not run):")
        for name in disabled:
            print(f"  {name}")
    if not skips:
        print("\nno test skipped")
        return 0
    bad = [s for s in skips if not s[2]]
    print(f"\n{len(skips)} test(s) skipped:")
    for name, reason, ok in skips:
        print(f"  {'allowed' if ok else 'NOT ALLOWED':11} {name}: {reason}")
    if bad and args.strict:
        print(f"\nskip_gate: {len(bad)} test(s) skipped for a reason that is not on the allow-list "
              f"({args.allow_list or 'none given'}); on this machine they must run", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
