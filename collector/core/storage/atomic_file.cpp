#include "core/storage/atomic_file.h"

#include "core/error.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <random>
#include <streambuf>
#include <utility>
#include <vector>

namespace lockscope {
namespace {

constexpr const char* kCreate = "cannot create output file";
constexpr const char* kWrite = "cannot write output file";

std::string directory_of(const std::string& path)
{
    const size_t slash = path.rfind('/');
    if (slash == std::string::npos)
        return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

// An ostream's bytes straight into a file descriptor; the first error is kept.
class FdBuf : public std::streambuf {
public:
    FdBuf() : buf_(size_t(1) << 16) { setp(buf_.data(), buf_.data() + buf_.size()); }
    void attach(int fd) { fd_ = fd; }
    int error() const { return error_; }

protected:
    int_type overflow(int_type c) override
    {
        if (!drain())
            return traits_type::eof();
        if (!traits_type::eq_int_type(c, traits_type::eof())) {
            *pptr() = traits_type::to_char_type(c);
            pbump(1);
        }
        return traits_type::not_eof(c);
    }
    int sync() override { return drain() ? 0 : -1; }

private:
    bool drain()
    {
        const char* p = pbase();
        while (p < pptr() && !error_) {
            const ssize_t n = ::write(fd_, p, size_t(pptr() - p));
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                error_ = n < 0 ? errno : EIO;
            else
                p += n;
        }
        setp(buf_.data(), buf_.data() + buf_.size());
        return !error_;
    }

    std::vector<char> buf_;
    int fd_ = -1;
    int error_ = 0;
};

bool has_proc_fds()
{
    return ::access("/proc/self/fd", X_OK) == 0;
}

// A fresh hidden name beside `target` (the caller retries on EEXIST).
std::string random_name_for(const std::string& target)
{
    static std::mt19937_64 gen{std::random_device{}()};
    static constexpr char kDigits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    const size_t slash = target.rfind('/');
    const std::string dir = slash == std::string::npos ? "" : target.substr(0, slash + 1);
    std::string name = dir + "." + (slash == std::string::npos ? target : target.substr(slash + 1)) + ".";
    for (int i = 0; i < 6; ++i)
        name += kDigits[gen() % (sizeof kDigits - 1)];
    return name;
}

void sync_directory(const std::string& dir)
{
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        ::fsync(fd);  // durability of the new name; the file itself is complete either way
        ::close(fd);
    }
}

}  // namespace

int create_temporary_beside(const std::string& path, std::string& temp, mode_t mode)
{
    for (int attempt = 0; attempt < 100; ++attempt) {
        temp = random_name_for(path);
        const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;  // errno EEXIST
}

int rename_into_place(const std::string& temp, const std::string& path, bool replace)
{
    if (replace)
        return ::rename(temp.c_str(), path.c_str()) == 0 ? 0 : errno;
    if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return errno;
    // A file system without RENAME_NOREPLACE: link, which refuses an existing name too.
    if (::link(temp.c_str(), path.c_str()) != 0)
        return errno;
    ::unlink(temp.c_str());
    return 0;
}

class AtomicFile::Impl {
public:
    enum class Mode { Direct, Unnamed, Named };
    Mode mode = Mode::Direct;
    int fd = -1;
    std::string target;  // the regular file to create or replace
    std::string temp;    // Mode::Named: the writer's own name for it until commit
    bool replace = false;
    bool exists = false;
    bool committed = false;
    FdBuf buf;
    std::ostream os{&buf};

    ~Impl()
    {
        if (fd >= 0)
            ::close(fd);
        if (!committed && mode == Mode::Named)
            ::unlink(temp.c_str());
    }

    // Opens the writer's own file in the target's directory, unnamed where
    // the file system allows it (nothing to clean up after a kill).
    void open_own(const std::string& user_path, mode_t perms)
    {
        const std::string dir = directory_of(target);
        if (has_proc_fds()) {
            fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, perms);
            if (fd >= 0) {
                mode = Mode::Unnamed;
                return;
            }
            if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
                throw Error(kCreate, user_path, errno);
        }
        fd = create_temporary_beside(target, temp, perms);
        if (fd < 0)
            throw Error(kCreate, user_path, errno);
        mode = Mode::Named;
    }

    // Gives the finished file the target's name.
    void place(const std::string& user_path)
    {
        if (mode == Mode::Unnamed) {
            const std::string self = "/proc/self/fd/" + std::to_string(fd);
            if (!replace) {
                if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, target.c_str(), AT_SYMLINK_FOLLOW) != 0)
                    throw_not_placed(user_path, errno);
                return;
            }
            // A link under a name of our own, then renamed over the target.
            for (int attempt = 0;; ++attempt) {
                temp = random_name_for(target);
                if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, temp.c_str(), AT_SYMLINK_FOLLOW) == 0)
                    break;
                if (errno != EEXIST || attempt == 100)
                    throw Error(kWrite, user_path, errno);
            }
            mode = Mode::Named;  // the destructor removes it should the rename fail
        }
        if (const int err = rename_into_place(temp, target, replace))
            throw_not_placed(user_path, err);
    }

    [[noreturn]] static void throw_not_placed(const std::string& user_path, int err)
    {
        if (err == EEXIST)
            throw Error(kCreate, user_path, 0,
                        "it was created while lockscope wrote; choose another name, or overwrite it with --force");
        throw Error(kWrite, user_path, err);
    }
};

