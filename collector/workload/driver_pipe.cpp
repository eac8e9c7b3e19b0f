// pipe: every thread writes one byte into ONE shared pipe and then reads one
// byte back, so all of them serialise on that pipe's pipe->mutex (taken by
// both pipe_write and pipe_read).
//
// Why the blocking read cannot hang: a thread reads only after its own write,
// so the bytes in the pipe always equal the threads that have written and
// not yet read; every blocked reader has a byte waiting for some reader. The
// pipe never holds more than `threads` bytes, far below its 64 KiB capacity,
// so writes never block either.
#include "workload/driver.h"

#include "core/error.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

namespace lockscope::workload {
namespace {

class PipeDriver final : public Driver {
public:
    PipeDriver()
    {
        int fds[2];
        if (pipe2(fds, O_CLOEXEC) != 0)
            throw Error("create pipe", "pipe workload", errno);
        read_end_ = UniqueFd(fds[0]);
        write_end_ = UniqueFd(fds[1]);
    }

    void op(unsigned) override
    {
        char byte = 'x';
        ssize_t n;
        do
            n = write(write_end_.get(), &byte, 1);
        while (n < 0 && errno == EINTR);
        if (n != 1)
            throw Error("write to pipe", "pipe workload", n < 0 ? errno : EIO);
        do
            n = read(read_end_.get(), &byte, 1);
        while (n < 0 && errno == EINTR);
        if (n != 1)
            throw Error("read from pipe", "pipe workload", n < 0 ? errno : EIO);
    }

private:
    UniqueFd read_end_;
    UniqueFd write_end_;
};

// pipes: many pipes, contended one after another. All threads use the same
// pipe at a time: a shared counter advances every kOpsPerPipe (8) operations and
// names the pipe, so each of the N pipes' mutexes is contended in turn, which
// gives the recorder N distinct contended locks (its scaling test). A thread
// writes and reads the same pipe within one op, so the argument above holds
// per pipe.
class PipesDriver final : public Driver {
public:
    static constexpr uint64_t kOpsPerPipe = 8;

    explicit PipesDriver(unsigned pipes)
    {
        raise_fd_limit(uint64_t(pipes) + 64);
        pipes_.reserve(pipes);
        for (unsigned i = 0; i < pipes; ++i) {
            int fds[2];
            if (pipe2(fds, O_CLOEXEC) != 0)
                throw Error("create pipe " + std::to_string(i + 1) + " of " + std::to_string(pipes), "pipes workload",
                            errno, errno == EMFILE ? "raise 'ulimit -n' or use fewer --locks" : "");
            UniqueFd r(fds[0]), w(fds[1]);
            // One descriptor per pipe, so the fd limit allows twice the pipes:
            // reopened through /proc read-write, a pipe is both of its ends.
            const std::string path = "/proc/self/fd/" + std::to_string(r.get());
            UniqueFd rw(open(path.c_str(), O_RDWR | O_CLOEXEC));
            if (rw.get() < 0)
                throw Error("reopen pipe " + std::to_string(i + 1) + " read-write", "pipes workload", errno,
                            errno == EMFILE ? "raise 'ulimit -n' or use fewer --locks" : "");
            pipes_.push_back(std::move(rw));
        }
    }

    void op(unsigned) override
    {
        const uint64_t n = next_.fetch_add(1, std::memory_order_relaxed);
        const int fd = pipes_[(n / kOpsPerPipe) % pipes_.size()].get();
        char byte = 'x';
        ssize_t r;
        do
            r = write(fd, &byte, 1);
        while (r < 0 && errno == EINTR);
        if (r != 1)
            throw Error("write to pipe", "pipes workload", r < 0 ? errno : EIO);
        do
            r = read(fd, &byte, 1);
        while (r < 0 && errno == EINTR);
        if (r != 1)
            throw Error("read from pipe", "pipes workload", r < 0 ? errno : EIO);
    }

private:
    static void raise_fd_limit(uint64_t needed)
    {
        rlimit lim{};
        if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur >= needed)
            return;
        // Above the hard limit only with CAP_SYS_RESOURCE (root, say).
        const rlim_t hard = lim.rlim_max;
        lim.rlim_cur = needed;
        lim.rlim_max = std::max<rlim_t>(hard, needed);
        if (setrlimit(RLIMIT_NOFILE, &lim) != 0)
            throw Error("open " + std::to_string(needed) + " file descriptors", "pipes workload", errno,
                        "the hard limit is " + std::to_string(hard) + "; use fewer --locks");
    }

    std::vector<UniqueFd> pipes_;
    alignas(64) std::atomic<uint64_t> next_{0};
};

}  // namespace

std::unique_ptr<Driver> make_pipe_driver(unsigned)
{
    return std::make_unique<PipeDriver>();
}

std::unique_ptr<Driver> make_pipes_driver(unsigned pipes)
{
    return std::make_unique<PipesDriver>(pipes);
}

}  // namespace lockscope::workload
