#include "userlock/word_waits.h"

#include <bpf/libbpf.h>

#include <algorithm>

#include "core/error.h"
#include "bpfmap/map_read.h"
#include "userlock_bpf.skel.h"

namespace lockscope::userlock {

void add_cpu_row(ls_ulock_stats& total, const ls_ulock_stats& cpu)
{
    total.waits += cpu.waits;
    total.wait_ns += cpu.wait_ns;
    total.max_wait_ns = std::max(total.max_wait_ns, cpu.max_wait_ns);
    total.ops |= cpu.ops;
    if (cpu.owner_tid != 0) {
        total.owner_tid = cpu.owner_tid;
    }
    total.oncpu_ns += cpu.oncpu_ns;
    total.asleep_ns += cpu.asleep_ns;
    total.runnable_ns += cpu.runnable_ns;
    total.wakes += cpu.wakes;
    for (int b = 0; b < LS_HIST_BUCKETS; ++b) {
        total.hist[b] += cpu.hist[b];
    }
}

std::vector<std::pair<ls_ulock_key, ls_ulock_stats>> read_word_waits(userlock_bpf* skel)
{
    const int possible = libbpf_num_possible_cpus();
    if (possible <= 0) {
        throw Error("count the possible CPUs", "userlock", -possible);
    }
    const auto cpus = static_cast<uint32_t>(possible);
    // Rows are handed out in order: those below the counter are all there are.
    const uint32_t rows = std::min(skel->bss->next_wait_row, skel->rodata->max_rows);
    // Row r's entry for CPU c is r * cpus + c: the rows, in order, with one value each.
    const auto values = probe::read_percpu_rows<ls_ulock_stats>(skel->maps.wait_rows, rows * cpus, 1);
    std::vector<std::pair<ls_ulock_key, ls_ulock_stats>> out;
    probe::for_each_entry<ls_ulock_key, uint32_t>(skel->maps.wait_index, 1,
                                                  [&](const ls_ulock_key& key, const uint32_t* row) {
                                                      if (*row >= rows) {
                                                          return;
                                                      }
                                                      ls_ulock_stats total{};
                                                      for (uint32_t cpu = 0; cpu < cpus; ++cpu) {
                                                          add_cpu_row(total, values[size_t(*row) * cpus + cpu]);
                                                      }
                                                      out.emplace_back(key, total);
                                                  });
    return out;
}

}  // namespace lockscope::userlock
