#include "core/analysis/lock_naming.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "core/session_vocabulary.h"
#include "lockscope_abi.h"

namespace lockscope {
namespace {

// Lock and wake-up plumbing that is not in .spinlock.text/.sched.text.
constexpr std::array kPlumbingPrefixes = {
    "bpf_",        "__bpf_",      "__traceiter_", "trace_",       "_raw_",          "queued_",        "native_queued_",
    "__pv_queued", "pv_",         "osq_",         "mutex_",       "__mutex_",       "rwsem_",         "__rwsem_",
    "down_",       "__down_",     "up_",          "__up_",        "wake_up_",       "try_to_wake_up", "__wake_up",
    "rt_mutex_",   "__rt_mutex_", "rtlock_",      "percpu_down_", "__percpu_down_", "percpu_up_",
};

bool is_plumbing(std::string_view fn)
{
    for (std::string_view p : kPlumbingPrefixes)
        if (fn.substr(0, p.size()) == p)
            return true;
    return false;
}

bool starts_with(std::string_view s, std::string_view p)
{
    return s.substr(0, p.size()) == p;
}

// Classes recognisable from the caller (a few common, well-known ones),
// named as kernel data names them. PREEMPT_RT's mutex is an rtmutex and its
// rwsem an rt-rwlock: the class stays the same.
std::string class_from_caller(const std::string& kind, std::string_view caller)
{
    const bool mutex = kind == "mutex" || kind == "rtmutex";
    const bool rwsem = kind == "rwsem" || kind == "rt-rwlock";
    if (mutex && (starts_with(caller, "pipe_") || starts_with(caller, "anon_pipe_") || caller == "__pipe_lock"))
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
        if (fn.empty() || starts_with(fn, "bpf_") || starts_with(fn, "__bpf_") || starts_with(fn, "_raw_spin") ||
            starts_with(fn, "queued_spin") || starts_with(fn, "__pv_queued") || starts_with(fn, "native_queued") ||
            starts_with(fn, "do_raw_spin"))
            continue;
        const char* outer = starts_with(fn, "__mutex_") || starts_with(fn, "mutex_")  ? "mutex"
                            : starts_with(fn, "rwsem_") || starts_with(fn, "__rwsem") ? "rwsem"
                                                                                      : nullptr;
        if (!outer)
            return {};
        const std::string cls = class_from_caller(outer, caller);
        return (cls.empty() ? std::string(outer) + "@" + (caller.empty() ? "unknown" : caller) : cls) + ".wait_lock";
    }
    return {};
}

}  // namespace

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

std::string caller_function(const KernelSymbols& syms, const std::vector<uint64_t>& frames)
{
    for (uint64_t ip : frames) {
        if (syms.in_lock_text(ip))
            continue;
        std::string fn = syms.function_name(ip);
        if (fn.empty() || is_plumbing(fn))
            continue;
        return fn;
    }
    return {};
}

std::string caller_function(const std::vector<std::string>& frames)
{
    // .spinlock.text and .sched.text functions that the plumbing prefixes miss.
    static constexpr std::array kLockText = {"schedule",    "__schedule",     "preempt_schedule",
                                             "io_schedule", "__cond_resched", "_cond_resched"};
    for (const std::string& frame : frames) {
        const std::string_view fn = std::string_view(frame).substr(0, frame.find('+'));
        if (fn.empty() || is_plumbing(fn))
            continue;
        const std::string_view base = fn.substr(0, fn.find('.'));  // "f.constprop.0" is f
        if (std::find(kLockText.begin(), kLockText.end(), base) != kLockText.end() || starts_with(base, "schedule_"))
            continue;
        return std::string(fn);
    }
    return {};
}

const char* name_source_name(NameSource source)
{
    switch (source) {
        case NameSource::Slab:
            return "slab";
        case NameSource::Global:
            return "global";
        case NameSource::Percpu:
            return "percpu";
        case NameSource::Task:
            return "task";
        case NameSource::KernelData:
            return "kernel-data";
        case NameSource::Caller:
            return "caller";
        case NameSource::Unknown:
            break;
    }
    return "unknown";
}

bool named_from_data(std::string_view source)
{
    return source == "slab" || source == "global" || source == "percpu" || source == "task";
}

std::string task_member_class(uint32_t task_member)
{
    switch (task_member) {
        case LS_TASK_MMAP_LOCK:
            return "mm_struct.mmap_lock";
        case LS_TASK_SIGLOCK:
            return "sighand_struct.siglock";
        case LS_TASK_CRED_GUARD:
            return "signal_struct.cred_guard_mutex";
        case LS_TASK_EXEC_UPDATE:
            return "signal_struct.exec_update_lock";
        case LS_TASK_FILE_LOCK:
            return "files_struct.file_lock";
        case LS_TASK_FS_LOCK:
            return "fs_struct.seq.lock";
        case LS_TASK_RENAME:
            return "super_block.s_vfs_rename_mutex";
        default:
            return {};
    }
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

Naming name_lock(const KernelSymbols& syms, uint64_t address, uint32_t flags, const RawIdentity& identity,
                 const std::vector<uint64_t>& frames, const DataNamer* data)
{
    const LockKindInfo k = lock_kind(flags);
    Naming n;
    n.caller = caller_function(syms, frames);
    const std::string by_caller = k.kind + "@" + (n.caller.empty() ? std::string("unknown") : n.caller);
    if (k.kind.rfind("user-", 0) == 0) {
        n.name = by_caller;
        n.source = NameSource::Caller;
        return n;
    }
    // PREEMPT_RT's spinlock_t is rtmutex-based too: its waits pass through
    // rtlock_slowlock, and are no mutex of the caller's class.
    std::string class_kind = k.kind;
    if (class_kind == "rtmutex")
        for (uint64_t ip : frames) {
            const std::string fn = syms.function_name(ip);
            if (starts_with(fn, "rtlock_") || starts_with(fn, "rt_spin_lock"))
                class_kind = "spinlock";
        }
    std::string caller_class = class_from_caller(class_kind, n.caller);
    if (caller_class.empty() && k.kind == "spinlock")
        caller_class = wait_lock_class(syms, frames, n.caller);

    DataNamer::Result from_data;
    if (data)
        from_data = data->name(address, flags, identity, n.caller, caller_class);
    n.detail = from_data.detail;
    n.instance = from_data.instance;
    if (!from_data.name.empty()) {
        n.name = from_data.name;
        n.source = from_data.source;
        return n;
    }
    if (auto global = syms.global_object(address)) {
        n.name = *global;
        n.source = NameSource::Global;
        return n;
    }
    if (std::string cls = task_member_class(identity.task_member); !cls.empty()) {
        n.name = cls;
        n.source = NameSource::Task;
        if (identity.task_member == LS_TASK_MMAP_LOCK && identity.tgid)
            n.instance = "mm of process " + std::to_string(identity.tgid);
        return n;
    }
    if (from_data.kernel_image) {
        n.name = caller_class.empty() ? by_caller : caller_class;
        n.source = NameSource::KernelData;
        return n;
    }
    if (!caller_class.empty()) {
        n.name = caller_class;
        n.source = NameSource::Caller;
        return n;
    }
    n.name = by_caller;
    n.source = NameSource::Unknown;
    return n;
}

}  // namespace lockscope
