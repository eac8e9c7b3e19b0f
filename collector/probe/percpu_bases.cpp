#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "lockscope_abi.h"
#include "percpu_bases_bpf.skel.h"
#include "probe/probe.h"

namespace lockscope::probe {

std::vector<uint64_t> percpu_runqueues(std::string* why)
{
    std::vector<uint64_t> out;
    percpu_bases_bpf* skel = percpu_bases_bpf__open_and_load();
    if (!skel) {
        if (why)
            *why = std::string("cannot load the per-CPU program: ") + std::strerror(errno);
        return out;
    }
    const int possible = std::min(libbpf_num_possible_cpus(), LS_MAX_CPUS);
    const int prog = bpf_program__fd(skel->progs.read_percpu_bases);
    int ran = 0;
    for (int cpu = 0; cpu < possible; cpu++) {
        LIBBPF_OPTS(bpf_test_run_opts, opts, .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = uint32_t(cpu));
        if (bpf_prog_test_run_opts(prog, &opts) == 0)
            ran++;  // an offline CPU refuses: its area stays unknown
    }
    if (ran == 0) {
        if (why)
            *why = std::string("cannot run the per-CPU program: ") + std::strerror(errno);
    } else {
        out.assign(skel->bss->runqueue_of_cpu, skel->bss->runqueue_of_cpu + std::max(possible, 0));
    }
    percpu_bases_bpf__destroy(skel);
    return out;
}

}  // namespace lockscope::probe
