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
#include <unistd.h>

#include <cerrno>

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

}  // namespace

std::unique_ptr<Driver> make_pipe_driver(unsigned)
{
    return std::make_unique<PipeDriver>();
}

}  // namespace lockscope::workload
