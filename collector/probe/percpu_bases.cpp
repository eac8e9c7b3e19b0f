#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "lockscope_abi.h"
#include "lockscope_bpf.skel.h"
#include "probe/probe.h"

namespace lockscope::probe {

std::vector<uint64_t> Probe::percpu_runqueues(std::string* why) const
{
    std::vector<uint64_t> out;
    const int possible = std::min(libbpf_num_possible_cpus(), LS_MAX_CPUS);
    const int prog = bpf_program__fd(skel_->progs.read_percpu_bases);
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
        out.assign(skel_->bss->runqueue_of_cpu, skel_->bss->runqueue_of_cpu + std::max(possible, 0));
    }
    return out;
}

}  // namespace lockscope::probe
