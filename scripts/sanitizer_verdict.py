#!/usr/bin/env python3
"""The verdict of a test run under AddressSanitizer + UBSan.

The instrumented processes write their reports into REPORT_DIR
(ASAN_OPTIONS/UBSAN_OPTIONS log_path=REPORT_DIR/...), so that a report of a
child process is seen even where its test only looks at an exit status.

- Any report there fails the run: each is printed whole.
- Otherwise, the tests that failed in the CTest JUnit file are printed as
  one anchored CTest regex on stdout, for one rerun: under instrumentation
  (several times slower) a test's verdict about counts or timing can miss
  where the same test passes uninstrumented; the rerun tells a bug from
  that. A test that fails again fails the run.

usage: sanitizer_verdict.py REPORT_DIR [JUNIT_XML]
exit status: 0 nothing failed; 3 tests failed with no sanitizer report
(their regex on stdout); 1 a sanitizer report, or JUNIT_XML unreadable;
2 usage
"""
import os
import re
import sys
import xml.etree.ElementTree as ET


def reports(report_dir):
    if not os.path.isdir(report_dir):
        return []
    return sorted(os.path.join(report_dir, name) for name in os.listdir(report_dir))


def failed_tests(junit):
    root = ET.parse(junit).getroot()
    return [case.get("name") for case in root.iter("testcase")
            if case.find("failure") is not None or case.get("status") == "fail"]


def main(argv):
    if len(argv) not in (2, 3):
        print("usage: sanitizer_verdict.py REPORT_DIR [JUNIT_XML]", file=sys.stderr)
        return 2
    found = reports(argv[1])
    if found:
        for path in found:
            print(f"== sanitizer report {os.path.basename(path)} ==", file=sys.stderr)
            with open(path, encoding="utf-8", errors="replace") as f:
                sys.stderr.write(f.read())
        print(f"sanitizer_verdict: {len(found)} sanitizer report(s), above", file=sys.stderr)
        return 1
    if len(argv) == 2:
        return 0
    try:
        failed = failed_tests(argv[2])
    except (OSError, ET.ParseError) as e:
        print(f"sanitizer_verdict: cannot read the test results {argv[2]}: {e}", file=sys.stderr)
        return 1
    if not failed:
        return 0
    print(f"sanitizer_verdict: {len(failed)} test(s) failed with no sanitizer report: " + ", ".join(failed),
          file=sys.stderr)
    print("^(" + "|".join(re.escape(name) for name in failed) + ")$")
    return 3


if __name__ == "__main__":
    sys.exit(main(sys.argv))
