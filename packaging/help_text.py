"""Reads lockscope's and lockscope-gui's --help, so that the man pages and
the shell completion are made from the text the programs print and cannot
drift from it. Used by gen_man.py and gen_completion.py at build time."""
import os
import re
import subprocess

# An option's line in Boost.Program_options' and Qt's help: "  -o [ --output ] arg   text",
# "  -i [ --interval ] arg (=1) text" or "  -h, --help             text"; the text may
# continue on the next lines. A long term is followed by a single space.
SPELLING = r"--?[A-Za-z0-9][\w-]*"
TERM = r"%s(?: \[ %s \])?(?:, %s)*(?: arg)?(?: \(=[^)]*\))?(?: <[^>]+>)?" % (SPELLING, SPELLING, SPELLING)
OPTION_LINE = re.compile(r"^  (%s)(?:\s+(\S.*))?$" % TERM)
CAPTION = re.compile(r"^([A-Z][A-Za-z ]*|[a-z][a-z ]*):$")


def run_help(argv):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", LC_ALL="C.UTF-8")
    out = subprocess.run(argv, env=env, check=True, capture_output=True, text=True).stdout
    prog = os.path.basename(argv[0])
    # Qt prints the path it was started with; a page names the program.
    return out.replace(argv[0] + " ", prog + " ")


def commands(lockscope):
    """[(name, summary)] from 'lockscope --help'."""
    text = run_help([lockscope, "--help"])
    block = text.split("\ncommands:\n", 1)[1].split("\n\n", 1)[0]
    return [tuple(line.strip().split(None, 1)) for line in block.splitlines() if line.strip()]


def tagline(lockscope):
    """'kernel lock contention profiler', from the first line of 'lockscope --help'."""
    return run_help([lockscope, "--help"]).splitlines()[0].split(" - ", 1)[1].strip()


class Help:
    """One --help text cut into usage, description, options and what follows."""

    def __init__(self, text):
        lines = text.rstrip("\n").splitlines()
        i = 0
        while i < len(lines) and not lines[i].lower().startswith("usage:"):
            i += 1
        usage = [lines[i][len("usage:"):].strip()]
        i += 1
        while i < len(lines) and lines[i].startswith(" ") and lines[i].strip():
            usage.append(lines[i].strip())
            i += 1
        self.usage = usage
        start = i
        while i < len(lines) and lines[i].strip().lower() != "options:":
            i += 1
        self.description = "\n".join(lines[start:i]).strip("\n")
        self.options = []  # [(term, text)]
        i += 1
        while i < len(lines) and lines[i].strip():
            m = OPTION_LINE.match(lines[i])
            if m:
                self.options.append([m.group(1).strip(), (m.group(2) or "").rstrip()])
            elif self.options:
                self.options[-1][1] = (self.options[-1][1].rstrip() + " " + lines[i].strip()).strip()
            i += 1
        self.rest = "\n".join(lines[i:]).strip("\n")

    @staticmethod
    def man_term(term):
        """'-o [ --output ] arg (=x)' as a man page shows it: '-o, --output VALUE (default: x)'."""
        t = re.sub(r"^(%s) \[ (%s) \]" % (SPELLING, SPELLING), r"\1, \2", term)
        t = re.sub(r"\barg\b", "VALUE", t)
        return re.sub(r"\(=([^)]*)\)", r"(default: \1)", t)

    def sections(self):
        """What follows the options, as {'exit status': text, 'examples': text, 'notes': text}."""
        out = {"exit status": "", "examples": "", "notes": ""}
        for block in re.split(r"\n\s*\n", self.rest.strip("\n")):
            head = block.split("\n", 1)[0].lower()
            if head.startswith("exit status:"):
                out["exit status"] = block.split(":", 1)[1].strip()
            elif head.startswith("examples:"):
                out["examples"] = block.split("\n", 1)[1] if "\n" in block else ""
            elif block.strip():
                out["notes"] += ("\n\n" if out["notes"] else "") + block
        return out

    @staticmethod
    def spellings(term):
        """'--qemu arg (=qemu-system-x86_64)' -> ['--qemu']: not what a default holds."""
        return re.findall(SPELLING, re.sub(r"\(=[^)]*\)|<[^>]+>", "", term))

    def option_names(self):
        """Every spelling of every option: ['-h', '--help', '-o', '--output', ...]."""
        names = []
        for term, _ in self.options:
            names += self.spellings(term)
        return names

    def options_taking_values(self):
        taking = []
        for term, _ in self.options:
            if re.search(r"\barg\b|<[^>]+>", term):
                taking += self.spellings(term)
        return taking
