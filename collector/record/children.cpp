#include "record/children.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>

#include "core/error.h"

namespace lockscope::record {
namespace {

void wait_for_go(int fd)
{
    char go;
    while (read(fd, &go, 1) < 0 && errno == EINTR) {
    }
    close(fd);
}

Child fork_held(const std::function<void()>& body, bool report_exec_error)
{
    int go[2], err[2] = {-1, -1};
    if (pipe2(go, O_CLOEXEC) != 0 || (report_exec_error && pipe2(err, O_CLOEXEC) != 0))
        throw Error("cannot create pipe", "", errno);
    pid_t pid = fork();
    if (pid < 0)
        throw Error("cannot fork", "", errno);
    if (pid == 0) {
        sigset_t all = stop_signals();
        sigprocmask(SIG_UNBLOCK, &all, nullptr);
        close(go[1]);
        if (err[0] >= 0)
            close(err[0]);
        wait_for_go(go[0]);
        body();
        int e = errno;
        if (err[1] >= 0)
            (void)!write(err[1], &e, sizeof e);
        _exit(127);
    }
    close(go[0]);
    if (err[1] >= 0)
        close(err[1]);
    Child c;
    c.pid = pid;
    c.go_fd = go[1];
    c.err_fd = err[0];
    return c;
}

extern "C" void on_child_term(int)
{
    workload::stop_request.store(true);
}

}  // namespace

sigset_t stop_signals()
{
    sigset_t set = workload::termination_signals();
    sigaddset(&set, SIGCHLD);
    return set;
}

std::string command_path(const std::string& name)
{
    if (name.find('/') != std::string::npos)
        return access(name.c_str(), X_OK) == 0 ? name : std::string();
    const char* path = getenv("PATH");
    std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
    size_t start = 0;
    while (start <= dirs.size()) {
        size_t colon = dirs.find(':', start);
        std::string dir = dirs.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
        std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
        struct stat st {};
        if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(candidate.c_str(), X_OK) == 0)
            return candidate;
        if (colon == std::string::npos)
            break;
        start = colon + 1;
    }
    return {};
}

void Child::release()
{
    if (go_fd >= 0) {
        char go = 1;
        (void)!write(go_fd, &go, 1);
        close(go_fd);
        go_fd = -1;
    }
}

int Child::exec_error()
{
    int err = 0;
    if (err_fd >= 0) {
        if (read(err_fd, &err, sizeof err) != sizeof err)
            err = 0;
        close(err_fd);
        err_fd = -1;
    }
    return err;
}

bool Child::reap(bool block)
{
    if (pid <= 0 || exited)
        return exited;
    int st = 0;
    pid_t r = waitpid(pid, &st, block ? 0 : WNOHANG);
    if (r == pid) {
        exited = true;
        status = st;
    }
    return exited;
}

void Child::stop()
{
    if (pid <= 0 || reap(false))
        return;
    kill(pid, SIGTERM);
    for (int i = 0; i < 40 && !reap(false); i++)
        usleep(50 * 1000);
    if (!exited) {
        kill(pid, SIGKILL);
        reap(true);
    }
}

Child spawn_workload(const workload::Options& opts, workload::SharedOps& ops)
{
    return fork_held(
        [&] {
            // Ctrl-C reaches the whole terminal process group: the recorder
            // decides when the workload stops, and it stops through SIGTERM so
            // that it removes its scratch files.
            signal(SIGINT, SIG_IGN);
            signal(SIGTERM, on_child_term);
            prctl(PR_SET_PDEATHSIG, SIGTERM);
            try {
                workload::run(opts, ops, &workload::stop_request);
            } catch (const std::exception& e) {
                std::fprintf(stderr, "lockscope: workload: %s\n", e.what());
                _exit(1);
            }
            _exit(0);
        },
        false);
}

Child spawn_command(const std::vector<std::string>& command)
{
    return fork_held(
        [&] {
            std::vector<char*> argv;
            for (const std::string& a : command)
                argv.push_back(const_cast<char*>(a.c_str()));
            argv.push_back(nullptr);
            // An ignored SIGPIPE survives exec; the HTTP server of
            // --prometheus ignores it, the command must not.
            signal(SIGPIPE, SIG_DFL);
            execvp(argv[0], argv.data());
        },
        true);
}

bool process_alive(pid_t pid)
{
    if (kill(pid, 0) != 0 && errno == ESRCH)
        return false;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", int(pid));
    FILE* f = std::fopen(path, "r");
    if (!f)
        return false;
    char state = 0;
    const int n = std::fscanf(f, "%*d (%*[^)]) %c", &state);
    std::fclose(f);
    return n != 1 || (state != 'Z' && state != 'X');
}

}  // namespace lockscope::record
