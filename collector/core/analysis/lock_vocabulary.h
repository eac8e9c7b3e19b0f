// Words a lock row carries that readers of a session interpret: its kind
// (from the tracepoint flags), whether its name came from kernel data, and
// the current names of classes older sessions spelled otherwise. How a lock
// gets its name at record time is collector/identity's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace lockscope {

struct LockKindInfo {
    std::string
        kind;  // mutex, rwsem, spinlock, rwlock, percpu-rwsem, rtmutex, rt-rwlock, semaphore, user-mutex, user-rwsem
    std::string mode;  // read, write or ""
};
LockKindInfo lock_kind(uint32_t flags);

// A stored name_source that names a lock from kernel data: slab, global,
// percpu or task (identity/name_source.h spells them).
bool named_from_data(std::string_view source);

// Names of classes before lock identity ("pipe->mutex", "i_rwsem",
// "mmap_lock") as they are named now, so that old sessions pair with new
// ones in a diff; other names unchanged.
std::string current_class_name(const std::string& name);

}  // namespace lockscope
