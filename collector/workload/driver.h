// Internal: what one workload does. run() owns the threads, the barrier and
// the clock; a Driver only knows how to do one counted operation.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <utility>

namespace lockscope::workload {

// Owns a file descriptor, so a constructor that throws halfway leaks none.
class UniqueFd {
public:
    explicit UniqueFd(int fd = -1) : fd_(fd) {}
    ~UniqueFd() { reset(); }
    UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    UniqueFd& operator=(UniqueFd&& other) noexcept
    {
        if (this != &other) {
            reset();
            fd_ = std::exchange(other.fd_, -1);
        }
        return *this;
    }
    UniqueFd(const UniqueFd&) = delete;
    int get() const { return fd_; }

private:
    void reset()
    {
        if (fd_ >= 0)
            close(fd_);
        fd_ = -1;
    }

    int fd_;
};

class Driver {
public:
    virtual ~Driver() = default;

    // Per-thread setup on worker `index`, before the start barrier; may throw
    // lockscope::Error.
    virtual void prepare(unsigned index) { (void)index; }

    // One counted operation on worker `index`. Throws lockscope::Error on a
    // failure the workload cannot absorb; EINTR is retried, not a failure.
    virtual void op(unsigned index) = 0;

    // What worker `index` does, when workers differ ("r" faults pages in,
    // "w" maps): part of its thread name, so a report tells them apart.
    virtual std::string role(unsigned index) const
    {
        (void)index;
        return {};
    }

    // Per-thread cleanup after the last op; must not throw.
    virtual void finish(unsigned index) noexcept { (void)index; }
};

// Factories. `threads` is the worker count; the constructors do the shared
// setup and throw lockscope::Error when it fails.
std::unique_ptr<Driver> make_pipe_driver(unsigned threads);
std::unique_ptr<Driver> make_pipes_driver(unsigned pipes);
std::unique_ptr<Driver> make_signals_driver(unsigned threads);
std::unique_ptr<Driver> make_unlink_driver(unsigned threads, const std::filesystem::path& scratch,
                                           bool shared_directory);
std::unique_ptr<Driver> make_mmap1_driver(unsigned threads);
std::unique_ptr<Driver> make_pagefault_driver(unsigned threads);

}  // namespace lockscope::workload
