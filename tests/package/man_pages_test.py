#!/usr/bin/env python3
"""`man lockscope-COMMAND` lists exactly the options `lockscope COMMAND --help`
lists, in the same order, for every command and for lockscope-gui, with
the sections a man page has (and not Boost's '-h [ --help ]' layout); and
`man lockscope` names every command.

usage: man_pages_test.py LOCKSCOPE MAN_DIR... [--gui LOCKSCOPE_GUI]
"""
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "packaging"))
import help_text  # noqa: E402


def rendered(page, manpath):
    env = dict(os.environ, MANPATH=":".join(manpath), MANWIDTH="120", LC_ALL="C", MAN_DISABLE_SECCOMP="1")
    out = subprocess.run(["man", page], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("FAIL: man %s: %s" % (page, out.stderr.strip()))
    return re.sub(r".\x08", "", out.stdout)  # overstrike bold


def man_option_terms(text):
    """The tags of the OPTIONS section: lines indented 7 that start with '-'."""
    section = text.split("\nOPTIONS\n", 1)[1]
    section = re.split(r"\n[A-Z][A-Z ]+\n", section, 1)[0]
    return [l.strip() for l in section.splitlines() if re.match(r"^ {7}-", l)]


def main():
    args = sys.argv[1:]
    gui = None
    if "--gui" in args:
        i = args.index("--gui")
        gui = args[i + 1]
        del args[i:i + 2]
    lockscope, manpath = args[0], args[1:]
    failures = 0
    checked = 0
    programs = [("lockscope-" + c, [lockscope, c]) for c, _ in help_text.commands(lockscope)]
    if gui:
        programs.append(("lockscope-gui", [gui]))
    for page, argv in programs:
        text = rendered(page, manpath)
        for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "EXAMPLES", "SEE ALSO"):
            if page != "lockscope-gui" and "\n%s\n" % section not in "\n" + text:
                print("FAIL: man %s has no %s section" % (page, section))
                failures += 1
        if " [ --" in text:
            print("FAIL: man %s shows Boost's '-h [ --help ]' layout" % page)
            failures += 1
        want = [help_text.Help.man_term(t) for t, _ in help_text.Help(help_text.run_help(argv + ["--help"])).options]
        got = man_option_terms(text)
        if not want:
            print("FAIL: %s --help lists no options" % " ".join(argv))
            failures += 1
        elif got != want:
            print("FAIL: man %s and %s --help differ:\n  man:  %s\n  help: %s" % (page, " ".join(argv), got, want))
            failures += 1
        else:
            checked += len(want)
    main_page = rendered("lockscope", manpath)
    for c, _ in help_text.commands(lockscope):
        if "lockscope " + c not in main_page:
            print("FAIL: man lockscope does not name the command %s" % c)
            failures += 1
    if failures:
        return 1
    print("ok: %d man pages, %d options, each as --help lists it" % (len(programs), checked))
    return 0


if __name__ == "__main__":
    sys.exit(main())
