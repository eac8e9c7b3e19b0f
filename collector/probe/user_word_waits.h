// The waits per futex word that bpf/userlock.bpf.c keeps, as the kernel
// recorder keeps its locks: an index of (process, futex word) -> row, and a
// per-CPU array of rows that each CPU adds to alone. Read here into one
// total per word.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "pipeline/user_recording.h"
#include "userlock_abi.h"

struct userlock_bpf;

namespace lockscope::userlock {

// Adds one CPU's row into a word's total: counts and times add up, the
// longest wait is the longest of any CPU, the ops seen accumulate.
void add_cpu_row(ls_ulock_stats& total, const ls_ulock_stats& cpu);

// The waits of a recording not timed from their entry: about one wait in
// LS_ULOCK_TIME_ONE_IN (bpf/userlock_abi.h) is. A wait not timed that never
// left its CPU is given its row's mean of such waits; one that left it was
// timed from its first switch-out and is given the mean time timed waits
// spent on CPU before theirs.
struct UntimedWaits {
    uint64_t waits = 0;         // waits not timed from their entry
    uint64_t estimated_ns = 0;  // the time given to them
};

// What a word's waits not timed from their entry were given by the reads
// before: each read gives only the waits new since the last one, at the
// means of that read, so that a word's wait, on-CPU time and histogram
// never go down from one read to the next (the exporter's counters, the
// intervals) as the means move.
struct UntimedGiven {
    uint64_t oncpu = 0;  // waits that never left their CPU, given so far
    uint64_t late = 0;   // waits timed from their first switch-out, given so far
    uint64_t ns = 0;     // the time given to them
    std::array<uint64_t, LS_HIST_BUCKETS> hist{};
};
using UntimedState = std::map<std::pair<uint32_t, uint64_t>, UntimedGiven>;  // by (tgid, futex word)

// Gives each word's waits not timed from their entry what they miss: one
// that never left its CPU the mean of the word's timed ones that did not
// either (of every word's, where it has fewer than kMinTimed), added to its
// wait and on-CPU time and to the histogram's bucket of that mean, so that
// the histogram again counts every wait; one timed from its first
// switch-out the mean on-CPU time before the first switch-out of the timed
// waits that left their CPU, added to its wait and on-CPU time. `given`
// carries what earlier reads gave (UntimedGiven). Returns the totals.
inline constexpr uint64_t kMinTimed = 8;
UntimedWaits estimate_untimed(std::vector<std::pair<ls_ulock_key, ls_ulock_stats>>& words, UntimedState& given);

// Every futex word with its waits, all CPUs added up, the waits not timed
// from their entry estimated (estimate_untimed with `given`; its totals
// into `untimed`). Throws lockscope::Error.
std::vector<std::pair<ls_ulock_key, ls_ulock_stats>> read_word_waits(userlock_bpf* skel, UntimedState& given,
                                                                     UntimedWaits& untimed);

}  // namespace lockscope::userlock
