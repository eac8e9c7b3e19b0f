#!/usr/bin/env python3
"""Checks docs/building.md's layout tables against the tree: every folder
they name exists, and every top-level folder of the repository and every
folder of collector/ and gui/ is named in them (alone, or in a row that
names several). Hidden folders (.ci) and build folders are left out.

Prints each folder missing from the table and each row naming a folder the
tree lacks, and exits 1 if there is one.

usage: scripts/check_layout.py [REPO]
"""
import os
import re
import subprocess
import sys

DOC = os.path.join("docs", "building.md")
# The folders whose own folders the table must name as well.
EXPANDED = ("collector", "gui")


def table_paths(text):
    """The `paths` in the first column of the tables under '## Layout'."""
    m = re.search(r"^## Layout\s*\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    if not m:
        return None
    paths = set()
    for line in m.group(1).splitlines():
        cells = line.split("|")
        if len(cells) < 3 or set(cells[1].strip()) <= set("-: "):
            continue
        for path in re.findall(r"`([^`]+)`", cells[1]):
            paths.add(path.strip().rstrip("/"))
    paths.discard("directory")
    return paths


def tracked_folders(repo):
    """In a git checkout, the folders of the files git tracks (a build
    folder of any name is not one); None elsewhere."""
    try:
        out = subprocess.run(["git", "-C", repo, "ls-files"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    if not out or subprocess.run(["git", "-C", repo, "rev-parse", "--show-toplevel"], capture_output=True,
                                 text=True).stdout.strip() != os.path.realpath(repo):
        return None
    folders = set()
    for path in out.splitlines():
        parts = path.split("/")
        if len(parts) > 1 and not parts[0].startswith("."):
            folders.add(parts[0] if parts[0] not in EXPANDED or len(parts) < 3 else f"{parts[0]}/{parts[1]}")
    return sorted(folders - set(EXPANDED))


def tree_folders(repo):
    """The folders the table must name: top level, and one level into EXPANDED."""
    tracked = tracked_folders(repo)
    if tracked is not None:
        return tracked
    def dirs(path):
        return sorted(d for d in os.listdir(path)
                      if os.path.isdir(os.path.join(path, d)) and not d.startswith(".") and d != "build"
                      and not d.startswith("build-"))
    out = []
    for top in dirs(repo):
        if not any(os.scandir(os.path.join(repo, top))):
            continue
        if top not in EXPANDED:
            out.append(top)
        else:
            out += [f"{top}/{d}" for d in dirs(os.path.join(repo, top))]
    return out


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    with open(os.path.join(repo, DOC), encoding="utf-8") as f:
        named = table_paths(f.read())
    if named is None:
        print(f"check_layout: {DOC} has no '## Layout' section", file=sys.stderr)
        return 1
    problems = []
    for folder in tree_folders(repo):
        if folder not in named:
            problems.append(f"{DOC}: the layout does not name {folder}/")
    for path in sorted(named):
        if not os.path.exists(os.path.join(repo, path)):
            problems.append(f"{DOC}: the layout names {path}/, which the tree lacks")
    for p in problems:
        print(p)
    if problems:
        print(f"check_layout: {len(problems)} difference(s) between the layout and the tree", file=sys.stderr)
        return 1
    print(f"check_layout: the layout names each of the tree's {len(tree_folders(repo))} folders")
    return 0


if __name__ == "__main__":
    sys.exit(main())
