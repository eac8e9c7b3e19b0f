#include "workload/workload.h"

#include "core/clock.h"
#include "core/error.h"
#include "workload/driver.h"
#include "workload/scratch_dir.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <exception>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace lockscope::workload {
namespace {

// How often the controlling thread looks at the clock and the stop flag:
// short enough that a stop feels immediate, long enough to cost nothing.
constexpr auto kPoll = std::chrono::milliseconds(10);

bool uses_files(const std::string& name)
{
    return name == "unlink1" || name == "unlink2";
}

std::unique_ptr<Driver> make_driver(const Options& options, const ScratchDir* scratch)
{
    const std::string& name = options.name;
    if (name == "pipe")
        return make_pipe_driver(options.threads);
    if (name == "pipes")
        return make_pipes_driver(options.locks);
    if (name == "unlink1" || name == "unlink2")
        return make_unlink_driver(options.threads, scratch->path(), name == "unlink1");
    if (name == "mmap1")
        return make_mmap1_driver(options.threads);
    if (name == "pagefault")
        return make_pagefault_driver(options.threads);
    if (name == "signals")
        return make_signals_driver(options.threads);
    throw std::logic_error("workload '" + name + "' is in the catalogue but has no driver");
}

// The first exception any worker throws; the others are consequences.
class FirstError {
public:
    void capture()
    {
        std::lock_guard lock(mutex_);
        if (!error_)
            error_ = std::current_exception();
    }
    void rethrow()
    {
        if (error_)
            std::rethrow_exception(error_);
    }

private:
    std::mutex mutex_;
    std::exception_ptr error_;
};

// Termination signals go to the caller's thread, where its handler sets the
// stop flag; workers keep them blocked so their syscalls are not interrupted.
void block_termination_signals()
{
    const sigset_t set = termination_signals();
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

// The CPUs this process may run on, in order; empty if that cannot be read.
std::vector<int> allowed_cpus()
{
    std::vector<int> cpus;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
            if (CPU_ISSET(cpu, &set))
                cpus.push_back(cpu);
    return cpus;
}

// Best effort: a cpuset that changes under us only costs reproducibility.
void pin_to(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

// "pipe-0", "pagefault-w3": reports name a holder or a waiting task by its
// thread name, so each worker says which workload and which worker it is
// (not the process's name). Linux keeps 15 bytes of it.
void name_thread(const std::string& workload, const std::string& role, unsigned index)
{
    const std::string name = (workload + "-" + role + std::to_string(index)).substr(0, 15);
    pthread_setname_np(pthread_self(), name.c_str());  // best effort: only reports lose
}

}  // namespace

sigset_t termination_signals()
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    return set;
}

void run(const Options& options, SharedOps& ops, const std::atomic<bool>* stop)
{
    validate(options);
    if (ops.threads() < options.threads)
        throw std::invalid_argument("SharedOps has fewer counters than the workload has threads");

    // Declared before the driver so that it outlives the driver's open fds.
    std::optional<ScratchDir> scratch;
    if (uses_files(options.name))
        scratch.emplace(options.dir);
    std::unique_ptr<Driver> driver = make_driver(options, scratch ? &*scratch : nullptr);

    ops.reset();
    std::atomic<bool> done{false};
    FirstError first_error;
    // Workers plus this thread. The completion step runs once all are ready and
    // before any is released, so a live reader never sees counts before the
    // started flag and the start time.
    auto mark_start = [&ops]() noexcept { ops.mark_started(monotonic_ns()); };
    std::barrier start(std::ptrdiff_t(options.threads) + 1, mark_start);

    const std::vector<int> cpus = options.pin_cpus ? allowed_cpus() : std::vector<int>{};
    auto worker = [&](unsigned index) {
        block_termination_signals();
        name_thread(options.name, driver->role(index), index);
        if (!cpus.empty())
            pin_to(cpus[index % cpus.size()]);
        try {
            driver->prepare(index);
        } catch (...) {
            first_error.capture();
            done.store(true);
        }
        start.arrive_and_wait();
        try {
            while (!done.load(std::memory_order_relaxed)) {
                driver->op(index);
                ops.add(index, 1);
            }
        } catch (...) {
            first_error.capture();
            done.store(true);
        }
        driver->finish(index);
    };

    std::vector<std::thread> workers;
    workers.reserve(options.threads);
    try {
        for (unsigned i = 0; i < options.threads; ++i)
            workers.emplace_back(worker, i);
    } catch (...) {
        // Out of threads: release the ones already waiting and give up.
        first_error.capture();
        done.store(true);
        for (size_t missing = workers.size(); missing < options.threads; ++missing)
            start.arrive_and_drop();
    }

    start.arrive_and_wait();
    const uint64_t start_ns = ops.start_ns();
    // Clamped so that an absurd --duration cannot overflow; 1e18 ns is 31 years.
    const uint64_t end_ns = start_ns + uint64_t(std::min(options.duration_s * 1e9, 1e18));
    while (!done.load() && !(stop && stop->load())) {
        uint64_t now = monotonic_ns();
        if (now >= end_ns)
            break;
        std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(kPoll, std::chrono::nanoseconds(end_ns - now)));
    }
    done.store(true);
    for (auto& t : workers)
        t.join();
    ops.mark_finished(monotonic_ns());

    driver.reset();
    scratch.reset();
    first_error.rethrow();
}

}  // namespace lockscope::workload
