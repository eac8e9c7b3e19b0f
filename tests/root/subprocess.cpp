#include "subprocess.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "core/clock.h"

namespace lockscope::test {

Process Process::start(const std::vector<std::string>& argv, bool hold, uid_t uid)
{
    int go[2], out[2], err[2];
    if (pipe2(go, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
        throw std::runtime_error("pipe");
    pid_t pid = fork();
    if (pid < 0)
        throw std::runtime_error("fork");
    if (pid == 0) {
        dup2(out[1], 1);
        dup2(err[1], 2);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        if (hold) {
            char c;
            close(go[1]);
            (void)!read(go[0], &c, 1);
        }
        if (uid != 0 && (setgid(uid) != 0 || setuid(uid) != 0))
            _exit(126);
        std::vector<char*> args;
        for (const std::string& a : argv)
            args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        execvp(args[0], args.data());
        _exit(127);
    }
    close(go[0]);
    close(out[1]);
    close(err[1]);
    Process p;
    p.pid_ = pid;
    p.go_ = go[1];
    p.out_ = out[0];
    p.err_ = err[0];
    if (!hold) {
        close(p.go_);
        p.go_ = -1;
    }
    return p;
}

Process::Process(Process&& o) noexcept
    : pid_(o.pid_),
      go_(o.go_),
      out_(o.out_),
      err_(o.err_),
      out_buf_(std::move(o.out_buf_)),
      err_buf_(std::move(o.err_buf_))
{
    o.pid_ = -1;
    o.go_ = o.out_ = o.err_ = -1;
}

Process::~Process()
{
    if (pid_ > 0) {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
    }
    for (int fd : {go_, out_, err_})
        if (fd >= 0)
            close(fd);
}

void Process::release()
{
    if (go_ >= 0) {
        char c = 1;
        (void)!write(go_, &c, 1);
        close(go_);
        go_ = -1;
    }
}

void Process::signal(int sig)
{
    if (pid_ > 0)
        kill(pid_, sig);
}

void Process::pump(double timeout_s)
{
    pollfd fds[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
    if (poll(fds, 2, int(timeout_s * 1000)) <= 0)
        return;
    char buf[4096];
    for (int i = 0; i < 2; i++) {
        if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP)))
            continue;
        ssize_t n = read(fds[i].fd, buf, sizeof buf);
        if (n > 0)
            (i == 0 ? out_buf_ : err_buf_).append(buf, size_t(n));
        else {
            close(fds[i].fd);
            (i == 0 ? out_ : err_) = -1;
        }
    }
}

bool Process::wait_for_stderr(const std::string& text, double timeout_s)
{
    const double deadline = monotonic_s() + timeout_s;
    while (err_buf_.find(text) == std::string::npos) {
        if (monotonic_s() > deadline || (out_ < 0 && err_ < 0))
            return false;
        pump(0.1);
    }
    return true;
}

Finished Process::wait(double timeout_s)
{
    const double deadline = monotonic_s() + timeout_s;
    while ((out_ >= 0 || err_ >= 0) && monotonic_s() < deadline)
        pump(0.2);
    Finished f;
    int status = 0;
    struct rusage usage {};
    while (wait4(pid_, &status, WNOHANG, &usage) == 0) {
        if (monotonic_s() > deadline)
            kill(pid_, SIGKILL);
        usleep(10000);
    }
    pid_ = -1;
    if (WIFEXITED(status))
        f.exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
        f.signal = WTERMSIG(status);
    f.cpu_ns = (uint64_t(usage.ru_utime.tv_sec) + uint64_t(usage.ru_stime.tv_sec)) * 1'000'000'000 +
               (uint64_t(usage.ru_utime.tv_usec) + uint64_t(usage.ru_stime.tv_usec)) * 1000;
    f.out = out_buf_;
    f.err = err_buf_;
    return f;
}

Finished run(const std::vector<std::string>& argv, double timeout_s)
{
    return Process::start(argv).wait(timeout_s);
}

std::string lockscope_bin()
{
    return LOCKSCOPE_BIN;
}

Finished run_lockscope(std::vector<std::string> args, double timeout_s)
{
    args.insert(args.begin(), lockscope_bin());
    return run(args, timeout_s);
}

namespace {

std::string& temp_root()
{
    static std::string dir;
    return dir;
}

pid_t temp_owner = 0;

// The test program's scratch directory goes when it exits having passed (a
// failure keeps it for a look); forked children that exit leave it alone.
void remove_temp_root()
{
    if (getpid() != temp_owner || !::testing::UnitTest::GetInstance()->Passed())
        return;
    std::error_code ec;
    std::filesystem::remove_all(temp_root(), ec);
}

}  // namespace

std::string temp_path(const std::string& name)
{
    static const std::string dir = [] {
        const char* base = getenv("TMPDIR");
        std::string tmpl = std::string(base && *base ? base : "/tmp") + "/lockscope-test-XXXXXX";
        if (!mkdtemp(tmpl.data()))
            throw std::runtime_error("mkdtemp");
        chmod(tmpl.c_str(), 0755);
        temp_root() = tmpl;
        temp_owner = getpid();
        std::atexit(remove_temp_root);
        return tmpl;
    }();
    static int counter = 0;
    return dir + "/" + std::to_string(getpid()) + "-" + std::to_string(counter++) + "-" + name;
}

}  // namespace lockscope::test
