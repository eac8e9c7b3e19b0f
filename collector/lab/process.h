// Running the host tools the lab needs (apt-get, dpkg-deb, ldd, xz) and
// finding programs on PATH, with failures as lockscope::Error.
#pragma once

#include <string>
#include <vector>

namespace lockscope::lab {

struct ProcessResult {
    int status = -1;     // exit status, or 128 + signal
    std::string output;  // stdout (and stderr when merged)
};

// Runs argv[0] (looked up on PATH) in `cwd` (current directory when empty)
// and captures its stdout; stderr too when `merge_stderr`. Throws only when
// the program cannot be started.
ProcessResult run_capture(const std::vector<std::string>& argv, const std::string& cwd = {}, bool merge_stderr = true);

// Like run_capture, but a non-zero exit becomes an Error naming `what` and
// the program's last line of output.
std::string run_checked(const std::vector<std::string>& argv, const std::string& what, const std::string& cwd = {});

// The full path of `name` on PATH (or `name` itself when it holds a '/' and is
// executable); empty when not found.
std::string find_program(const std::string& name);

// The last non-empty line of `text`, trimmed.
std::string last_line(const std::string& text);

}  // namespace lockscope::lab
