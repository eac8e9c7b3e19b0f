#include "core/storage/session_rotation.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "core/error.h"

namespace lockscope {

namespace fs = std::filesystem;

namespace {

constexpr const char* kPrefix = "lockscope-";
constexpr const char* kSuffix = ".lockscope";

bool is_rotated_name(const std::string& name)
{
    // kPrefix, YYYYmmdd-HHMMSS.mmm, kSuffix
    const std::string prefix = kPrefix, suffix = kSuffix;
    if (name.size() != prefix.size() + 19 + suffix.size() || name.rfind(prefix, 0) != 0 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
        return false;
    const std::string stamp = name.substr(prefix.size(), 19);
    for (size_t i = 0; i < stamp.size(); i++) {
        const char c = stamp[i];
        if (i == 8 ? c != '-' : i == 15 ? c != '.' : (c < '0' || c > '9'))
            return false;
    }
    return true;
}

uint64_t size_of(const fs::path& path)
{
    std::error_code ec;
    const uintmax_t size = fs::file_size(path, ec);
    return ec ? 0 : uint64_t(size);
}

}  // namespace

uint64_t session_bytes(const std::string& path)
{
    // A session being written keeps its newest pages in the write-ahead log.
    return size_of(path) + size_of(path + "-wal");
}

std::string rotated_session_name(timespec when)
{
    tm utc{};
    gmtime_r(&when.tv_sec, &utc);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &utc);
    char millis[8];
    std::snprintf(millis, sizeof millis, ".%03u", unsigned(when.tv_nsec / 1000000) % 1000u);
    return std::string(kPrefix) + stamp + millis + kSuffix;
}

std::vector<std::string> rotated_sessions(const std::string& dir)
{
    std::vector<std::string> found;
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        if (is_rotated_name(name) && e.is_regular_file(ec))
            found.push_back(e.path().string());
    }
    if (ec)
        throw Error("cannot read the session directory", dir, ec.value());
    std::sort(found.begin(), found.end());
    return found;
}

std::vector<std::string> prune_sessions(const RotationPolicy& policy, const std::string& current)
{
    std::vector<std::string> files = rotated_sessions(policy.dir);
    std::erase_if(files, [&](const std::string& f) { return fs::path(f) == fs::path(current); });
    size_t count = files.size() + (current.empty() ? 0 : 1);
    uint64_t bytes = current.empty() ? 0 : session_bytes(current);
    for (const std::string& f : files)
        bytes += session_bytes(f);
    std::vector<std::string> removed;
    for (const std::string& f : files) {  // oldest first
        const bool too_many = policy.keep && count > policy.keep;
        const bool too_big = policy.max_bytes && bytes > policy.max_bytes;
        if (!too_many && !too_big)
            break;
        const uint64_t size = session_bytes(f);
        std::error_code ec;
        if (!fs::remove(f, ec) && ec)
            throw Error("cannot remove an old session", f, ec.value());
        // SQLite's side files, should a killed recorder have left any.
        fs::remove(f + "-wal", ec);
        fs::remove(f + "-shm", ec);
        fs::remove(f + "-journal", ec);
        removed.push_back(f);
        count--;
        bytes -= std::min(bytes, size);
    }
    return removed;
}

}  // namespace lockscope
