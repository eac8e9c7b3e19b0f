#include "lab/initramfs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>

#include "core/error.h"
#include "lab/process.h"

namespace fs = std::filesystem;

namespace lockscope::lab {
namespace {

// newc format: "070701", 13 eight-digit hex fields, the NUL-terminated name,
// padding to 4 bytes, the data, padding to 4 bytes; "TRAILER!!!" ends it.
class CpioWriter {
public:
    explicit CpioWriter(std::string path) : path_(std::move(path))
    {
        fd_ = open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd_ < 0)
            throw Error("cannot create initramfs", path_, errno);
    }
    CpioWriter(const CpioWriter&) = delete;
    CpioWriter& operator=(const CpioWriter&) = delete;
    ~CpioWriter()
    {
        if (fd_ >= 0)
            close(fd_);
    }

    void directory(const std::string& name)
    {
        parents_then(name, [&] { entry(name, S_IFDIR | 0755, {}); });
    }
    void file(const std::string& name, const std::string& data, unsigned mode = 0644)
    {
        parents_then(name, [&] { entry(name, S_IFREG | mode, data); });
    }

    void finish()
    {
        entry("TRAILER!!!", 0, {});
        if (fsync(fd_) != 0 && errno != EINVAL)
            throw Error("cannot write initramfs", path_, errno);
        const int fd = fd_;
        fd_ = -1;
        if (close(fd) != 0)
            throw Error("cannot write initramfs", path_, errno);
    }

private:
    template <class F>
    void parents_then(const std::string& name, F&& body)
    {
        const fs::path parent = fs::path(name).parent_path();
        if (!parent.empty() && parent != "/" && !dirs_.count(parent.string())) {
            directory(parent.string());
        }
        if (!dirs_.count(name)) {
            body();
            if (fs::path(name).has_filename())
                dirs_.insert(name);
        }
    }

    void entry(const std::string& path, unsigned mode, const std::string& data)
    {
        const std::string name = path.front() == '/' ? path.substr(1) : path;
        char header[111];
        std::snprintf(header, sizeof header, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X", ino_++, mode,
                      0u, 0u, 1u, 0u, unsigned(data.size()), 0u, 0u, 0u, 0u, unsigned(name.size() + 1), 0u);
        std::string out(header, 110);
        out += name;
        out.push_back('\0');
        pad(out);
        out += data;
        pad(out);
        write_all(out);
    }

    static void pad(std::string& s)
    {
        while (s.size() % 4)
            s.push_back('\0');
    }

    void write_all(const std::string& bytes)
    {
        size_t done = 0;
        while (done < bytes.size()) {
            const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                throw Error("cannot write initramfs", path_, n < 0 ? errno : ENOSPC,
                            "free some space or point TMPDIR elsewhere");
            done += size_t(n);
        }
    }

    std::string path_;
    int fd_ = -1;
    unsigned ino_ = 1;
    std::set<std::string> dirs_;
};

std::string read_file(const std::string& path)
{
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f)
        throw Error("cannot read", path, errno);
    std::string out;
    char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
        out.append(buf, n);
    const bool failed = std::ferror(f);
    std::fclose(f);
    if (failed)
        throw Error("cannot read", path, EIO);
    return out;
}

}  // namespace

std::vector<std::string> shared_libraries(const std::string& binary)
{
    const std::string out = run_checked({"ldd", binary}, "cannot list the shared libraries of lockscope");
    std::vector<std::string> libs;
    std::istringstream in(out);
    std::string line;
    while (std::getline(in, line)) {
        // "libx.so.1 => /lib/x86_64-linux-gnu/libx.so.1 (0x...)" or "/lib64/ld-linux-x86-64.so.2 (0x...)"
        const size_t arrow = line.find("=> ");
        const size_t start = line.find('/', arrow == std::string::npos ? 0 : arrow);
        if (start == std::string::npos)
            continue;
        const size_t end = line.find(' ', start);
        libs.push_back(line.substr(start, end == std::string::npos ? std::string::npos : end - start));
    }
    return libs;
}

std::string find_busybox()
{
    for (const char* candidate : {"/bin/busybox", "/usr/bin/busybox"})
        if (access(candidate, X_OK) == 0)
            return candidate;
    return find_program("busybox");
}

void build_initramfs(const std::string& path, const InitramfsSpec& spec)
{
    CpioWriter cpio(path);
    for (const char* dir : {"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/proc", "/sys", "/dev", "/tmp", "/lab", "/boot",
                            "/root", "/etc", "/lib/modules/lab"})
        cpio.directory(dir);
    cpio.file("/bin/busybox", read_file(spec.busybox), 0755);
    cpio.file("/bin/lockscope", read_file(spec.lockscope_binary), 0755);
    for (const std::string& lib : shared_libraries(spec.lockscope_binary))
        cpio.file(lib, read_file(lib), 0755);
    if (!spec.kernel_config.empty())
        cpio.file("/boot/lab-config", read_file(spec.kernel_config));
    for (const GuestModule& m : spec.modules)
        cpio.file("/lib/modules/lab/" + m.name + ".ko", m.contents);
    cpio.file("/init", spec.init_script, 0755);
    cpio.finish();
}

}  // namespace lockscope::lab
