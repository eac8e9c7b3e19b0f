// The waits per futex word that bpf/userlock.bpf.c keeps, as the kernel
// recorder keeps its locks: an index of (process, futex word) -> row, and a
// per-CPU array of rows that each CPU adds to alone. Read here into one
// total per word.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "userlock/recording.h"
#include "userlock_abi.h"

struct userlock_bpf;

namespace lockscope::userlock {

// Adds one CPU's row into a word's total: counts and times add up, the
// longest wait is the longest of any CPU, the ops seen accumulate.
void add_cpu_row(ls_ulock_stats& total, const ls_ulock_stats& cpu);

// Gives each word's waits not timed from their entry what they miss: one
// that never left its CPU the mean of the word's timed ones that did not
// either (of every word's, where it has fewer than kMinTimed), added to its
// wait and on-CPU time and to the histogram's bucket of that mean, so that
// the histogram again counts every wait; one timed from its first
// switch-out the mean on-CPU time before the first switch-out of the timed
// waits that left their CPU, added to its wait and on-CPU time. Returns the
// totals.
inline constexpr uint64_t kMinTimed = 8;
UntimedWaits estimate_untimed(std::vector<std::pair<ls_ulock_key, ls_ulock_stats>>& words);

// Every futex word with its waits, all CPUs added up, the waits not timed
// from their entry estimated (estimate_untimed; its totals into *untimed,
// when given). Throws lockscope::Error.
std::vector<std::pair<ls_ulock_key, ls_ulock_stats>> read_word_waits(userlock_bpf* skel,
                                                                     UntimedWaits* untimed = nullptr);

}  // namespace lockscope::userlock
