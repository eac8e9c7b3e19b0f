#!/usr/bin/env python3
"""`man lockscope-report`'s EXIT STATUS says what `lockscope report` returns:
four bad inputs (no session file, a session file that does not exist, a
negative row count, a file that is not a session) each exit with the code
whose line in the man page names that kind of failure.

usage: man_exit_status_test.py LOCKSCOPE MAN_DIR SESSION
"""
import os
import re
import subprocess
import sys
import tempfile


def exit_status_section(man_dir):
    env = dict(os.environ, MANPATH=man_dir, MANWIDTH="120", LC_ALL="C", MAN_DISABLE_SECCOMP="1")
    out = subprocess.run(["man", "lockscope-report"], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("FAIL: man lockscope-report: %s" % out.stderr.strip())
    text = re.sub(r".\x08", "", out.stdout)
    if "\nEXIT STATUS\n" not in text:
        raise SystemExit("FAIL: man lockscope-report has no EXIT STATUS section")
    section = re.split(r"\n[A-Z][A-Z ]+\n", text.split("\nEXIT STATUS\n", 1)[1], 1)[0]
    # "       2      usage error (...)": code, then what it means
    codes = {}
    for m in re.finditer(r"^\s+(\d+)\s+(\S.*)$", section, re.M):
        codes[int(m.group(1))] = m.group(2)
    return codes


def main():
    lockscope, man_dir, session = sys.argv[1:4]
    codes = exit_status_section(man_dir)
    failures = 0
    with tempfile.NamedTemporaryFile(suffix=".lockscope") as junk:
        junk.write(b"not a session file\n")
        junk.flush()
        cases = [
            ("no session file", [], "usage"),
            ("a missing file", [junk.name + ".missing"], "missing file"),
            ("a negative row count", [session, "-E", "-1"], "usage"),
            ("a file that is not a session", [junk.name], "failure"),
        ]
        for what, args, meaning in cases:
            run = subprocess.run([lockscope, "report"] + args, capture_output=True, text=True)
            line = codes.get(run.returncode)
            if line is None or meaning not in line:
                print("FAIL: report with %s exits %d; the man page says %r for it and lists %s" %
                      (what, run.returncode, line, codes))
                failures += 1
            elif not run.stderr.strip():
                print("FAIL: report with %s says nothing on stderr" % what)
                failures += 1
    if 0 not in codes:
        print("FAIL: the EXIT STATUS section lists no success code: %s" % codes)
        failures += 1
    if failures:
        return 1
    print("ok: report's exit status on 4 bad inputs matches man lockscope-report (%s)" % codes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
