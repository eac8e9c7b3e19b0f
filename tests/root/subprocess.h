// Runs programs for the integration tests: the lockscope binary, workloads.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace lockscope::test {

struct Finished {
    int exit_code = -1;  // -1 if killed by a signal
    int signal = 0;
    std::string out;
    std::string err;
    uint64_t cpu_ns = 0;  // user + system time of the process and its threads (the kernel's rusage)
};

// A started process with its stdout/stderr captured.
class Process {
public:
    // `hold`: the child waits for release() before exec, so observers can
    // attach to its pid first. `uid` != 0 drops privileges before exec.
    static Process start(const std::vector<std::string>& argv, bool hold = false, uid_t uid = 0);
    Process(Process&&) noexcept;
    ~Process();

    pid_t pid() const { return pid_; }
    void release();
    // Reads stderr until `text` appears (true) or the process ends / timeout.
    bool wait_for_stderr(const std::string& text, double timeout_s);
    const std::string& stderr_so_far() const { return err_buf_; }
    Finished wait(double timeout_s = 120);  // kills with SIGKILL on timeout
    void signal(int sig);

private:
    Process() = default;
    void pump(double timeout_s);
    pid_t pid_ = -1;
    int go_ = -1, out_ = -1, err_ = -1;
    std::string out_buf_, err_buf_;
};

Finished run(const std::vector<std::string>& argv, double timeout_s = 120);

std::string lockscope_bin();
// `lockscope ARGS...` run to its end (killed after `timeout_s`).
Finished run_lockscope(std::vector<std::string> args, double timeout_s = 120);
std::string temp_path(const std::string& name);  // unique file name in a test directory

}  // namespace lockscope::test
