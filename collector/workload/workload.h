// Will-it-scale style workloads that make the kernel's sleeping locks
// contend, so that lockscope has something real to record: pipe->mutex,
// a directory's i_rwsem, and mmap_lock taken for write and for read.
#pragma once

#include <signal.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace lockscope::workload {

struct WorkloadInfo {
    std::string name;         // as given on the command line, e.g. "unlink1"
    std::string lock;         // the kernel lock it exercises, e.g. "inode.i_rwsem"
    std::string description;  // one sentence: what each thread does
};

// Every workload, in the order --help lists them.
const std::vector<WorkloadInfo>& catalogue();

// nullptr when `name` is not a workload.
const WorkloadInfo* find(const std::string& name);

struct Options {
    std::string name;
    unsigned threads = 2;
    double duration_s = 5;
    std::string dir;  // parent of the scratch directory; empty: $TMPDIR, else /tmp
    // Bind worker i to the i-th allowed CPU (round robin), as will-it-scale
    // does: unbound, the scheduler sometimes stacks two workers on one CPU,
    // where they take turns and never contend, and runs become bimodal.
    bool pin_cpus = true;
    // pipes: how many distinct pipes (so pipe->mutex locks) are contended in turn.
    unsigned locks = kDefaultLocks;
    static constexpr unsigned kDefaultLocks = 1000;
};

constexpr unsigned kMaxLocks = 100000;

constexpr unsigned kMaxThreads = 1024;

// Throws lockscope::UsageError: an unknown name (the message lists the valid
// ones), threads 0 or above kMaxThreads, duration not positive or not finite,
// locks 0 or above kMaxLocks.
void validate(const Options& options);

// Per-thread operation counters in an anonymous MAP_SHARED mapping, so that a
// parent which forks a child running the workload reads them live. Each
// counter has its own cache line: the counters must not add contention of
// their own to what is being measured. Move-only; munmaps on destruction.
// Timestamps are CLOCK_MONOTONIC nanoseconds (core/clock.h's monotonic_ns()),
// comparable across processes.
class SharedOps {
public:
    explicit SharedOps(unsigned threads);  // throws lockscope::Error if mmap fails
    ~SharedOps();
    SharedOps(SharedOps&& other) noexcept;
    SharedOps& operator=(SharedOps&& other) noexcept;
    SharedOps(const SharedOps&) = delete;
    SharedOps& operator=(const SharedOps&) = delete;

    unsigned threads() const { return threads_; }
    uint64_t thread(unsigned i) const;  // ops done by worker i so far
    uint64_t total() const;
    void add(unsigned i, uint64_t n);  // only worker i adds to counter i

    // Set by run(): all workers passed the start barrier at start_ns().
    bool started() const;
    uint64_t start_ns() const;
    // Set by run(): all workers stopped counting at end_ns().
    bool finished() const;
    uint64_t end_ns() const;

    void mark_started(uint64_t now_ns);
    void mark_finished(uint64_t now_ns);
    void reset();  // counters and flags back to zero, for a repeated run

private:
    struct Header;
    struct Counter;
    Header* header() const;
    Counter* counter(unsigned i) const;

    void* base_ = nullptr;
    size_t bytes_ = 0;
    unsigned threads_ = 0;
};

// A process-wide stop request for signal handlers, which may touch nothing but
// a lock-free atomic: a SIGINT/SIGTERM handler sets it, the code that calls
// run() passes it as `stop`.
inline std::atomic<bool> stop_request{false};

// SIGINT, SIGTERM and SIGHUP: the signals that ask a run (and a recording) to
// stop.
sigset_t termination_signals();

// Runs the workload in this process: validates the options, sets up (scratch
// directory, pipe, shared mapping), starts all threads together at a barrier,
// runs until duration_s has elapsed or *stop becomes true, joins and removes
// the scratch files. Requires ops.threads() >= options.threads. Throws
// lockscope::UsageError for bad options and lockscope::Error (operation,
// object, errno) when setup or a worker fails, e.g. an unwritable --dir.
void run(const Options& options, SharedOps& ops, const std::atomic<bool>* stop = nullptr);

}  // namespace lockscope::workload
