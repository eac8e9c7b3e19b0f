// Attaches reference programs of floor.bpf.c for N seconds; bench/bpf_cost.py
// reads their BPF run-time statistics next to lockscope's.
//   bpf_floor SECONDS empty   the empty programs on all four hooks
//   bpf_floor SECONDS timed   on the contention hooks, programs that only ask
//                             who runs and read the clock (and the empty ones)
//   bpf_floor SECONDS hash    on the contention hooks, clock + hash lookup by
//                             thread id (and the empty ones)
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "floor_bpf.skel.h"

int main(int argc, char** argv)
{
    const unsigned seconds = argc > 1 ? unsigned(std::atoi(argv[1])) : 10;
    const bool timed = argc > 2 && std::strcmp(argv[2], "timed") == 0;
    const bool hash = argc > 2 && std::strcmp(argv[2], "hash") == 0;
    if (argc > 2 && !timed && !hash && std::strcmp(argv[2], "empty") != 0) {
        std::fprintf(stderr, "usage: bpf_floor [SECONDS] [empty|timed|hash]\n");
        return 2;
    }
    floor_bpf* skel = floor_bpf__open();
    if (!skel) {
        std::fprintf(stderr, "bpf_floor: cannot open\n");
        return 1;
    }
    bpf_program__set_autoload(skel->progs.timed_contention_begin, timed);
    bpf_program__set_autoload(skel->progs.timed_contention_end, timed);
    bpf_program__set_autoload(skel->progs.hash_contention_begin, hash);
    bpf_program__set_autoload(skel->progs.hash_contention_end, hash);
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
