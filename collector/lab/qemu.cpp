#include "lab/qemu.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <vector>

#include "core/error.h"
#include "lab/guest_init.h"
#include "lab/process.h"
#include "core/clock.h"

namespace lockscope::lab {
namespace {

std::vector<std::string> qemu_argv(const std::string& qemu, const BootOptions& o, bool kvm)
{
    std::vector<std::string> argv = {qemu,
                                     "-nodefaults",
                                     "-display",
                                     "none",
                                     "-no-reboot",
                                     "-serial",
                                     "stdio",
                                     "-m",
                                     std::to_string(o.memory_mib),
                                     "-smp",
                                     std::to_string(o.cpus)};
    if (kvm) {
        argv.insert(argv.end(), {"-accel", "kvm", "-cpu", "host"});
    } else {
        // One host thread for all vCPUs. With multi-threaded TCG a vCPU can
        // keep running code it translated before another vCPU patched the
        // kernel text: attaching a tracepoint program rewrites a jump
        // label to int3 and back, and both vCPUs of a PREEMPT_RT guest were
        // seen looping forever on an int3 no longer in memory (the kernel
        // backs up over a vanished int3 and retries). About one run in 30
        // hung that way; single-threaded TCG keeps translation coherent.
        argv.insert(argv.end(), {"-accel", "tcg,thread=single"});
    }
    argv.insert(argv.end(), {"-kernel", o.kernel, "-initrd", o.initramfs,
                             // panic=-1 with -no-reboot: a guest panic ends qemu at once.
                             "-append", "console=ttyS0 panic=-1 quiet loglevel=3 rdinit=/init", "-virtfs",
                             "local,path=" + o.share_dir + ",mount_tag=" + kShareTag + ",security_model=none"});
    return argv;
}

class Child {
public:
    Child(const std::vector<std::string>& argv, int* out_fd)
    {
        int out[2];
        if (pipe2(out, O_CLOEXEC) != 0)
            throw Error("cannot create pipe", argv[0], errno);
        pid_ = fork();
        if (pid_ < 0) {
            close(out[0]);
            close(out[1]);
            throw Error("cannot fork", argv[0], errno);
        }
        if (pid_ == 0) {
            // Never outlive lockscope: a killed lab leaves no guest behind.
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            dup2(out[1], STDOUT_FILENO);
            dup2(out[1], STDERR_FILENO);
            const int null = open("/dev/null", O_RDONLY);
            if (null >= 0)
                dup2(null, STDIN_FILENO);
            std::vector<char*> args;
            for (const std::string& a : argv)
                args.push_back(const_cast<char*>(a.c_str()));
            args.push_back(nullptr);
            execv(argv[0].c_str(), args.data());
            std::fprintf(stderr, "cannot run %s\n", argv[0].c_str());
            _exit(127);
        }
        close(out[1]);
        *out_fd = out[0];
    }
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;
    ~Child() { kill_and_reap(); }

    int wait()
    {
        int status = 0;
        while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    void kill_and_reap()
    {
        if (pid_ <= 0)
            return;
        kill(pid_, SIGKILL);
        wait();
    }

private:
    pid_t pid_ = -1;
};

class ConsoleSplitter {
public:
    ConsoleSplitter(FILE* log, const std::function<void(const std::string&)>& on_line) : log_(log), on_line_(on_line) {}
    void feed(const char* data, size_t n)
    {
        if (log_)
            std::fwrite(data, 1, n, log_);
        for (size_t i = 0; i < n; i++) {
            if (data[i] == '\n' || data[i] == '\r')
                flush();
            else
                line_.push_back(data[i]);
        }
    }
    void flush()
    {
        if (line_.find_first_not_of(" \t") != std::string::npos) {
            last_ = line_;
            on_line_(line_);
        }
        line_.clear();
    }
    const std::string& last() const { return last_; }

private:
    FILE* log_;
    const std::function<void(const std::string&)>& on_line_;
    std::string line_, last_;
};

}  // namespace

bool kvm_usable()
{
    const int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return false;
    close(fd);
    return true;
}

std::string require_qemu(const std::string& name)
{
    const std::string path = find_program(name);
    if (path.empty())
        throw Error("qemu not found", name, 0,
                    "install the qemu-system-x86 package (scripts/install-deps.sh does), or give --qemu PATH");
    return path;
}

BootResult boot(const BootOptions& o, const std::function<void(const std::string&)>& on_line)
{
    BootResult result;
    result.kvm = o.kvm;
    FILE* log = std::fopen(o.console_log.c_str(), "w");
    if (!log)
        throw Error("cannot create console log", o.console_log, errno);
    ConsoleSplitter console(log, on_line);
    int fd = -1;
    const double start = monotonic_s();
    Child qemu(qemu_argv(require_qemu(o.qemu), o, result.kvm), &fd);
    char buf[4096];
    bool timed_out = false;
    for (;;) {
        const double elapsed = monotonic_s() - start;
        const double left = o.timeout_s - elapsed;
        if (left <= 0) {
            timed_out = true;
            break;
        }
        if (o.boot_deadline_s > 0 && o.booted && elapsed > o.boot_deadline_s && !o.booted()) {
            result.no_boot = true;
            break;
        }
        pollfd p{fd, POLLIN, 0};
        const int ready = poll(&p, 1, int(std::min(left, 1.0) * 1000) + 1);
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0)
            continue;
        const ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;  // qemu closed its output: it is exiting
        console.feed(buf, size_t(n));
    }
    console.flush();
    close(fd);
    std::fclose(log);
    result.last_console_line = console.last();
    if (timed_out || result.no_boot) {
        qemu.kill_and_reap();
        result.timed_out = timed_out;
        result.elapsed_s = monotonic_s() - start;
        return result;
    }
    result.qemu_status = qemu.wait();
    result.elapsed_s = monotonic_s() - start;
    return result;
}

}  // namespace lockscope::lab
