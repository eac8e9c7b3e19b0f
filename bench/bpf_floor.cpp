// Attaches the empty programs of floor.bpf.c for N seconds (bench/bpf_cost.py
// reads their BPF run-time statistics to get the per-event floor).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "floor_bpf.skel.h"

int main(int argc, char** argv)
{
    const unsigned seconds = argc > 1 ? unsigned(std::atoi(argv[1])) : 10;
    floor_bpf* skel = floor_bpf__open_and_load();
    if (!skel || floor_bpf__attach(skel) != 0) {
        std::fprintf(stderr, "bpf_floor: cannot load or attach (needs root)\n");
        return 1;
    }
    std::fprintf(stderr, "bpf_floor: attached\n");
    sleep(seconds);
    floor_bpf__destroy(skel);
    return 0;
}
