// An independent observer of the holder split (holder_observer.bpf.c): the
// off-CPU time of the threads that hold a lock, while they held it, inside
// the waits of the threads of their process queued on it.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>

struct holder_observer_bpf;

namespace lockscope::test {

struct ObservedHolder {
    uint64_t lock = 0;         // the lock found (its owner word named the holder); 0: none
    uint64_t runnable_ns = 0;  // the waiters' wait while a holder was runnable, holding it
    uint64_t asleep_ns = 0;    // ... asleep, holding it
    uint64_t waits = 0;        // queued waits on it that ended
};

class HolderObserver {
public:
    // Attaches for the threads of process `tgid`, whose holders will hold a
    // mutex (or an rwsem as a writer, `rwsem`); mounts tracefs if it must.
    // Throws std::runtime_error when it cannot attach.
    HolderObserver(pid_t tgid, bool rwsem);
    ~HolderObserver();
    HolderObserver(const HolderObserver&) = delete;
    HolderObserver& operator=(const HolderObserver&) = delete;

    // One more holder thread (up to 8), before it takes the lock.
    void follow(pid_t holder_tid);
    ObservedHolder read() const;

private:
    holder_observer_bpf* skel_ = nullptr;
    std::atomic<unsigned> followed_{0};
};

}  // namespace lockscope::test
