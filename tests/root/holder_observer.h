// An independent observer of the holder split (holder_observer.bpf.c): one
// holder thread's off-CPU time while it held the lock that the other
// threads of its process queued on, inside their waits.
#pragma once

#include <sys/types.h>

#include <cstdint>

struct holder_observer_bpf;

namespace lockscope::test {

struct ObservedHolder {
    uint64_t lock = 0;         // the lock found (its owner word named the holder); 0: none
    uint64_t runnable_ns = 0;  // the waiters' wait while the holder was runnable, holding it
    uint64_t asleep_ns = 0;    // ... asleep, holding it
    uint64_t waits = 0;        // queued waits on it that ended
};

class HolderObserver {
public:
    // Attaches for the threads of process `tgid`, whose holder will hold a
    // mutex (or an rwsem as a writer, `rwsem`); mounts tracefs if it must.
    // Throws std::runtime_error when it cannot attach.
    HolderObserver(pid_t tgid, bool rwsem);
    ~HolderObserver();
    HolderObserver(const HolderObserver&) = delete;
    HolderObserver& operator=(const HolderObserver&) = delete;

    void follow(pid_t holder_tid);  // before it takes the lock
    ObservedHolder read() const;

private:
    holder_observer_bpf* skel_ = nullptr;
};

}  // namespace lockscope::test
