// record --cgroup PATH: which cgroup v2 a path names, for the kernel-side
// filter (bpf_get_current_ancestor_cgroup_id at the cgroup's level).
#pragma once

#include <cstdint>
#include <string>

namespace lockscope::probe {

struct CgroupTarget {
    std::string path;  // as resolved: the directory under the cgroup2 mount
    uint64_t id = 0;   // the cgroup's id (its directory's inode number)
    uint32_t level = 0;  // 0 for the root, 1 for its children, ...
};

// Where cgroup v2 is mounted ("/sys/fs/cgroup", or "/sys/fs/cgroup/unified" on
// a hybrid system); "" when it is not.
std::string cgroup2_mount();

// `path` is a directory of the cgroup v2 file system, absolute or relative
// to its mount ("system.slice/foo.service"). Throws lockscope::Error with a
// remedy when it is not.
CgroupTarget resolve_cgroup(const std::string& path);

}  // namespace lockscope::probe
