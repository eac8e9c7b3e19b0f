// An independent observer for the root tests: a separate minimal BPF program
// on the classic lock:contention_* tracepoints, counting raw events of one
// process (or of its process tree, found by walking each task's ancestors)
// with no episode logic at all.
#pragma once

#include <sys/types.h>

#include <cstdint>

struct observer_bpf;

namespace lockscope::test {

struct Observed {
    uint64_t begin_spin = 0, begin_nospin = 0, mutex_spin = 0, mutex_queued = 0, ends = 0;
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
