// A test program run as a child, talked to through its stdin and stdout.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

namespace lockscope::test {

class Program {
public:
    Program(const char* path, const std::vector<std::string>& args)
    {
        int to[2];
        int from[2];
        if (pipe2(to, O_CLOEXEC) != 0 || pipe2(from, O_CLOEXEC) != 0) {
            return;
        }
        pid_ = fork();
        if (pid_ == 0) {
            dup2(to[0], STDIN_FILENO);
            dup2(from[1], STDOUT_FILENO);
            std::vector<char*> argv{const_cast<char*>(path)};
            for (const std::string& arg : args) {
                argv.push_back(const_cast<char*>(arg.c_str()));
            }
            argv.push_back(nullptr);
            execv(path, argv.data());
            _exit(127);
        }
        close(to[0]);
        close(from[1]);
        in_ = to[1];
        out_ = from[0];
    }
    ~Program()
    {
        close(in_);
        if (pid_ > 0) {
            int status = 0;
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
            while (waitpid(pid_, &status, WNOHANG) == 0 && std::chrono::steady_clock::now() < deadline) {
                usleep(10 * 1000);
            }
            if (kill(pid_, 0) == 0) {
                kill(pid_, SIGKILL);
                waitpid(pid_, &status, 0);
            }
        }
        close(out_);
    }
    Program(const Program&) = delete;
    Program& operator=(const Program&) = delete;

    pid_t pid() const { return pid_; }

    // Closes its stdin, which tells it to exit; whether it did within 5 s.
    bool finish()
    {
        close(in_);
        in_ = -1;
        int status = 0;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (std::chrono::steady_clock::now() < deadline) {
            if (waitpid(pid_, &status, WNOHANG) == pid_) {
                pid_ = -1;
                return true;
            }
            usleep(10 * 1000);
        }
        return false;
    }
    // finish(), waiting up to `seconds` (rounded up to 5 s steps): for a
    // program that has work left after its stdin closes (lockscope record
    // writing its session).
    bool finish_within(int seconds)
    {
        bool ended = finish();
        for (int waited = 5; !ended && waited < seconds; waited += 5) {
            ended = finish();
        }
        return ended;
    }
    bool say(const char* line) const { return write(in_, line, strlen(line)) == static_cast<ssize_t>(strlen(line)); }

    // A whole line if one arrives within timeout_ms, else false.
    bool line(std::string& out, int timeout_ms)
    {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
        for (;;) {
            if (const auto nl = pending_.find('\n'); nl != std::string::npos) {
                out = pending_.substr(0, nl);
                pending_.erase(0, nl + 1);
                return true;
            }
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            pollfd fd{out_, POLLIN, 0};
            char buf[256];
            if (left.count() < 0 || poll(&fd, 1, static_cast<int>(left.count())) != 1) {
                return false;
            }
            const ssize_t n = read(out_, buf, sizeof(buf));
            if (n <= 0) {
                return false;
            }
            pending_.append(buf, static_cast<std::size_t>(n));
        }
    }

private:
    pid_t pid_ = -1;
    int in_ = -1;
    int out_ = -1;
    std::string pending_;
};

}  // namespace lockscope::test
