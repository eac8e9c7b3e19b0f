#!/usr/bin/env python3
"""How full a running recorder's kernel tables are: the entries in use of the
BPF maps it holds open, by name (bpftool), e.g. `bpf_map_fill.py PID
lock_index stacks task_stats` prints `lock_index=812/16384 stacks=...`.
A name the process does not hold prints `NAME=?`."""
import json
import os
import subprocess
import sys


def held_map_ids(pid):
    ids = set()
    for fd in os.listdir(f"/proc/{pid}/fdinfo"):
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                ids.update(int(line.split()[1]) for line in f if line.startswith("map_id:"))
        except OSError:
            pass  # closed meanwhile
    return ids


def bpftool(*args):
    run = subprocess.run(["bpftool", "-j", *args], capture_output=True, text=True)
    return json.loads(run.stdout) if run.returncode == 0 and run.stdout.strip() else None


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: bpf_map_fill.py PID MAP_NAME...")
    pid, names = sys.argv[1], sys.argv[2:]
    ids = held_map_ids(pid)
    found = {m["name"]: m for m in bpftool("map", "show") or [] if m.get("id") in ids and m.get("name") in names}
    fields = []
    for name in names:
        m = found.get(name)
        entries = bpftool("map", "dump", "id", str(m["id"])) if m else None
        fields.append(f"{name}={len(entries)}/{m['max_entries']}" if entries is not None else f"{name}=?")
    print(" ".join(fields))


if __name__ == "__main__":
    main()
