// Lock identity across machines and kernels: kinds from the tracepoint
// flags, and names from kernel data first (the slab object and member a lock
// is, a global symbol, a per-CPU structure, the current task's well-known
// members), then from the caller function — never from an address.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/host/symbols.h"
#include "core/raw.h"

namespace lockscope {

struct LockKindInfo {
    std::string
        kind;  // mutex, rwsem, spinlock, rwlock, percpu-rwsem, rtmutex, rt-rwlock, semaphore, user-mutex, user-rwsem
    std::string mode;  // read, write or ""
};
LockKindInfo lock_kind(uint32_t flags);

// Where a lock's name came from, most certain first. The first four name
// it from kernel data; kernel-data is a lock in the kernel image's own data
// that the kernel gives no way to name (no data symbols), named by caller.
enum class NameSource { Slab, Global, Percpu, Task, KernelData, Caller, Unknown };
const char* name_source_name(NameSource source);  // "slab", "global", "percpu", "task", "kernel-data", ...
bool named_from_data(std::string_view source);    // slab, global, percpu or task

struct Naming {
    std::string name;
    std::string caller;  // first function outside the lock implementation, "" if unknown
    NameSource source = NameSource::Unknown;
    std::string detail;    // the evidence behind the name, for people
    std::string instance;  // which object, where it is known ("inode 12 on ext4 (8:1) 'dir'")
};

// Names locks from kernel data. collector/identity implements it with the
// running kernel's BTF, slab caches and System.map; core only asks.
class DataNamer {
public:
    struct Result {
        std::string name;  // "" when no data source names the lock
        NameSource source = NameSource::Unknown;
        std::string detail;  // evidence, also when it names nothing ("kmalloc-cg-192 +0x0")
        std::string instance;
        bool kernel_image = false;  // the lock lies in the kernel image's data or bss
    };
    virtual ~DataNamer() = default;
    // `caller` is the waiting function ("" if unknown) and `caller_class` the
    // class the caller table suggests ("" if none), so that slab evidence can
    // be checked against them.
    virtual Result name(uint64_t address, uint32_t flags, const RawIdentity& identity, const std::string& caller,
                        const std::string& caller_class) const = 0;
};

// `frames` are the sampled stack's instruction pointers, innermost first
// (empty when no stack was captured); `identity` what the kernel said when
// the lock's row was created; `data` may be null (no kernel data sources).
Naming name_lock(const KernelSymbols& syms, uint64_t address, uint32_t flags, const RawIdentity& identity,
                 const std::vector<uint64_t>& frames, const DataNamer* data = nullptr);

// The class of a task member (LS_TASK_*): "mm_struct.mmap_lock", ...; "" for none.
std::string task_member_class(uint32_t task_member);

// Names of classes before lock identity ("pipe->mutex", "i_rwsem",
// "mmap_lock") as they are named now, so that old sessions pair with new
// ones in a diff; other names unchanged.
std::string current_class_name(const std::string& name);

// The first frame that is not lock, scheduler, wake-up or tracing plumbing.
std::string caller_function(const KernelSymbols& syms, const std::vector<uint64_t>& frames);

// The same for a stored stack ("function+0xoff", innermost first), whose
// addresses are gone: lock and scheduler code is recognised by name.
std::string caller_function(const std::vector<std::string>& frames);

}  // namespace lockscope
