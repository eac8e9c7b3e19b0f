// signals: every thread sends a signal to the next thread of its own process.
// Sending (lock_task_sighand) and taking one (dequeue_signal) both hold the
// thread group's sighand->siglock, so the threads queue on that one
// spinlock: a lock inside a slab object (sighand_cache) that lock identity
// names from kernel data. Thread-directed, so the process's other threads
// (the harness's main thread) are not flooded with signals.
#include "workload/driver.h"

#include "core/error.h"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <vector>

namespace lockscope::workload {
namespace {

void ignore(int) {}

class SignalsDriver final : public Driver {
public:
    explicit SignalsDriver(unsigned threads) : tids_(threads)
    {
        struct sigaction sa {};
        sa.sa_handler = ignore;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        if (sigaction(SIGUSR2, &sa, &old_) != 0)
            throw Error("install a signal handler", "SIGUSR2", errno);
    }
    ~SignalsDriver() override { sigaction(SIGUSR2, &old_, nullptr); }
    void prepare(unsigned index) override { tids_[index].store(pid_t(syscall(SYS_gettid))); }
    void op(unsigned index) override
    {
        const pid_t to = tids_[(index + 1) % tids_.size()].load(std::memory_order_relaxed);
        // ESRCH: the next thread has finished already (the run is ending).
        if (syscall(SYS_tgkill, getpid(), to, SIGUSR2) != 0 && errno != ESRCH)
            throw Error("send a signal", "SIGUSR2", errno);
    }

private:
    struct sigaction old_ {};
    std::vector<std::atomic<pid_t>> tids_;
};

}  // namespace

std::unique_ptr<Driver> make_signals_driver(unsigned threads)
{
    return std::make_unique<SignalsDriver>(threads);
}

}  // namespace lockscope::workload
