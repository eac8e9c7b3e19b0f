// A running process's modules, from its memory maps, for libdwfl.
#pragma once

#include <sys/types.h>

#include <elfutils/libdwfl.h>

namespace lockscope::unwind {

// dwfl_linux_proc_report() of pid, between dwfl_report_begin() and the
// caller's dwfl_report_end(); where pid's own /proc entry has no maps (its
// main thread has exited while the others run on), those of `tid`, a thread
// of it. 0, or an errno (> 0) or libdwfl's error (< 0).
int report_process_maps(Dwfl* dwfl, pid_t pid, pid_t tid);

}  // namespace lockscope::unwind
