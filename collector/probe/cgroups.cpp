#include "probe/cgroups.h"

#include <sys/stat.h>
#include <sys/statfs.h>

#include <cerrno>
#include <filesystem>

#include "core/error.h"
#include "probe/features.h"

namespace lockscope::probe {
namespace {

constexpr long kCgroup2Magic = 0x63677270;  // CGROUP2_SUPER_MAGIC

}  // namespace

std::string cgroup2_mount()
{
    return mount_point("cgroup2");
}

CgroupTarget resolve_cgroup(const std::string& path)
{
    namespace fs = std::filesystem;
    const std::string mount = cgroup2_mount();
    if (mount.empty())
        throw Error("cannot follow a cgroup", path, 0,
                    "cgroup v2 is not mounted (mount -t cgroup2 none /sys/fs/cgroup)");
    std::error_code ec;
    fs::path p = path;
    if (p.is_relative() || !fs::exists(p, ec))
        p = fs::path(mount) / p.relative_path();
    const fs::path canonical = fs::weakly_canonical(p, ec);
    struct statfs sfs {};
    struct stat st {};
    if (ec || statfs(canonical.c_str(), &sfs) != 0 || stat(canonical.c_str(), &st) != 0)
        throw Error("no such cgroup", path, errno ? errno : ENOENT,
                    "give a directory under " + mount + ", absolute or relative to it");
    if (long(sfs.f_type) != kCgroup2Magic || !S_ISDIR(st.st_mode))
        throw Error("not a cgroup v2 directory", canonical.string(), 0,
                    "give a directory under " + mount + ", absolute or relative to it");
    CgroupTarget t;
    t.path = canonical.string();
    t.id = uint64_t(st.st_ino);  // a kernfs node's id, which is the cgroup's id
    const fs::path relative = canonical.lexically_relative(fs::path(mount));
    for (const auto& part : relative)
        if (part != "." && !part.empty())
            t.level++;
    return t;
}

void CgroupNames::walk()
{
    namespace fs = std::filesystem;
    const std::string mount = cgroup2_mount();
    if (mount.empty())
        return;
    struct stat st {};
    if (stat(mount.c_str(), &st) == 0)
        paths_[uint64_t(st.st_ino)] = "/";
    std::error_code ec;
    // A cgroup removed during the walk ends that branch, not the walk.
    for (auto it = fs::recursive_directory_iterator(mount, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (!it->is_directory(ec) || it->is_symlink(ec))
            continue;
        if (stat(it->path().c_str(), &st) == 0)
            paths_[uint64_t(st.st_ino)] = "/" + it->path().lexically_relative(mount).string();
    }
}

std::map<uint64_t, std::string> CgroupNames::resolve(const std::vector<uint64_t>& ids)
{
    std::map<uint64_t, std::string> out;
    bool walked = false;
    for (uint64_t id : ids) {
        if (id == 0) {
            out[id] = "";
            continue;
        }
        auto it = paths_.find(id);
        if (it == paths_.end() && !walked) {
            walk();
            walked = true;
            it = paths_.find(id);
        }
        if (it == paths_.end())
            it = paths_.emplace(id, "cgroup " + std::to_string(id) + " (removed)").first;
        out[id] = it->second;
    }
    return out;
}

}  // namespace lockscope::probe
