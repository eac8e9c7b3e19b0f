#include "identity/evidence.h"

#include <cstring>

#include "lockscope_abi.h"

namespace lockscope {

RawIdentity raw_identity(const ls_lock_identity& id)
{
    auto text = [](const char* s, size_t n) { return std::string(s, strnlen(s, n)); };
    RawIdentity r;
    r.sources = id.sources;
    r.cache = id.cache;
    r.cache_name = text(id.cache_name, sizeof id.cache_name);
    r.object_size = id.object_size;
    r.slab_size = id.slab_size;
    r.red_left_pad = id.red_left_pad;
    r.order = id.order;
    r.min_order = id.min_order;
    r.task_member = id.task_member;
    r.object = id.object;
    r.tgid = id.tgid;
    r.inode_ino = id.inode_ino;
    r.inode_dev = id.inode_dev;
    r.fs_type = text(id.fs_type, sizeof id.fs_type);
    r.dentry_name = text(id.dentry_name, sizeof id.dentry_name);
    return r;
}

}  // namespace lockscope
