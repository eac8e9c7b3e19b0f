"""Kernel BPF run-time statistics, kept on for a block of code.

The sysctl kernel.bpf_stats_enabled is one switch for the whole machine: any
other program that writes 0 to it (another benchmark finishing, a test)
stops the counters in the middle of a measurement. A BPF_ENABLE_STATS file
descriptor keeps them counting for as long as it is open, whatever the
sysctl says, so the measurement holds one; the sysctl is set too, for
tools that read it, and put back as it was.
"""
import contextlib
import ctypes
import os

SYS_BPF = {"x86_64": 321, "aarch64": 280}.get(os.uname().machine)
BPF_ENABLE_STATS = 32
BPF_STATS_RUN_TIME = 0
SYSCTL = "/proc/sys/kernel/bpf_stats_enabled"


def _enable_stats_fd():
    if SYS_BPF is None:
        return -1
    libc = ctypes.CDLL(None, use_errno=True)
    attr = (ctypes.c_uint32 * 2)(BPF_STATS_RUN_TIME, 0)
    return libc.syscall(SYS_BPF, BPF_ENABLE_STATS, ctypes.byref(attr), ctypes.sizeof(attr))


@contextlib.contextmanager
def enabled():
    with open(SYSCTL) as f:
        before = f.read().strip()
    fd = _enable_stats_fd()
    with open(SYSCTL, "w") as f:
        f.write("1")
    try:
        yield
    finally:
        with open(SYSCTL, "w") as f:
            f.write(before)
        if fd >= 0:
            os.close(fd)


def prog_ids_of(pid):
    """Ids of the BPF programs process `pid` holds (fdinfo), so that another
    recorder or benchmark running on the machine is not counted as ours."""
    ids = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fdinfo")
    except OSError:
        return ids
    for fd in fds:
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                for line in f:
                    if line.startswith("prog_id:"):
                        ids.add(int(line.split()[1]))
        except OSError:
            pass
    return ids
