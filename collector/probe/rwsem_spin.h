// The rwsem writer's optimistic spin, observed with fentry/fexit where the
// kernel allows it (bpf/rwsem_spin.bpf.c). Optional: where it is refused
// or the kernel has no traceable spin function, it says why and the
// recording goes on without it.
#pragma once

#include <memory>
#include <string>

#include "pipeline/snapshot.h"

struct rwsem_spin_bpf;

namespace lockscope::probe {

class RwsemSpin {
public:
    // Probes the kernel's BTF, loads and attaches. Never throws: on failure
    // the object is inactive and status() says why.
    static std::unique_ptr<RwsemSpin> attach();

    RwsemSpin(const RwsemSpin&) = delete;
    RwsemSpin& operator=(const RwsemSpin&) = delete;
    ~RwsemSpin();

    bool active() const { return skel_ != nullptr; }
    // "on (fentry/fexit rwsem_optimistic_spin)", "unavailable (fentry refused by this kernel)", ...
    const std::string& status() const { return status_; }

    // Adds the cumulative spin attempts and failures of each rwsem to its
    // WRITE row in `snapshot` (creating the row for a lock whose writers
    // always won their spin and so never queued).
    void merge_into(RawSnapshot& snapshot) const;

    // Stops counting; what was counted stays readable.
    void detach();

private:
    RwsemSpin() = default;
    rwsem_spin_bpf* skel_ = nullptr;
    std::string status_;
};

// The line `lockscope info` and `record` print: "rwsem spin observation: <status>".
// Loads and unloads the programs to find out (needs root).
std::string rwsem_spin_probe_status();

}  // namespace lockscope::probe
