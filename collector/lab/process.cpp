#include "lab/process.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "core/error.h"

namespace lockscope::lab {
namespace {

bool is_executable_file(const std::string& path)
{
    struct stat st {};
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::string find_program(const std::string& name)
{
    if (name.empty())
        return {};
    if (name.find('/') != std::string::npos)
        return is_executable_file(name) ? name : std::string();
    const char* env = std::getenv("PATH");
    const std::string dirs = env ? env : "/usr/local/bin:/usr/bin:/bin";
    size_t start = 0;
    while (start <= dirs.size()) {
        const size_t colon = dirs.find(':', start);
        const std::string dir = dirs.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
        const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
        if (is_executable_file(candidate))
            return candidate;
        if (colon == std::string::npos)
            break;
        start = colon + 1;
    }
    return {};
}

ProcessResult run_capture(const std::vector<std::string>& argv, const std::string& cwd, bool merge_stderr)
{
    const std::string program = find_program(argv.at(0));
    if (program.empty())
        throw Error("program not found", argv[0], 0, "install it, or check PATH");
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0)
        throw Error("cannot create pipe", argv[0], errno);
    const pid_t pid = fork();
    if (pid < 0) {
        close(out[0]);
        close(out[1]);
        throw Error("cannot fork", argv[0], errno);
    }
    if (pid == 0) {
        dup2(out[1], STDOUT_FILENO);
        if (merge_stderr)
            dup2(out[1], STDERR_FILENO);
        const int null = open("/dev/null", O_RDONLY);
        if (null >= 0)
            dup2(null, STDIN_FILENO);
        if (!cwd.empty() && chdir(cwd.c_str()) != 0)
            _exit(126);
        std::vector<char*> args;
        for (const std::string& a : argv)
            args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        execv(program.c_str(), args.data());
        _exit(127);
    }
    close(out[1]);
    ProcessResult result;
    char buf[65536];
    for (;;) {
        const ssize_t n = read(out[0], buf, sizeof buf);
        if (n > 0)
            result.output.append(buf, size_t(n));
        else if (n == 0 || errno != EINTR)
            break;
    }
    close(out[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return result;
}

std::string run_checked(const std::vector<std::string>& argv, const std::string& what, const std::string& cwd)
{
    ProcessResult r = run_capture(argv, cwd);
    if (r.status != 0)
        throw Error(what, argv[0] + " exited with status " + std::to_string(r.status), 0, last_line(r.output));
    return r.output;
}

std::string last_line(const std::string& text)
{
    size_t end = text.find_last_not_of(" \t\r\n");
    if (end == std::string::npos)
        return {};
    size_t start = text.find_last_of("\r\n", end);
    start = start == std::string::npos ? 0 : start + 1;
    return text.substr(start, end - start + 1);
}

}  // namespace lockscope::lab
