#include "cli/temp_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <vector>

#include "core/error.h"

namespace lockscope::cli {

TempFile::TempFile(const std::string& prefix, const std::string& suffix)
{
    const char* dir = std::getenv("TMPDIR");
    std::string name = std::string(dir && *dir ? dir : "/tmp") + "/" + prefix + "-XXXXXX" + suffix;
    std::vector<char> buffer(name.begin(), name.end());
    buffer.push_back('\0');
    const int fd = mkstemps(buffer.data(), int(suffix.size()));
    if (fd < 0)
        throw Error("cannot create a temporary file", name, errno, "set TMPDIR to a writable directory");
    close(fd);
    path_ = buffer.data();
}

TempFile::~TempFile()
{
    for (const char* side : {"", "-journal", "-wal", "-shm"})
        unlink((path_ + side).c_str());
}

bool copy_fd(int in, int out)
{
    char buffer[1 << 16];
    for (;;) {
        const ssize_t n = read(in, buffer, sizeof buffer);
        if (n == 0)
            return true;
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        for (ssize_t done = 0; done < n;) {
            const ssize_t w = write(out, buffer + done, size_t(n - done));
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0)
                return false;
            done += w;
        }
    }
}

}  // namespace lockscope::cli