AtomicFile::AtomicFile(std::string path, bool replace) : path_(std::move(path)), impl_(std::make_unique<Impl>())
{
    Impl& f = *impl_;
    f.replace = replace;
    mode_t perms = 0644;
    struct stat st {};
    if (::stat(path_.c_str(), &st) == 0) {  // follows a symbolic link to the file it names
        if (S_ISDIR(st.st_mode))
            throw Error(kCreate, path_, EISDIR);
        if (!S_ISREG(st.st_mode)) {
            f.fd = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
            if (f.fd < 0)
                throw Error(kCreate, path_, errno);
            f.buf.attach(f.fd);
            return;  // Mode::Direct
        }
        if (!replace)
            throw Error(kCreate, path_, 0, "it exists; choose another name, or overwrite it with --force");
        char resolved[PATH_MAX];
        if (!::realpath(path_.c_str(), resolved))
            throw Error(kCreate, path_, errno);
        f.target = resolved;
        f.exists = true;
        perms = st.st_mode & 07777;
    } else if (errno == ENOENT) {
        struct stat link {};
        if (::lstat(path_.c_str(), &link) == 0)
            throw Error(kCreate, path_, 0, "it is a symbolic link to nothing; remove it or choose another name");
        f.target = path_;
    } else {
        throw Error(kCreate, path_, errno);
    }
    f.open_own(path_, perms);
    if (f.exists)
        ::fchmod(f.fd, perms);  // not narrowed by the umask: the file keeps what it had
    f.buf.attach(f.fd);
}

AtomicFile::~AtomicFile() = default;

std::ostream& AtomicFile::stream()
{
    return impl_->os;
}

void AtomicFile::commit()
{
    Impl& f = *impl_;
    if (f.committed)
        return;
    f.os.flush();
    if (f.buf.error() || !f.os)
        throw Error(kWrite, path_, f.buf.error() ? f.buf.error() : EIO);
    if (f.mode != Impl::Mode::Direct) {
        if (::fsync(f.fd) != 0)
            throw Error(kWrite, path_, errno);
        f.place(path_);
        sync_directory(directory_of(f.target));
    }
    const int fd = std::exchange(f.fd, -1);
    if (::close(fd) != 0 && f.mode == Impl::Mode::Direct)
        throw Error(kWrite, path_, errno);
    f.committed = true;
}

}  // namespace lockscope
