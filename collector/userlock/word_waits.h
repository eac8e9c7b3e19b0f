// The waits per futex word that bpf/userlock.bpf.c keeps, as the kernel
// recorder keeps its locks: an index of (process, futex word) -> row, and a
// per-CPU array of rows that each CPU adds to alone. Read here into one
// total per word.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "userlock_abi.h"

struct userlock_bpf;

namespace lockscope::userlock {

// Adds one CPU's row into a word's total: counts and times add up, the
// longest wait is the longest of any CPU, the ops seen accumulate.
void add_cpu_row(ls_ulock_stats& total, const ls_ulock_stats& cpu);

// Every futex word with its waits, all CPUs added up. Throws lockscope::Error.
std::vector<std::pair<ls_ulock_key, ls_ulock_stats>> read_word_waits(userlock_bpf* skel);

}  // namespace lockscope::userlock
