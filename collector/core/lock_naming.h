// Lock identity across machines and kernels: kinds from the tracepoint
// flags, and names from a global symbol, a known class or the caller
// function — never from an address or an offset.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/symbols.h"

namespace lockscope {

struct LockKindInfo {
    std::string kind;  // mutex, rwsem, spinlock, rwlock, percpu-rwsem, rtmutex, semaphore, user-mutex, user-rwsem
    std::string mode;  // read, write or ""
};
LockKindInfo lock_kind(uint32_t flags);

struct Naming {
    std::string name;
    std::string caller;  // first function outside the lock implementation, "" if unknown
};

// `frames` are the sampled stack's instruction pointers, innermost first
// (empty when no stack was captured); lock_class is the BPF LS_CLASS_*.
Naming name_lock(const KernelSymbols& syms, uint64_t address, uint32_t flags, uint32_t lock_class,
                 const std::vector<uint64_t>& frames);

// The first frame that is not lock, scheduler, wake-up or tracing plumbing.
std::string caller_function(const KernelSymbols& syms, const std::vector<uint64_t>& frames);

// The same for a stored stack ("function+0xoff", innermost first), whose
// addresses are gone: lock and scheduler code is recognised by name.
std::string caller_function(const std::vector<std::string>& frames);

}  // namespace lockscope
