// `lockscope workload NAME`: runs a kernel-lock workload in this process and
// prints its throughput per interval, so a person can see the load is real
// (and steady) while recording it from another terminal.
#include "cli/commands.h"
#include "core/clock.h"
#include "core/error.h"
#include "workload/workload.h"

#include <boost/program_options.hpp>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <iostream>
#include <sstream>
#include <thread>

namespace po = boost::program_options;

namespace lockscope::cli {
namespace {

struct WorkloadArgs {
    workload::Options options;
    long long threads = 2;  // signed, so "-t -1" is reported as -1, not as 4294967295
    long long locks = workload::Options::kDefaultLocks;
    double interval_s = 1;
    bool no_pin = false;
    bool help = false;
    bool list = false;
};

// The options --help shows; NAME, the positional, is added by parse().
po::options_description describe(WorkloadArgs& a)
{
    po::options_description desc("Options");
    desc.add_options()("help,h", po::bool_switch(&a.help), "show this help")(
        "list", po::bool_switch(&a.list), "print the workloads' names, one per line, and exit")(
        "threads,t", po::value(&a.threads)->default_value(2), "worker threads")(
        "duration,d", po::value(&a.options.duration_s)->default_value(5), "seconds to run")(
        "interval,i", po::value(&a.interval_s)->default_value(1), "seconds between progress lines")(
        "dir", po::value(&a.options.dir),
        "parent of the scratch directory (unlink1/unlink2); default $TMPDIR, else /tmp")(
        "locks", po::value(&a.locks)->default_value(workload::Options::kDefaultLocks),
        "pipes: how many pipes (distinct contended locks)")(
        "no-pin", po::bool_switch(&a.no_pin),
        "let the scheduler place the threads (default: thread i on the i-th allowed CPU)");
    return desc;
}

void print_help(const po::options_description& desc)
{
    std::ostringstream out;
    out << "Usage: lockscope workload NAME [-t THREADS] [-d SEC] [-i SEC] [--dir DIR]\n\n"
        << "Drive a kernel sleeping lock into contention, will-it-scale style, and print\n"
        << "operations per second. All threads start together and each counts its own ops.\n\n"
        << "Workloads (the lock each one exercises):\n";
    for (const auto& w : workload::catalogue()) {
        char line[64];
        std::snprintf(line, sizeof line, "  %-10s ", w.name.c_str());
        out << line << w.lock << "\n             " << w.description << "\n";
    }
    out << "\n"
        << desc << "\n"
        << "Compare unlink1 with unlink2 to separate i_rwsem contention from the cost of\n"
        << "the file operations themselves; --dir /dev/shm puts the files on tmpfs, so\n"
        << "that a disk file system's journal does not dilute the lock. Contention needs\n"
        << "at least 2 threads; more threads than CPUs also shows sleeping waiters.\n"
        << "To record the contention, run the workload under the recorder ('lockscope record\n"
        << "--workload'). Ctrl-C stops early and still prints the totals.\n\n"
        << "exit status: 0 done, 1 failure (say, the scratch directory cannot be made), 2 usage\n"
        << "error (a bad option or value, an unknown workload)\n\n"
        << "examples:\n"
        << "  lockscope workload pipe -t 4 -d 10\n"
        << "  lockscope workload unlink1 -t 4 --dir /dev/shm\n"
        << "  lockscope record -d 5 --workload unlink1 -t 4 -o unlink1.lockscope\n";
    std::cout << out.str();
}

WorkloadArgs parse(const Args& args, bool& help_shown)
{
    WorkloadArgs a;
    auto desc = describe(a);
    po::options_description all;
    all.add(desc).add_options()("name", po::value(&a.options.name));
    po::positional_options_description positional;
    positional.add("name", 1);
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        throw UsageError(e.what());
    }
    if (a.help) {
        print_help(desc);
        help_shown = true;
        return a;
    }
    if (a.list) {
        for (const auto& w : workload::catalogue())
            std::cout << w.name << "\n";
        help_shown = true;
        return a;
    }
    if (a.options.name.empty())
        throw UsageError("no workload named: lockscope workload NAME ('lockscope workload --list' lists them)");
    if (a.threads < 1 || a.threads > workload::kMaxThreads)
        throw UsageError("thread count must be between 1 and " + std::to_string(workload::kMaxThreads) + ", got " +
                         std::to_string(a.threads));
    a.options.threads = unsigned(a.threads);
    if (a.locks < 1 || a.locks > workload::kMaxLocks)
        throw UsageError("--locks must be between 1 and " + std::to_string(workload::kMaxLocks) + ", got " +
                         std::to_string(a.locks));
    a.options.locks = unsigned(a.locks);
    a.options.pin_cpus = !a.no_pin;
    workload::validate(a.options);  // main() names the command
    // The progress loop samples every 10 ms; a shorter interval means nothing.
    if (!(a.interval_s >= 0.01) || !std::isfinite(a.interval_s))
        throw UsageError("interval must be at least 0.01 seconds");
    return a;
}

// Until main owns signal handling: SIGINT/SIGTERM request a stop, and the
// previous handlers come back when the command ends.
class StopOnSignal {
public:
    StopOnSignal()
    {
        struct sigaction sa {};
        sa.sa_handler = [](int) { workload::stop_request.store(true); };
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old_int_);
        sigaction(SIGTERM, &sa, &old_term_);
    }
    ~StopOnSignal()
    {
        sigaction(SIGINT, &old_int_, nullptr);
        sigaction(SIGTERM, &old_term_, nullptr);
    }
    StopOnSignal(const StopOnSignal&) = delete;
    StopOnSignal& operator=(const StopOnSignal&) = delete;

private:
    struct sigaction old_int_ {};
    struct sigaction old_term_ {};
};

