// unlink1 / unlink2: each thread creates (open O_CREAT|O_RDWR, close) and
// unlinks its own file name, as will-it-scale's unlink1/unlink2 do. Both the
// create and the unlink take the parent directory's i_rwsem for write, so in
// unlink1, where all threads share one directory, they queue on that one
// lock; unlink2 gives each thread its own directory and is the control: same
// work, (almost) no i_rwsem contention.
#include "workload/driver.h"

#include "core/error.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

namespace lockscope::workload {
namespace {

class UnlinkDriver final : public Driver {
public:
    UnlinkDriver(unsigned threads, const std::filesystem::path& scratch, bool shared)
    {
        // Paths are resolved against directory fds so that each op walks one
        // component, not the whole scratch path.
        unsigned dirs = shared ? 1 : threads;
        for (unsigned d = 0; d < dirs; ++d) {
            auto dir = scratch / (shared ? std::string("shared") : "thread" + std::to_string(d));
            if (mkdir(dir.c_str(), 0700) != 0)
                throw Error("create directory", dir.string(), errno);
            int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (fd < 0)
                throw Error("open directory", dir.string(), errno);
            dir_fds_.emplace_back(fd);
            dir_names_.push_back(dir.string());
        }
        for (unsigned t = 0; t < threads; ++t) {
            names_.push_back("file" + std::to_string(t));
            thread_dir_.push_back(shared ? 0 : t);
        }
    }
    void op(unsigned index) override
    {
        int dir = dir_fds_[thread_dir_[index]].get();
        const char* name = names_[index].c_str();
        int fd;
        do
            fd = openat(dir, name, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
        while (fd < 0 && errno == EINTR);
        if (fd < 0)
            throw Error("create file", where(index), errno);
        close(fd);
        if (unlinkat(dir, name, 0) != 0)
            throw Error("unlink file", where(index), errno);
    }

private:
    std::string where(unsigned index) const { return dir_names_[thread_dir_[index]] + "/" + names_[index]; }

    std::vector<UniqueFd> dir_fds_;
    std::vector<std::string> dir_names_;
    std::vector<std::string> names_;    // per thread, read-only once running
    std::vector<unsigned> thread_dir_;  // index into dir_fds_ per thread
};

}  // namespace

std::unique_ptr<Driver> make_unlink_driver(unsigned threads, const std::filesystem::path& scratch,
                                           bool shared_directory)
{
    return std::make_unique<UnlinkDriver>(threads, scratch, shared_directory);
}

}  // namespace lockscope::workload
