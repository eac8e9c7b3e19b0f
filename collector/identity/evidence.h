// What the kernel said about a lock when its row was created: the BPF
// ls_lock_identity (bpf/identity.h fills it), in plain types. Every name
// source of the ladder (identity/ladder.h) reads its evidence from here.
#pragma once

#include <cstdint>
#include <string>

struct ls_lock_identity;

namespace lockscope {

struct RawIdentity {
    uint32_t sources = 0;  // LS_IDENTITY_*: which lookups ran
    uint64_t cache = 0;    // struct kmem_cache *, 0: not in a slab (or not looked up)
    std::string cache_name;
    uint32_t object_size = 0;
    uint32_t slab_size = 0;  // object plus metadata: the stride within a slab
    uint32_t red_left_pad = 0;
    uint16_t order = 0, min_order = 0;
    uint32_t task_member = 0;  // LS_TASK_*
    uint64_t object = 0;       // LS_TASK_PIPE: the pipe_inode_info the lock lies in
    uint32_t tgid = 0;         // the task that created the row
    uint64_t inode_ino = 0;    // the inode whose i_rwsem (LS_IDENTITY_INODE_READ) or pipe (LS_TASK_PIPE) it is
    uint32_t inode_dev = 0;
    std::string fs_type;
    std::string dentry_name;
};

// A row's identity as the probe reads it from the lock_identity map.
RawIdentity raw_identity(const ls_lock_identity& row);

}  // namespace lockscope
