#include "core/analysis/lock_vocabulary.h"

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
    if (name == "pipe->mutex")
        return "pipe_inode_info.mutex";
    if (name == "pipe->mutex.wait_lock")
        return "pipe_inode_info.mutex.wait_lock";
    if (name == "i_rwsem")
        return "inode.i_rwsem";
    if (name == "i_rwsem.wait_lock")
        return "inode.i_rwsem.wait_lock";
    if (name == "mmap_lock")
        return "mm_struct.mmap_lock";
    return name;
}

}  // namespace lockscope
