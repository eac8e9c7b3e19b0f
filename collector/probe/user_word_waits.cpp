#include "probe/user_word_waits.h"

#include <bpf/libbpf.h>

#include <algorithm>

#include "core/error.h"
#include "episode.h"
#include "bpfmap/map_read.h"
#include "userlock_bpf.skel.h"

namespace lockscope::userlock {

void add_cpu_row(ls_ulock_stats& total, const ls_ulock_stats& cpu)
{
    // Every count and time of a CPU's entry adds up; the longest wait, the
    // operations seen and the last owner do not.
    static constexpr __u64 ls_ulock_stats::*kSums[] = {
        &ls_ulock_stats::waits,       &ls_ulock_stats::wait_ns,     &ls_ulock_stats::oncpu_ns,
        &ls_ulock_stats::asleep_ns,   &ls_ulock_stats::runnable_ns, &ls_ulock_stats::wakes,
        &ls_ulock_stats::oncpu_waits, &ls_ulock_stats::oncpu_timed, &ls_ulock_stats::oncpu_timed_ns,
        &ls_ulock_stats::late,        &ls_ulock_stats::left_timed,  &ls_ulock_stats::left_first_oncpu_ns,
        &ls_ulock_stats::holder_waits};
    for (auto sum : kSums) {
        total.*sum += cpu.*sum;
    }
    for (int b = 0; b < LS_HIST_BUCKETS; ++b) {
        total.hist[b] += cpu.hist[b];
    }
    for (int p = 0; p < LS_HOLDER_PARTS; ++p) {
        total.holder_ns[p] += cpu.holder_ns[p];
    }
    total.max_wait_ns = std::max(total.max_wait_ns, cpu.max_wait_ns);
    total.ops |= cpu.ops;
    if (cpu.owner_tid != 0) {
        total.owner_tid = cpu.owner_tid;
    }
}

namespace {

// The mean of `sum` over `n`, else of `all_sum` over `all_n` where n is
// below kMinTimed; 0 with neither.
long double mean_of(uint64_t sum, uint64_t n, uint64_t all_sum, uint64_t all_n)
{
    if (n >= kMinTimed) {
        return static_cast<long double>(sum) / n;
    }
    return all_n ? static_cast<long double>(all_sum) / all_n : 0.0L;
}

}  // namespace

UntimedWaits estimate_untimed(std::vector<std::pair<ls_ulock_key, ls_ulock_stats>>& words, UntimedState& given)
{
    UntimedWaits out;
    uint64_t oncpu_timed = 0, oncpu_timed_ns = 0, left_timed = 0, left_first_ns = 0;
    for (const auto& [key, w] : words) {
        oncpu_timed += w.oncpu_timed;
        oncpu_timed_ns += w.oncpu_timed_ns;
        left_timed += w.left_timed;
        left_first_ns += w.left_first_oncpu_ns;
    }
    for (auto& [key, w] : words) {
        UntimedGiven& g = given[{key.tgid, key.uaddr}];
        const uint64_t oncpu_untimed = w.oncpu_waits - std::min(w.oncpu_timed, w.oncpu_waits);
        if (oncpu_untimed > g.oncpu) {
            const uint64_t fresh = oncpu_untimed - g.oncpu;
            const long double mean = mean_of(w.oncpu_timed_ns, w.oncpu_timed, oncpu_timed_ns, oncpu_timed);
            g.ns += static_cast<uint64_t>(mean * fresh + 0.5L);
            g.hist[ls_log2_bucket(static_cast<uint64_t>(mean + 0.5L))] += fresh;
            g.oncpu = oncpu_untimed;
        }
        if (w.late > g.late) {
            const long double mean = mean_of(w.left_first_oncpu_ns, w.left_timed, left_first_ns, left_timed);
            g.ns += static_cast<uint64_t>(mean * (w.late - g.late) + 0.5L);
            g.late = w.late;
        }
        w.wait_ns += g.ns;
        w.oncpu_ns += g.ns;
        for (std::size_t b = 0; b < g.hist.size(); ++b) {
            w.hist[b] += g.hist[b];
        }
        out.waits += g.oncpu + g.late;
        out.estimated_ns += g.ns;
    }
    return out;
}

std::vector<std::pair<ls_ulock_key, ls_ulock_stats>> read_word_waits(userlock_bpf* skel, UntimedState& given,
                                                                     UntimedWaits& untimed)
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
    untimed = estimate_untimed(out, given);
    return out;
}

}  // namespace lockscope::userlock
