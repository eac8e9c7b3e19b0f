// Records `lockscope workload ARGS` with -p while the observer counts the
// same process: the root tests' usual experiment.
#pragma once

#include <string>
#include <vector>

#include "core/analysis/report.h"
#include "core/storage/session_store.h"
#include "observer.h"

namespace lockscope::test {

struct Recorded {
    Observed observed;
    Session session;
    Report report;                 // every row
    uint64_t workload_cpu_ns = 0;  // the workload's CPU time, from the kernel's rusage
};

// `record_args` go to `lockscope record`; its stderr to `record_err`.
Recorded record_workload(const std::vector<std::string>& workload_args,
                         const std::vector<std::string>& record_args = {}, std::string* record_err = nullptr);

}  // namespace lockscope::test
