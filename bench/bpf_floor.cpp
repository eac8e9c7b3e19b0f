// Attaches reference programs of floor.bpf.c for N seconds; bench/bpf_cost.py
// reads their BPF run-time statistics next to lockscope's.
//   bpf_floor SECONDS empty   the empty programs on all four hooks
//   bpf_floor SECONDS timed   on the contention hooks, programs that only ask
//                             who runs and read the clock (and the empty ones)
//   bpf_floor SECONDS hash    on the contention hooks, clock + hash lookup by
//                             thread id (and the empty ones)
//   bpf_floor SECONDS locks   the same begin, and an end that also adds the
//                             wait to a hash map keyed by the lock (and the
//                             empty ones)
//   bpf_floor SECONDS hist    the same begin, and an end that adds count, wait,
//                             maximum and a log2 histogram bucket to the
//                             lock's per-CPU entry, as large as a lockscope
//                             row (and the empty ones)
//   bpf_floor SECONDS count   on the contention hooks, who runs, and at the
//                             end a count in a hash map keyed by the lock; no
//                             clock (and the empty ones)
//   bpf_floor SECONDS MODE syscalls  the same, and empty programs on the
//                             syscall tracepoints too (the hooks that recording
//                             a process's user locks adds)
//   bpf_floor SECONDS MODE only   the same, but the mode's programs alone on
//                             the contention hooks (no empty ones beside them):
//                             a floor whose throughput is compared with
//                             lockscope's pays one program per event, as it does
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "floor_bpf.skel.h"

int main(int argc, char** argv)
{
    const unsigned seconds = argc > 1 ? unsigned(std::atoi(argv[1])) : 10;
    const char* mode = argc > 2 ? argv[2] : "empty";
    const auto is = [mode](const char* m) { return std::strcmp(mode, m) == 0; };
    const bool timed = is("timed"), hash = is("hash"), locks = is("locks"), hist = is("hist"), count = is("count");
    const bool only = argc > 3 && std::strcmp(argv[3], "only") == 0;
    const bool syscalls = argc > 3 && std::strcmp(argv[3], "syscalls") == 0;
    if (!timed && !hash && !locks && !hist && !count && !is("empty")) {
        std::fprintf(stderr, "usage: bpf_floor [SECONDS] [empty|timed|hash|locks|hist|count] [only|syscalls]\n");
        return 2;
    }
    floor_bpf* skel = floor_bpf__open();
    if (!skel) {
        std::fprintf(stderr, "bpf_floor: cannot open\n");
        return 1;
    }
    bpf_program__set_autoload(skel->progs.timed_contention_begin, timed);
    bpf_program__set_autoload(skel->progs.timed_contention_end, timed);
    bpf_program__set_autoload(skel->progs.hash_contention_begin, hash || locks || hist);
    bpf_program__set_autoload(skel->progs.hash_contention_end, hash);
    bpf_program__set_autoload(skel->progs.locks_contention_end, locks);
    bpf_program__set_autoload(skel->progs.hist_contention_end, hist);
    bpf_program__set_autoload(skel->progs.count_contention_begin, count);
    bpf_program__set_autoload(skel->progs.count_contention_end, count);
    const bool empty_contention = !(only && !is("empty"));
    bpf_program__set_autoload(skel->progs.floor_contention_begin, empty_contention);
    bpf_program__set_autoload(skel->progs.floor_contention_end, empty_contention);
    bpf_program__set_autoload(skel->progs.floor_sys_enter, syscalls);
    bpf_program__set_autoload(skel->progs.floor_sys_exit, syscalls);
    if (floor_bpf__load(skel) != 0 || floor_bpf__attach(skel) != 0) {
        std::fprintf(stderr, "bpf_floor: cannot load or attach (needs root)\n");
        floor_bpf__destroy(skel);
        return 1;
    }
    std::fprintf(stderr, "bpf_floor: attached\n");
    sleep(seconds);
    floor_bpf__destroy(skel);
    return 0;
}
