#!/usr/bin/env python3
"""Checks that includes only go down the floors of the house:

  cli ─┬─> record ─> probe ─> pipeline ─> identity ─> core ─> bpf    gui ─> core, fleet
       ├─> lab ──────────────────────────────────────┤   workload ─> core
       ├─> metrics ──────────────────────────────────┘   reflock (stands alone)
       ├─> benchlib ─> core, reflock
       ├─> fleet ─> core
       └─> everything below      unwind (stands alone, under identity: user stacks)
                                 bpfmap (libbpf's shared pieces, batched map reads and the
                                 kernel's BTF parsed once: identity, probe)

pipeline is the recording pipeline (snapshot -> roll-up -> naming -> session
files); identity names locks (one ladder of name sources); core is what
readers of a session need. Inside core, the floors are the shared value
types at its top, then storage/, analysis/ and render/: a folder of core
includes only its own floor, the ones below it, and host/ (what the machine
says about itself).

bpf/ (the BPF programs and the ABI header) includes only its own headers and
system or libbpf ones; core includes neither libbpf (<bpf/...>, a skeleton)
nor Qt; nothing below cli includes cli, nothing in collector includes gui,
and the GUI includes no part of the collector but core and fleet (the fleet
diff: core's statistics over Prometheus' API, for the Diff page).

Inside a floor, includes go one way too: no loop of files including each
other, where a header and its .cpp count as one file (diff.cpp including
diff_verdicts.h, which includes diff.h, is a loop). A loop is named file by
file; the mend is to move what both sides need into a header that includes
neither.

Prints each include that breaks a rule, with its file and line, and each
loop, and exits 1 if there is one.

usage: scripts/check_layers.py [REPO]
"""
import os
import re
import sys

