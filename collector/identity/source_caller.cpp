// Name source `caller`, and the caller table every source may check against.
#include <array>
#include <string_view>

#include "identity/caller_classes.h"
#include "identity/ladder.h"

namespace lockscope::identity {
namespace {

// PREEMPT_RT's mutex is an rtmutex and its rwsem an rt-rwlock: the class
// stays the same.
std::string class_from_caller(const std::string& kind, std::string_view caller)
{
    const bool mutex = kind == "mutex" || kind == "rtmutex";
    const bool rwsem = kind == "rwsem" || kind == "rt-rwlock";
    if (mutex && (caller.starts_with("pipe_") || caller.starts_with("anon_pipe_") || caller == "__pipe_lock"))
        return "pipe_inode_info.mutex";
    if (rwsem) {
        static constexpr std::array kInodeLockers = {
            "do_unlinkat",
            "filename_create",
            "do_rmdir",
            "open_last_lookups",
            "lookup_slow",
            "__lookup_slow",
            "do_renameat2",
            "lock_rename",
            "chmod_common",
            "chown_common",
            "do_truncate",
            "iterate_dir",
            "vfs_rmdir",
            "vfs_unlink",
            "start_dirop",
            "generic_file_write_iter",
            "ext4_buffered_write_iter",
            "shmem_file_write_iter",
            "simple_recursive_removal",
            "path_openat",
            "do_mknodat",
            "do_mkdirat",
            "do_symlinkat",
            "do_linkat",
            "start_creating",
            "start_removing",
            "__start_dirop",
            "lookup_open",
        };
        for (std::string_view fn : kInodeLockers)
            if (caller == fn)
                return "inode.i_rwsem";
    }
    return {};
}

// A sleeping lock's wait_lock: the function that took the spinlock (the
// first frame past tracing and spinlock code) is mutex or rwsem code.
std::string wait_lock_class(const KernelSymbols& syms, const std::vector<uint64_t>& frames, const std::string& caller)
{
    for (uint64_t ip : frames) {
        const std::string fn = syms.function_name(ip);
        if (fn.empty() || fn.starts_with("bpf_") || fn.starts_with("__bpf_") || fn.starts_with("_raw_spin") ||
            fn.starts_with("queued_spin") || fn.starts_with("__pv_queued") || fn.starts_with("native_queued") ||
            fn.starts_with("do_raw_spin"))
            continue;
        const char* outer = fn.starts_with("__mutex_") || fn.starts_with("mutex_")  ? "mutex"
                            : fn.starts_with("rwsem_") || fn.starts_with("__rwsem") ? "rwsem"
                                                                                    : nullptr;
        if (!outer)
            return {};
        const std::string cls = class_from_caller(outer, caller);
        return (cls.empty() ? std::string(outer) + "@" + (caller.empty() ? "unknown" : caller) : cls) + ".wait_lock";
    }
    return {};
}

}  // namespace

std::string caller_class(const KernelSymbols& syms, const std::string& kind, const std::string& caller,
                         const std::vector<uint64_t>& frames)
{
    // PREEMPT_RT's spinlock_t is rtmutex-based too: its waits pass through
    // rtlock_slowlock, and are no mutex of the caller's class.
    std::string class_kind = kind;
    if (class_kind == "rtmutex")
        for (uint64_t ip : frames) {
            const std::string fn = syms.function_name(ip);
            if (fn.starts_with("rtlock_") || fn.starts_with("rt_spin_lock"))
                class_kind = "spinlock";
        }
    std::string cls = class_from_caller(class_kind, caller);
    if (cls.empty() && kind == "spinlock")
        cls = wait_lock_class(syms, frames, caller);
    return cls;
}

bool source_caller(const LockEvidence& e, LockIdentity& out)
{
    if (e.caller_class.empty())
        return false;
    out.name = e.caller_class;
    out.source = NameSource::Caller;
    return true;
}

}  // namespace lockscope::identity
