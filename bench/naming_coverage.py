#!/usr/bin/env python3
"""How much of the recorded wait, and of the distinct locks, lockscope names
from kernel data (slab object and member, global symbol, per-CPU structure,
the waiting task's own members) rather than from the caller.

It records system-wide (`lockscope record`, as root) while a broad mix of
kernel activity runs: lockscope's own pipe, unlink1, mmap1 and pagefault
workloads, and processes doing directory operations and renames in shared
directories, forks, signals to a thread group, flock() on a shared file, and
UNIX and TCP loopback sockets. Then it reads `report --format json` and
prints the shares by name source, with the locks that were not named from
data and why (their detail). Locks in the kernel image's own data, which a
kernel without data symbols, System.map or BTF variables gives no way to
name (source `kernel-data`), are counted apart, as the report does.

usage: python3 bench/naming_coverage.py [--lockscope build/lockscope] [--duration 10] [--json FILE] [--keep FILE]
"""
import argparse
import fcntl
import json
import multiprocessing as mp
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time


def dir_ops(root, stop, n):
    """mkdir/create/unlink/rmdir in one shared directory: its i_rwsem."""
    i = 0
    while not stop.is_set():
        p = os.path.join(root, "shared", f"d{n}-{i % 64}")
        try:
            os.mkdir(p)
            with open(os.path.join(p, "f"), "w"):
                pass
            os.unlink(os.path.join(p, "f"))
            os.rmdir(p)
        except OSError:
            pass
        i += 1


def renames(root, stop, n):
    """rename between two shared directories: both i_rwsems, s_vfs_rename_mutex."""
    a = os.path.join(root, "ren_a", f"r{n}")
    b = os.path.join(root, "ren_b", f"r{n}")
    open(a, "w").close()
    while not stop.is_set():
        try:
            os.rename(a, b)
            os.rename(b, a)
        except OSError:
            pass


def forks(root, stop, n):
    """fork and exit: mm, sighand, files, pid allocation."""
    while not stop.is_set():
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)


def flocks(root, stop, n):
    """flock() on one shared file: the inode's flc_lock and the global file_rwsem."""
    path = os.path.join(root, "lockfile")
    with open(path, "a") as f:
        while not stop.is_set():
            fcntl.flock(f, fcntl.LOCK_EX)
            fcntl.flock(f, fcntl.LOCK_UN)


def unix_sockets(root, stop, n):
    """a socketpair ping-pong between two processes."""
    a, b = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        a.close()
        try:
            while True:
                data = b.recv(64)
                if not data:
                    break
                b.sendall(data)
        except OSError:
            pass
        os._exit(0)
    b.close()
    while not stop.is_set():
        a.sendall(b"x" * 64)
        a.recv(64)
    a.close()
    os.waitpid(pid, 0)


def tcp_loopback(root, stop, n):
    """connect/accept/close on 127.0.0.1: the listener's socket locks."""
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    port = srv.getsockname()[1]

    def accept():
        while not stop.is_set():
            try:
                c, _ = srv.accept()
                c.close()
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    deadline = time.time() + 3600
    while not stop.is_set() and time.time() < deadline:
        c = socket.create_connection(("127.0.0.1", port))
        c.close()
    srv.close()


def signal_target(stop):
    """a process of several threads that only receives signals: its sighand's siglock."""
    signal.signal(signal.SIGUSR1, lambda *a: None)
    for _ in range(3):
        threading.Thread(target=stop.wait, daemon=True).start()
    stop.wait()


def signals(target_pid, stop):
    while not stop.is_set():
        try:
            os.kill(target_pid, signal.SIGUSR1)
        except ProcessLookupError:
            return


ACTIVITIES = [("directory operations", dir_ops, 2), ("renames", renames, 2), ("forks", forks, 2),
              ("flock", flocks, 2), ("UNIX sockets", unix_sockets, 1), ("TCP loopback", tcp_loopback, 1)]
