#!/usr/bin/env python3
"""Writes the man pages of lockscope, of each of its commands and of
lockscope-gui, gzip-compressed, from the programs' own --help text.

usage: gen_man.py --lockscope BIN [--gui BIN --gui-out DIR] --version-header H | --version V --out DIR
"""
import argparse
import gzip
import os
import re
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
import help_text  # noqa: E402


def esc(text):
    # "…" has no glyph in an ASCII terminal's font.
    text = text.replace("\\", "\\e").replace("-", "\\-").replace("\u2026", "...")
    return "\n".join(("\\&" + line if line.startswith((".", "'")) else line) for line in text.split("\n"))


def term(t):
    """'-o [ --output ] arg' as '-o, --output VALUE', the options bold and the value italic."""
    parts = re.split(r"(\(default: [^)]*\)|(?<![\w-])--?[A-Za-z0-9][\w-]*|\bVALUE\b|<[^>]+>)",
                     help_text.Help.man_term(t))
    out = ""
    for p in parts:
        if p.startswith("(default: "):
            out += esc(p)
        elif re.fullmatch(r"--?[A-Za-z0-9][\w-]*", p):
            out += "\\fB" + esc(p) + "\\fR"
        elif p == "VALUE" or p.startswith("<"):
            out += "\\fI" + esc(p) + "\\fR"
        else:
            out += esc(p)
    return out


def exit_status(text):
    """'0 done, 1 failure (...), 2 usage error' as one tagged paragraph per code."""
    out = [".SH EXIT STATUS"]
    text = " ".join(text.split())
    for m in re.finditer(r"(?:^|[,;]\s*)(?:([a-z][\w -]*?):\s*)?(\d+)\s+((?:[^,;(]|\([^)]*\))+)", text):
        what = m.group(3).strip()
        if m.group(1):
            what += " (" + m.group(1).strip() + ")"
        out += [".TP", "\\fB%s\\fR" % m.group(2), esc(what)]
    return out


def paragraphs(text):
    """Plain paragraphs are filled; indented lists and examples keep their lines."""
    out = []
    for para in re.split(r"\n\s*\n", text.strip("\n")):
        if not para.strip():
            continue
        lines = para.split("\n")
        if any(l.startswith(" ") for l in lines) or len(lines) == 1 and lines[0].endswith(":"):
            out += [".PP", ".nf", esc(para), ".fi"]
        else:
            out += [".PP", esc(" ".join(l.strip() for l in lines))]
    return out


def page(name, summary, version, help_, see_also, extra=()):
    out = ['.TH %s 1 "" "lockscope %s" "User Commands"' % (name.upper(), version),
           ".SH NAME", "%s \\- %s" % (esc(name), esc(summary)),
           ".SH SYNOPSIS", ".nf"] + [esc(u) for u in help_.usage] + [".fi"]
    if help_.description:
        out += [".SH DESCRIPTION"] + paragraphs(help_.description)
    out += list(extra)
    if help_.options:
        out.append(".SH OPTIONS")
        for t, text in help_.options:
            # .br: a short tag would otherwise share its line with the text.
            out += [".TP", term(t), ".br", esc(text)]
    sections = help_.sections()
    if sections["notes"]:
        out += [".SH NOTES"] + paragraphs(sections["notes"])
    if sections["exit status"]:
        out += exit_status(sections["exit status"])
    if sections["examples"]:
        out += [".SH EXAMPLES", ".nf", esc(sections["examples"]), ".fi"]
    out += [".SH SEE ALSO", ", ".join("\\fB%s\\fR(1)" % esc(s) for s in see_also)]
    return "\n".join(out) + "\n"


def write(out_dir, name, text):
    path = os.path.join(out_dir, name + ".1.gz")
    # mtime 0: the same text gives the same bytes (reproducible packages).
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as f:
        f.write(text.encode("utf-8"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lockscope", required=True)
    ap.add_argument("--gui")
    ap.add_argument("--gui-out", help="where lockscope-gui.1.gz goes (another package); default --out")
    ap.add_argument("--version")
    ap.add_argument("--version-header", help="generated/lockscope_version.h, instead of --version")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.version_header:
        with open(a.version_header, encoding="utf-8") as f:
            a.version = re.search(r'define LOCKSCOPE_VERSION "([^"]*)"', f.read()).group(1)
    if not a.version:
        ap.error("--version or --version-header is required")
    os.makedirs(a.out, exist_ok=True)

    commands = help_text.commands(a.lockscope)
    pages = ["lockscope-" + c for c, _ in commands] + (["lockscope-gui"] if a.gui else [])
    main_help = help_text.Help(help_text.run_help([a.lockscope, "--help"]))
    listing = [".SH COMMANDS"]
    for c, summary in commands:
        listing += [".TP", "\\fBlockscope %s\\fR" % esc(c), "%s; see \\fBlockscope\\-%s\\fR(1)." % (esc(summary), esc(c))]
    main_help.description = main_help.description.split("\ncommands:\n", 1)[0].split("commands:\n", 1)[0]
    main_help.options = [["-h, --help", "show this help"], ["--version", "print the version and exit"]]
    # What follows the command list: the pointer to --help, exit status, examples.
    main_help.rest = help_text.run_help([a.lockscope, "--help"]).split("\ncommands:\n", 1)[1].split("\n\n", 1)[1]
    write(a.out, "lockscope", page("lockscope", help_text.tagline(a.lockscope), a.version, main_help, pages,
                                   listing))
    for c, summary in commands:
        h = help_text.Help(help_text.run_help([a.lockscope, c, "--help"]))
        write(a.out, "lockscope-" + c, page("lockscope-" + c, summary, a.version, h,
                                            ["lockscope"] + [p for p in pages if p != "lockscope-" + c]))
    if a.gui:
        h = help_text.Help(help_text.run_help([a.gui, "--help"]))
        os.makedirs(a.gui_out or a.out, exist_ok=True)
        write(a.gui_out or a.out, "lockscope-gui", page("lockscope-gui", "dashboard for lockscope sessions", a.version, h,
                                           ["lockscope", "lockscope-record", "lockscope-report"]))


if __name__ == "__main__":
    main()
