#include "workload/workload.h"

#include "core/error.h"

#include <cmath>
#include <string>

namespace lockscope::workload {

const std::vector<WorkloadInfo>& catalogue()
{
    static const std::vector<WorkloadInfo> workloads = {
        {"pipe", "pipe_inode_info.mutex", "all threads share one pipe; each op writes one byte, then reads one byte"},
        {"pipes", "pipe_inode_info.mutex of many pipes",
         "all threads use the same pipe, moving to the next of --locks pipes every 8 ops: "
         "many distinct contended locks"},
        {"unlink1", "inode.i_rwsem", "each thread creates and unlinks its own file in one shared directory"},
        {"unlink2", "inode.i_rwsem (control)", "as unlink1, but each thread has its own directory: the control"},
        {"mmap1", "mm_struct.mmap_lock (write)", "each thread maps 128 MiB anonymous memory and unmaps it, untouched"},
        {"signals", "sighand_struct.siglock", "each thread sends a signal to the next thread of its process"},
        {"pagefault", "mm_struct.mmap_lock (read vs write)",
         "even threads fault pages in (MADV_POPULATE_WRITE) and drop them; "
         "odd threads mmap and munmap"},
    };
    return workloads;
}

const WorkloadInfo* find(const std::string& name)
{
    for (const auto& w : catalogue())
        if (w.name == name)
            return &w;
    return nullptr;
}

void validate(const Options& options)
{
    if (!find(options.name)) {
        std::string valid;
        for (const auto& w : catalogue())
            valid += (valid.empty() ? "" : ", ") + w.name;
        throw UsageError("unknown workload '" + options.name + "' (valid: " + valid + ")");
    }
    if (options.threads == 0 || options.threads > kMaxThreads)
        throw UsageError("thread count must be between 1 and " + std::to_string(kMaxThreads) + ", got " +
                         std::to_string(options.threads));
    if (!(options.duration_s > 0) || !std::isfinite(options.duration_s))
        throw UsageError("duration must be a positive number of seconds");
    if (options.locks == 0 || options.locks > kMaxLocks)
        throw UsageError("--locks must be between 1 and " + std::to_string(kMaxLocks) + ", got " +
                         std::to_string(options.locks));
}

}  // namespace lockscope::workload
