// Records the user-space lock waits of target processes (bpf/userlock.bpf.c):
// futex sleeps per (process, futex address), a bounded sample of them with
// the waiter's user stack, unwound at once (while the process runs) with the
// binaries' CFI. read() classifies each address by its samples' stacks and
// names its lock; futex waits that are no lock waits (condition variables,
// semaphores, the rest) are left out and counted.
//
// The user side is five calls: prepare, start, poll (as often as samples
// should be drained), stop, read. Root, or CAP_BPF + CAP_PERFMON.
//
// Chains into the kernel: given the kernel recorder's contention state
// (Options::kernel, from probe::Probe::contention_state_fds(), the Probe
// attached first), a waiter
// whose mutex has a known owner looks, as it goes to sleep, whether that
// owner is itself waiting for a kernel lock; UserLock::kernel_chains holds
// what it found. Without them the chain part is absent (Recording::chains).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/model.h"
#include "probe/contention_state_fds.h"
#include "identity/user_classify.h"
#include "pipeline/user_recording.h"

struct userlock_bpf;

namespace lockscope::userlock {

struct Options {
    std::vector<pid_t> tgids;            // the processes whose waits are recorded
    uint32_t sample_one_in = 16;         // after each address's first wait, 1 in this many
    uint32_t max_samples_per_sec = 200;  // then at most this many stacks a second, over all targets
    bool follow_children = false;        // the processes the targets create (and theirs) are targets too
    // Every process on the machine but the caller's own (tgids and
    // follow_children then say nothing); the maps are sized for it.
    bool all_processes = false;
    // What the kernel-lock probe shares (probe::Probe::contention_state_fds()):
    // its task_state and cpu_states maps, both or neither (-1, no chains),
    // and its ring buffer of kernel-lock waiters' user stacks, drained and
    // unwound with the user locks' samples into Recording::kernel_user_stacks
    // (-1: none). The Recorder keeps its own references; the caller keeps its fds.
    probe::ContentionStateFds kernel;
    // Every finished wait, one by one (record --trace), through a ring
    // buffer of this many bytes (a power of two, page-aligned).
    bool trace_waits = false;
    uint32_t trace_buffer_bytes = 16u << 20;
};

class Recorder {
public:
    // Opens and loads the BPF program and fills its target set. Throws
    // lockscope::Error with the reason and a remedy.
    static Recorder prepare(const Options& options);

    Recorder(Recorder&& other) noexcept;
    Recorder& operator=(Recorder&& other) noexcept;
    Recorder(const Recorder&) = delete;
    Recorder& operator=(const Recorder&) = delete;
    ~Recorder();

    void start();              // attaches to the syscall tracepoints
    int poll(int timeout_ms);  // drains and unwinds samples; returns how many
    void stop();               // detaches; read() still works
    // With Options::trace_waits: the waits that finished since the last
    // call, as poll() received them, each as an Episode with
    // kFutexWaitFlag (its run not set); whether it was a lock wait is known
    // from its word (Recording::lock_words: tgid, lock_address).
    std::vector<Episode> take_waits();
    Recording read();  // classifies and names; needs the targets still running

    // Waits being timed now (threads asleep in a futex).
    std::size_t in_flight() const;

    // Its BPF programs attached (sys_enter, sys_exit, sched_switch,
    // sched_waking, and with follow_children the fork and exit ones), for
    // their run-time stats.
    std::vector<int> prog_fds() const;

    // Reads the symbol tables and unwind tables of tgid's binaries now and
    // keeps them, so that its samples are still unwound, and read() still
    // names its global locks, after it has exited (a zombie has no maps).
    // Call again when its binaries change (exec, dlopen).
    void read_names(pid_t tgid);
    // The processes recorded now: those of Options::tgids and, with
    // follow_children, the living processes they created.
    std::vector<pid_t> targets() const;
    // The processes whose samples poll() received since the last call: they
    // run now (a waiter of theirs just woke), so their maps can be read.
    std::set<pid_t> take_sampled();

    struct State;

private:
    explicit Recorder(std::unique_ptr<State> state) noexcept;
    std::unique_ptr<State> state_;
};

}  // namespace lockscope::userlock