# What each part of collector/ may include from collector/ (its own included).
ALLOWED = {
    "core": {"core"},
    "reflock": {"reflock"},
    "unwind": {"unwind"},
    "bpfmap": {"bpfmap"},
    "workload": {"core", "workload"},
    "identity": {"bpfmap", "core", "identity", "unwind"},
    "pipeline": {"core", "identity", "pipeline", "unwind"},
    "metrics": {"core", "metrics"},
    "fleet": {"core", "fleet"},
    "benchlib": {"benchlib", "core", "reflock"},
    "lab": {"core", "lab", "workload"},
    # reflock: the on-CPU oracle (probe/oncpu_oracle.h) serves its OwnerOracle.
    "probe": {"bpfmap", "core", "identity", "pipeline", "probe", "reflock", "unwind"},
    "record": {"bpfmap", "core", "identity", "pipeline", "probe", "record", "unwind", "workload"},
    "cli": {"benchlib", "bpfmap", "core", "identity", "pipeline", "probe", "record", "reflock", "unwind", "workload", "lab",
            "metrics", "fleet", "cli"},
}
# core's own floors, lowest first: a folder may include its own and lower
# ones (and host/, beside them all); the files at core's top are the ground.
CORE_FLOORS = ["", "host", "storage", "analysis", "render"]
GUI_DIRS = {"charts", "models", "session", "views", "bench", "tests"}
GUI_MAY_INCLUDE = {"core", "fleet"}
COLLECTOR = set(ALLOWED)
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def check_bpf(repo):
    """bpf/ is the ground floor: a quoted include must be one of its own files."""
    problems = []
    base = os.path.join(repo, "bpf")
    if not os.path.isdir(base):
        return problems
    for name in sorted(os.listdir(base)):
        if not name.endswith((".c", ".h")):
            continue
        path = os.path.join(base, name)
        with open(path, encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if m and m.group(1) == '"' and not os.path.isfile(os.path.join(base, m.group(2))):
                    problems.append(f"{os.path.relpath(path, repo)}:{n}: bpf includes {m.group(2)} "
                                    "(the BPF side includes only its own headers and the kernel's)")
    return problems


def core_floor(parts):
    """The floor of a path inside core ("analysis/diff.cpp" -> "analysis")."""
    return parts[0] if len(parts) > 1 and parts[0] in CORE_FLOORS else ""


def core_floor_problem(rel, target):
    """Within core, an include from a lower folder up into a higher one."""
    here = core_floor(rel.split(os.sep)[1:])
    there = core_floor(target.split("/")[1:])
    if there in ("", "host") or CORE_FLOORS.index(there) <= CORE_FLOORS.index(here):
        return None
    return f"core/{here or '.'} includes {target} (up a floor of core: {' < '.join(f or 'core' for f in CORE_FLOORS)})"


def check(repo):
    problems = check_bpf(repo)
    for top, floor_of in (("collector", lambda rel: rel.split(os.sep)[0]), ("gui", lambda rel: "gui")):
        base = os.path.join(repo, top)
        for dirpath, _, files in os.walk(base):
            for name in files:
                if not name.endswith((".cpp", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                floor = floor_of(os.path.relpath(path, base))
                if top == "collector" and floor not in ALLOWED:
                    continue
                with open(path, encoding="utf-8", errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = m.group(2)
                        first = target.split("/")[0]
                        where = f"{os.path.relpath(path, repo)}:{n}"
                        if floor == "core" and (target.startswith("bpf/") or target.startswith("Q")
                                                or target.endswith(".skel.h")):
                            problems.append(f"{where}: core includes <{target}> (core stays free of libbpf and Qt)")
                        if m.group(1) != '"' or "/" not in target:
                            continue
                        if floor == "core" and first == "core":
                            problem = core_floor_problem(os.path.relpath(path, base), target)
                            if problem:
                                problems.append(f"{where}: {problem}")
                        if floor == "gui":
                            if first in COLLECTOR and first not in GUI_MAY_INCLUDE:
                                problems.append(f"{where}: the GUI includes {target} (it reads sessions through core, "
                                                "and fleets through fleet, only)")
                        elif first in COLLECTOR and first not in ALLOWED[floor]:
                            problems.append(f"{where}: {floor} includes {target} ({floor} may include "
                                            f"{', '.join(sorted(ALLOWED[floor]))})")
                        elif first in GUI_DIRS and top == "collector":
                            problems.append(f"{where}: {floor} includes the GUI's {target}")
    return problems


def unit_of(rel):
    """A header and its .cpp (or .c) are one unit: "collector/core/model"."""
    return os.path.splitext(rel)[0]


def room_of(rel):
    """The floor a file stands on, as the loop check sees it: a folder of
    collector/ (core with its own floors), the GUI, the BPF side."""
    parts = rel.split(os.sep)
    return parts[0] if parts[0] != "collector" or len(parts) < 3 else "collector/" + parts[1]


def resolve(repo, rel, target):
    """The file a quoted include names: beside the includer, else under one of
    the include folders (collector/, gui/, bpf/); None for a file of another
    tree (a generated skeleton, a system header)."""
    for base in (os.path.dirname(rel), "collector", "gui", "bpf"):
        candidate = os.path.normpath(os.path.join(base, target))
        if os.path.isfile(os.path.join(repo, candidate)):
            return candidate
    return None


def include_edges(repo):
    """{unit: {unit it includes on the same floor: "file:line includes target"}}."""
    edges = {}
    for top in ("bpf", "collector", "gui"):
        for dirpath, _, files in os.walk(os.path.join(repo, top)):
            for name in sorted(files):
                if not name.endswith((".c", ".cpp", ".h")):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, name), repo)
                with open(os.path.join(repo, rel), encoding="utf-8", errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m or m.group(1) != '"':
                            continue
                        target = resolve(repo, rel, m.group(2))
                        if not target or room_of(target) != room_of(rel) or unit_of(target) == unit_of(rel):
                            continue
                        edges.setdefault(unit_of(rel), {}).setdefault(unit_of(target), f"{rel}:{n} includes {target}")
    return edges


def strongly_connected(edges):
    """Tarjan's components of the include graph with more than one unit."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(found)


def one_loop(edges, component):
    """The shortest loop through the component's first unit: its units, and
    the include that leads from each to the next."""
    start, members = component[0], set(component)
    came_from, queue = {start: None}, [start]
    for v in queue:
        for w in sorted(edges.get(v, {})):
            if w == start:
                units = [v]
                while came_from[units[-1]] is not None:
                    units.append(came_from[units[-1]])
                units.reverse()
                steps = [edges[a][b] for a, b in zip(units, units[1:] + [start])]
                return units + [start], steps
            if w in members and w not in came_from:
                came_from[w] = v
                queue.append(w)
    return [], []


def check_loops(repo):
    """Each loop of includes inside one floor, named unit by unit with the
    includes that close it."""
    edges = include_edges(repo)
    problems = []
    for component in strongly_connected(edges):
        units, steps = one_loop(edges, component)
        room = room_of(component[0])
        names = [os.path.relpath(u, room) for u in units]
        others = [os.path.relpath(u, room) for u in component if u not in units]
        also = f"; {', '.join(others)} also in loops with them" if others else ""
        problems.append(f"include loop in {room}/: {' -> '.join(names)} ({'; '.join(steps)}{also}); a header and "
                        "its .cpp count as one file: move what both sides need into a header that includes neither")
    return problems


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    problems = check(repo) + check_loops(repo)
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} include(s) or loop(s) against the floors", file=sys.stderr)
        return 1
    print("check_layers: every include goes down the floors, and no floor has a loop")
    return 0


if __name__ == "__main__":
    sys.exit(main())
