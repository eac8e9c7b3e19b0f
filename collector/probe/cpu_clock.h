// A per-CPU software CPU-clock perf event for each online CPU, with a BPF
// program attached: how the running lock holders' stacks are taken on
// their own CPU (bpf/lockscope.bpf.c, on_cpu_clock).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

struct bpf_program;
struct bpf_link;

namespace lockscope::probe {

// Whether this kernel and these privileges allow it: BPF programs of type
// perf_event and a system-wide CPU-clock event. Otherwise `why` says what
// is missing. Opens and closes one event; loads a trivial program.
bool cpu_clock_available(std::string* why = nullptr);

// Opens one CPU-clock event per online CPU ticking `hz` times a second of
// the CPU's time and attaches `prog` to each. Never throws: an empty result
// means none could be attached and `why` says why; the caller owns the links.
std::vector<bpf_link*> attach_cpu_clock(bpf_program* prog, uint32_t hz, std::string* why);

}  // namespace lockscope::probe