double seconds(uint64_t ns)
{
    return double(ns) / 1e9;
}

void print_summary(const workload::Options& o, const workload::SharedOps& ops, bool stopped)
{
    double elapsed = seconds(ops.end_ns() - ops.start_ns());
    if (elapsed <= 0)
        return;
    uint64_t lo = ops.thread(0), hi = ops.thread(0);
    for (unsigned i = 1; i < o.threads; ++i) {
        lo = std::min(lo, ops.thread(i));
        hi = std::max(hi, ops.thread(i));
    }
    uint64_t total = ops.total();
    double mean = double(total) / o.threads;
    std::printf(
        "%s: %llu ops in %.2f s%s = %.0f ops/s, %u thread%s, per thread %.0f..%.0f ops/s "
        "(spread %.1f%% of mean)\n",
        o.name.c_str(), (unsigned long long)total, elapsed, stopped ? " (stopped early)" : "", double(total) / elapsed,
        o.threads, o.threads == 1 ? "" : "s", double(lo) / elapsed, double(hi) / elapsed,
        mean > 0 ? 100.0 * double(hi - lo) / mean : 0.0);
}

}  // namespace

int cmd_workload(const Args& args)
{
    bool help_shown = false;
    WorkloadArgs a = parse(args, help_shown);
    if (help_shown)
        return kExitOk;
    const auto& o = a.options;

    workload::SharedOps ops(o.threads);
    StopOnSignal signals;
    workload::stop_request.store(false);
    std::atomic<bool> worker_done{false};
    std::exception_ptr failure;
    std::thread runner([&] {
        try {
            workload::run(o, ops, &workload::stop_request);
        } catch (...) {
            failure = std::current_exception();
        }
        worker_done.store(true);
    });

    // Progress: ops/s over each interval, measured from the shared counters.
    // The header waits for the start, so a setup failure prints only itself.
    using namespace std::chrono_literals;
    while (!ops.started() && !worker_done.load())
        std::this_thread::sleep_for(1ms);
    if (ops.started()) {
        std::printf("workload %s, lock %s: %u thread%s for %g s; Ctrl-C stops early\n", o.name.c_str(),
                    workload::find(o.name)->lock.c_str(), o.threads, o.threads == 1 ? "" : "s", o.duration_s);
        std::fflush(stdout);
    }
    uint64_t last_ns = ops.start_ns(), last_ops = 0;
    const auto interval_ns = uint64_t(a.interval_s * 1e9);
    uint64_t next_ns = last_ns + interval_ns;
    while (!worker_done.load()) {
        std::this_thread::sleep_for(10ms);
        uint64_t now = monotonic_ns();
        if (now < next_ns || ops.finished())
            continue;
        uint64_t total = ops.total();
        std::printf("%8.2f s %14.0f ops/s\n", seconds(now - ops.start_ns()),
                    double(total - last_ops) / seconds(now - last_ns));
        std::fflush(stdout);
        last_ns = now;
        last_ops = total;
        while (next_ns <= now)  // a late wake-up skips ticks rather than bunching lines
            next_ns += interval_ns;
    }
    runner.join();
    if (failure)
        std::rethrow_exception(failure);
    print_summary(o, ops, workload::stop_request.load());
    return kExitOk;
}

}  // namespace lockscope::cli