WORKLOADS = [["pipe", "-t", "2"], ["unlink1", "-t", "2"], ["mmap1", "-t", "2"], ["pagefault", "-t", "2"]]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lockscope", default=os.path.join(os.path.dirname(__file__), "..", "build", "lockscope"))
    ap.add_argument("--duration", type=float, default=10)
    ap.add_argument("--json", help="also write the shares and the unnamed locks here")
    ap.add_argument("--keep", help="copy the recorded session here (to read every name's evidence with report)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("naming_coverage: needs root (lockscope record)")

    with tempfile.TemporaryDirectory(prefix="lockscope-naming-") as root:
        for d in ("shared", "ren_a", "ren_b"):
            os.mkdir(os.path.join(root, d))
        session = os.path.join(root, "mix.lockscope")
        rec = subprocess.Popen([args.lockscope, "record", "-d", str(args.duration + 2), "-o", session],
                               stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)  # attached before the mix starts
        stop = mp.Event()
        procs = []
        for _, fn, count in ACTIVITIES:
            for n in range(count):
                p = mp.Process(target=fn, args=(root, stop, n))
                p.start()
                procs.append(p)
        target = mp.Process(target=signal_target, args=(stop,))
        target.start()
        procs.append(target)
        for _ in range(2):
            p = mp.Process(target=signals, args=(target.pid, stop))
            p.start()
            procs.append(p)
        workloads = [subprocess.Popen([args.lockscope, "workload", *w, "-d", str(args.duration),
                                       "--dir", root], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                     if w[0] == "unlink1" else
                     subprocess.Popen([args.lockscope, "workload", *w, "-d", str(args.duration)],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                     for w in WORKLOADS]
        for w in workloads:
            w.wait()
        stop.set()
        for p in procs:
            p.join(10)
            if p.is_alive():
                p.kill()
        _, err = rec.communicate()
        if rec.returncode != 0:
            sys.exit("naming_coverage: lockscope record failed: " + err.strip())
        if args.keep:
            shutil.copyfile(session, args.keep)
        rep = subprocess.run([args.lockscope, "report", session, "--format", "json", "--top", "0"],
                             capture_output=True, text=True, check=True)
        inst = subprocess.run([args.lockscope, "report", session, "--format", "json", "--top", "0",
                               "--by", "instance"], capture_output=True, text=True, check=True)
    report = json.loads(rep.stdout)
    instances = json.loads(inst.stdout)
    totals = report["totals"]
    sources = totals.get("name_sources", {})
    named = totals.get("named_from_data", {})
    wait_all = sum(s["wait_ns"] for s in sources.values()) or 1
    locks_all = sum(s["locks"] for s in sources.values()) or 1

    print(f"lock identity over a mix of kernel activity, {args.duration:.0f} s, "
          f"{totals['contentions']:,} contentions, {locks_all} lock objects")
    print(f"{'source':<12} {'wait':>8} {'locks':>6}")
    for name, s in sorted(sources.items(), key=lambda kv: -kv[1]["wait_ns"]):
        print(f"{name:<12} {100 * s['wait_ns'] / wait_all:7.2f}% {s['locks']:6}")
    print(f"named from data (kernel-data not counted): {100 * named.get('wait_share', 0):.1f}% of the wait, "
          f"{100 * named.get('lock_share', 0):.1f}% of the lock objects")
    unnamed = [l for l in instances["locks"] if l["name_source"] not in ("slab", "global", "percpu", "task")]
    print("\nnot named from data (by wait):")
    for l in unnamed[:15]:
        print(f"  {l['name']:<44} {l['name_source']:<11} {l['wait_ns'] / 1e3:10.1f} µs  {l.get('detail', '')[:80]}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"duration_s": args.duration, "contentions": totals["contentions"], "sources": sources,
                       "named_from_data": named,
                       "unnamed": [{k: l.get(k) for k in ("name", "kind", "name_source", "wait_ns", "detail")}
                                   for l in unnamed]}, f, indent=2)


if __name__ == "__main__":
    main()
