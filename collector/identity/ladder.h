// Lock identity across machines and kernels: one ordered ladder of name
// sources (ladder.cpp), from kernel data first (the slab object and member a
// lock is, a global symbol, a per-CPU structure, the current task's
// well-known members), then from the caller function — never from an
// address. identify_lock() is the one entry point; README.md says how to
// add a name source.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/lock_vocabulary.h"
#include "core/host/symbols.h"
#include "identity/evidence.h"
#include "identity/kernel_types.h"
#include "identity/name_source.h"

namespace lockscope {

namespace identity {
class KernelData;
}
using identity::LockFamily;

struct LockIdentity {
    LockKindInfo kind;  // from the tracepoint flags
    std::string name;
    std::string caller;  // first function outside the lock implementation, "" if unknown
    NameSource source = NameSource::Unknown;
    std::string detail;    // the evidence behind the name, for people
    std::string instance;  // which object, where it is known ("inode 12 on ext4 (8:1) 'dir'")
};

// What every name source sees of one lock.
struct LockEvidence {
    const KernelSymbols& syms;
    uint64_t address = 0;
    uint32_t flags = 0;
    const RawIdentity& raw;               // what the kernel said when the lock's row was created
    const std::vector<uint64_t>& frames;  // a sampled waiter stack, innermost first (may be empty)
    LockKindInfo kind;
    std::optional<LockFamily> family;            // for BTF: none for user-space locks
    std::string caller;                          // the waiting function, "" if unknown
    std::string by_caller;                       // "kind@caller": the name when nothing better is known
    std::string caller_class;                    // the class the caller table suggests, "" if none
    const identity::KernelData* data = nullptr;  // the running kernel's data sources; null: none
};

// `frames` are the sampled stack's instruction pointers, innermost first
// (empty when no stack was captured); `raw` what the kernel said when the
// lock's row was created; `data` may be null (no kernel data sources).
LockIdentity identify_lock(const KernelSymbols& syms, uint64_t address, uint32_t flags, const RawIdentity& raw,
                           const std::vector<uint64_t>& frames, const identity::KernelData* data = nullptr);

// The ladder on evidence already gathered (tests give the caller directly).
LockIdentity identify_lock(const LockEvidence& evidence);

// The first frame that is not lock, scheduler, wake-up or tracing plumbing.
std::string caller_function(const KernelSymbols& syms, const std::vector<uint64_t>& frames);

// The class of a task member (LS_TASK_*): "mm_struct.mmap_lock", ...; "" for none.
std::string task_member_class(uint32_t task_member);

}  // namespace lockscope
