// An independent observer for the root tests: a separate minimal BPF program
// on the classic lock:contention_* tracepoints, counting raw events of one
// process (or of its process tree, found by walking each task's ancestors)
// with no episode logic at all.
#pragma once

#include <sys/types.h>

#include <cstdint>

struct observer_bpf;

namespace lockscope::test {

// The wait of the tasks' outermost locks of one class, split by what the
// task was doing: from the tracepoints and sched_switch alone.
struct ObservedWait {
    uint64_t wait_ns = 0;      // end - first begin
    uint64_t spin_ns = 0;      // in spin phases (begins with SPIN), on CPU or not
    uint64_t spin_off_ns = 0;  // of that, switched out
    uint64_t asleep_ns = 0;    // switched out blocked, until woken
    uint64_t runnable_ns = 0;  // switched out runnable (preempted, yielding), or woken and not yet running
    uint64_t spin_yields = 0;  // switch-outs in a spin phase, runnable
    // Of asleep + runnable: sleeps woken while their sleeper was still on its
    // CPU, going to sleep. Whether such a sleep was already off its run queue
    // when woken (then runnable from its switch-out) depends on the instant
    // the task's state is read: two programs reading it apart may split it
    // differently.
    uint64_t raced_ns = 0;
};

struct Observed {
    uint64_t begin_spin = 0, begin_nospin = 0, mutex_spin = 0, mutex_queued = 0, ends = 0;
    ObservedWait mutex, rwsem, other;  // by the outermost lock's class
};

class Observer {
public:
    // Mounts tracefs if it must (classic tracepoints are attached by their
    // tracefs ids); throws std::runtime_error when it cannot attach.
    enum class Scope { Process, Tree, Descendants };
    explicit Observer(pid_t tgid, Scope scope = Scope::Process);
    ~Observer();
    Observer(const Observer&) = delete;
    Observer& operator=(const Observer&) = delete;
    Observed read() const;

private:
    observer_bpf* skel_ = nullptr;
};

}  // namespace lockscope::test
