// Debian kernel packages as guest kernels: resolve a short spec to the
// newest package, download and unpack it once into a cache directory.
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <regex>
#include <sstream>

#include "core/error.h"
#include "core/format.h"
#include "lab/kernel.h"
#include "lab/process.h"

namespace fs = std::filesystem;

namespace lockscope::lab {
namespace {

constexpr const char* kCompleteMarker = ".lockscope-complete";

std::string regex_escape(const std::string& s)
{
    static const std::regex special(R"([.^$|()\[\]{}*+?\\])");
    return std::regex_replace(s, special, R"(\$&)");
}

std::string debian_arch()
{
    utsname u{};
    uname(&u);
    const std::string machine = u.machine;
    if (machine == "x86_64")
        return "amd64";
    if (machine == "aarch64")
        return "arm64";
    return machine;
}

bool is_dir(const std::string& path)
{
    std::error_code ec;
    return fs::is_directory(path, ec);
}

std::string only_entry(const std::string& dir, const std::string& prefix)
{
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind(prefix, 0) == 0)
            return entry.path().string();
    }
    return {};
}

// The unpacked package: boot/vmlinuz-<release>, boot/config-<release>,
// lib/modules/<release>.
GuestKernel from_unpacked(const std::string& root, const std::string& package)
{
    GuestKernel k;
    k.package = package;
    k.image = only_entry(root + "/boot", "vmlinuz-");
    if (k.image.empty())
        throw Error("package has no kernel image", package, 0, "expected boot/vmlinuz-<release> in it");
    k.release = fs::path(k.image).filename().string().substr(std::string("vmlinuz-").size());
    const std::string config = root + "/boot/config-" + k.release;
    if (access(config.c_str(), R_OK) == 0)
        k.config = config;
    const std::string modules = root + "/lib/modules/" + k.release;
    if (is_dir(modules))
        k.modules_dir = modules;
    k.label = k.release;
    return k;
}

void make_dirs(const std::string& dir)
{
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec)
        throw Error("cannot create cache directory", dir, ec.value(),
                    "set LOCKSCOPE_LAB_CACHE or XDG_CACHE_HOME to a writable directory");
}

std::string download(const std::string& package, const std::string& cache_dir, void (*progress)(const std::string&))
{
    const std::string work = cache_dir + "/.download-" + std::to_string(getpid());
    std::error_code ec;
    fs::remove_all(work, ec);
    make_dirs(work);
    progress("downloading " + package + " (apt-get download)");
    ProcessResult r = run_capture({"apt-get", "download", package}, work);
    if (r.status != 0) {
        fs::remove_all(work, ec);
        throw Error("cannot download", package, 0, "apt-get: " + last_line(r.output));
    }
    std::string deb = only_entry(work, package + "_");
    if (deb.empty()) {
        fs::remove_all(work, ec);
        throw Error("apt-get download left no .deb for", package);
    }
    return work;
}

}  // namespace

std::string default_cache_dir()
{
    if (const char* dir = std::getenv("LOCKSCOPE_LAB_CACHE"); dir && *dir)
        return dir;
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
        return std::string(xdg) + "/lockscope/lab";
    return "/var/cache/lockscope/lab";
}

std::string resolve_debian_package(const std::string& spec, const std::string& available_names)
{
    if (spec.rfind("linux-image-", 0) == 0)
        return available_names.find(spec) != std::string::npos ? spec : std::string();
    // VERSION[-FLAVOUR]: "6.1" → amd64, "6.1-rt" → rt-amd64.
    const size_t dash = spec.find('-');
    const std::string version = spec.substr(0, dash);
    std::string flavour = dash == std::string::npos ? "" : spec.substr(dash + 1);
    const std::string arch = debian_arch();
    if (flavour.empty())
        flavour = arch;
    else if (flavour.size() < arch.size() || flavour.compare(flavour.size() - arch.size(), arch.size(), arch) != 0)
        flavour += "-" + arch;
    // linux-image-6.1.0-50-amd64-unsigned, linux-image-6.12.117+deb12-rt-amd64-unsigned
    const std::regex pattern("^linux-image-" + regex_escape(version) + R"((\.[0-9]+)*(-[0-9]+|\+deb[0-9]+)-)" +
                             regex_escape(flavour) + "-unsigned$");
    std::vector<std::string> matches;
    std::istringstream in(available_names);
    std::string name;
    while (std::getline(in, name))
        if (std::regex_match(name, pattern))
            matches.push_back(name);
    if (matches.empty())
        return {};
    return *std::max_element(matches.begin(), matches.end(), natural_less);
}

GuestKernel debian_kernel(const std::string& spec, const std::string& cache_dir, void (*progress)(const std::string&))
{
    if (spec.empty())
        throw UsageError("--debian-kernel needs a package name or a version such as 6.1 or 6.1-rt");
    const ProcessResult names = run_capture({"apt-cache", "pkgnames", "linux-image-"}, {}, false);
    const std::string package = resolve_debian_package(spec, names.output);
    if (package.empty())
        throw Error("no Debian kernel package matches", spec, 0,
                    "try 'apt-cache search linux-image' and name a package, or run apt-get update");
    make_dirs(cache_dir);
    const std::string root = cache_dir + "/" + package;
    if (access((root + "/" + kCompleteMarker).c_str(), F_OK) == 0) {
        progress("using cached " + package);
        return from_unpacked(root, package);
    }
    const std::string work = download(package, cache_dir, progress);
    std::error_code ec;
    const std::string partial = root + ".partial";
    fs::remove_all(partial, ec);
    fs::remove_all(root, ec);
    progress("unpacking " + package);
    try {
        run_checked({"dpkg-deb", "-x", only_entry(work, package + "_"), partial}, "cannot unpack");
        if (FILE* marker = std::fopen((partial + "/" + kCompleteMarker).c_str(), "w"))
            std::fclose(marker);
        else
            throw Error("cannot write into the cache", partial, errno);
        fs::rename(partial, root);
    } catch (...) {
        fs::remove_all(partial, ec);
        fs::remove_all(work, ec);
        throw;
    }
    fs::remove_all(work, ec);
    return from_unpacked(root, package);
}

GuestKernel local_kernel(const std::string& image, const std::string& modules_dir)
{
    struct stat st {};
    if (stat(image.c_str(), &st) != 0)
        throw Error("cannot read kernel image", image, errno);
    if (!S_ISREG(st.st_mode))
        throw Error("kernel image is not a regular file", image);
    GuestKernel k;
    k.image = image;
    if (!modules_dir.empty()) {
        if (!is_dir(modules_dir))
            throw Error("modules directory not found", modules_dir, 0,
                        "give the kernel's lib/modules/<release> directory");
        k.modules_dir = modules_dir;
    }
    const fs::path path(image);
    const std::string name = path.filename().string();
    for (const char* prefix : {"vmlinuz-", "bzImage-"}) {
        if (name.rfind(prefix, 0) == 0) {
            const std::string config = (path.parent_path() / ("config-" + name.substr(std::strlen(prefix)))).string();
            if (access(config.c_str(), R_OK) == 0)
                k.config = config;
        }
    }
    k.label = name;
    return k;
}

}  // namespace lockscope::lab
