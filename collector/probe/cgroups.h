// record --cgroup PATH: which cgroup v2 a path names, for the kernel-side
// filter (bpf_get_current_ancestor_cgroup_id at the cgroup's level).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace lockscope::probe {

struct CgroupTarget {
    std::string path;    // as resolved: the directory under the cgroup2 mount
    uint64_t id = 0;     // the cgroup's id (its directory's inode number)
    uint32_t level = 0;  // 0 for the root, 1 for its children, ...
};

// Where cgroup v2 is mounted ("/sys/fs/cgroup", or "/sys/fs/cgroup/unified" on
// a hybrid system); "" when it is not.
std::string cgroup2_mount();

// `path` is a directory of the cgroup v2 file system, absolute or relative
// to its mount ("system.slice/foo.service"). Throws lockscope::Error with a
// remedy when it is not.
CgroupTarget resolve_cgroup(const std::string& path);

// Names cgroup ids (as the kernel reports them for tasks) by their paths
// under the cgroup2 mount: "/" for the root, "/system.slice/foo.service".
// The hierarchy is walked again only when an id not seen before appears (a
// new container), at most once per call; an id whose cgroup is gone by then
// is "cgroup <id> (removed)". Id 0 (no cgroup v2) is "".
class CgroupNames {
public:
    std::map<uint64_t, std::string> resolve(const std::vector<uint64_t>& ids);

private:
    void walk();
    std::map<uint64_t, std::string> paths_;
};

}  // namespace lockscope::probe
