#include "root_env.h"

#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "probe/features.h"

namespace lockscope::test {
namespace {

constexpr const char* kTracefs = "/sys/kernel/tracing";

void unmount_ours()
{
    umount2(kTracefs, MNT_DETACH);
}

}  // namespace

std::string bpf_unavailable_reason()
{
    std::string why;
    if (!probe::recording_supported(&why))
        return why;
    return {};
}

std::string ensure_tracefs()
{
    static std::mutex m;
    static std::string result = "not checked";
    std::lock_guard lock(m);
    if (result != "not checked")
        return result;
    if (!probe::tracefs_mount_point().empty())
        return result = "";
    if (geteuid() != 0)
        return result = "tracefs is not mounted and mounting it needs root";
    if (mount("nodev", kTracefs, "tracefs", 0, nullptr) != 0)
        return result = std::string("cannot mount tracefs at ") + kTracefs + ": " + std::strerror(errno);
    std::atexit(unmount_ours);
    return result = "";
}

}  // namespace lockscope::test
