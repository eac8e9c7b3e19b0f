#include "core/analysis/lock_vocabulary.h"

#include <utility>

#include "core/session_vocabulary.h"
#include "lockscope_abi.h"

namespace lockscope {

LockKindInfo lock_kind(uint32_t flags)
{
    LockKindInfo k;
    if (flags & LCB_F_READ)
        k.mode = "read";
    else if (flags & LCB_F_WRITE)
        k.mode = "write";
    const bool rw = flags & (LCB_F_READ | LCB_F_WRITE);
    if (flags & LS_F_USER)
        k.kind = (flags & LCB_F_MUTEX) ? kKindUserMutex : kKindUserRwsem;
    else if (flags & LCB_F_RT)
        k.kind = rw ? "rt-rwlock" : "rtmutex";
    else if (flags & LCB_F_PERCPU)
        k.kind = "percpu-rwsem";
    else if (flags & LCB_F_MUTEX)
        k.kind = "mutex";
    else if (flags & LCB_F_SPIN)
        k.kind = rw ? "rwlock" : "spinlock";
    else if (rw)
        k.kind = "rwsem";
    else
        k.kind = "semaphore";
    return k;
}

bool named_from_data(std::string_view source)
{
    return source == "slab" || source == "global" || source == "percpu" || source == "task";
}

std::string current_class_name(const std::string& name)
{
    // An older lockscope's name, and what the class is called now.
    static constexpr std::pair<std::string_view, const char*> kRenamed[] = {
        {"pipe->mutex", "pipe_inode_info.mutex"},
        {"pipe->mutex.wait_lock", "pipe_inode_info.mutex.wait_lock"},
        {"i_rwsem", "inode.i_rwsem"},
        {"i_rwsem.wait_lock", "inode.i_rwsem.wait_lock"},
        {"mmap_lock", "mm_struct.mmap_lock"},
    };
    for (const auto& [old_name, current] : kRenamed)
        if (name == old_name)
            return current;
    return name;
}

}  // namespace lockscope
