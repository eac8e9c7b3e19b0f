#include "core/lock_naming.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "lockscope_abi.h"

namespace lockscope {
namespace {

// Lock and wake-up plumbing that is not in .spinlock.text/.sched.text.
constexpr std::array kPlumbingPrefixes = {
    "bpf_",      "__bpf_",  "__traceiter_", "trace_",   "_raw_",      "queued_",  "native_queued_",
    "__pv_queued", "pv_",   "osq_",         "mutex_",   "__mutex_",   "rwsem_",   "__rwsem_",
    "down_",     "__down_", "up_",          "__up_",    "wake_up_",   "try_to_wake_up", "__wake_up",
    "rt_mutex_", "__rt_mutex_", "rtlock_",  "percpu_down_", "__percpu_down_", "percpu_up_",
};

bool is_plumbing(std::string_view fn)
{
    for (std::string_view p : kPlumbingPrefixes)
        if (fn.substr(0, p.size()) == p)
            return true;
    return false;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Classes recognisable from the caller (a few common, well-known ones).
std::string class_from_caller(const std::string& kind, std::string_view caller)
{
    if (kind == "mutex" && (starts_with(caller, "pipe_") || starts_with(caller, "anon_pipe_") ||
                            caller == "__pipe_lock"))
        return "pipe->mutex";
    if (kind == "rwsem") {
        static constexpr std::array kInodeLockers = {
            "do_unlinkat", "filename_create", "do_rmdir",       "open_last_lookups", "lookup_slow",
            "__lookup_slow", "do_renameat2", "lock_rename",   "chmod_common",      "chown_common",
            "do_truncate",   "iterate_dir",  "vfs_rmdir",     "vfs_unlink",        "start_dirop",
            "generic_file_write_iter", "ext4_buffered_write_iter", "shmem_file_write_iter",
            "simple_recursive_removal", "path_openat", "do_mknodat", "do_mkdirat", "do_symlinkat",
            "do_linkat", "start_creating", "start_removing", "__start_dirop", "lookup_open",
        };
        for (std::string_view fn : kInodeLockers)
            if (caller == fn)
                return "i_rwsem";
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
        k.kind = (flags & LCB_F_MUTEX) ? "user-mutex" : "user-rwsem";
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
    static constexpr std::array kLockText = {"schedule", "__schedule", "preempt_schedule", "io_schedule",
                                             "__cond_resched", "_cond_resched"};
    for (const std::string& frame : frames) {
        const std::string_view fn = std::string_view(frame).substr(0, frame.find('+'));
        if (fn.empty() || is_plumbing(fn))
            continue;
        const std::string_view base = fn.substr(0, fn.find('.'));  // "f.constprop.0" is f
        if (std::find(kLockText.begin(), kLockText.end(), base) != kLockText.end() ||
            starts_with(base, "schedule_"))
            continue;
        return std::string(fn);
    }
    return {};
}

Naming name_lock(const KernelSymbols& syms, uint64_t address, uint32_t flags, uint32_t lock_class,
                 const std::vector<uint64_t>& frames)
{
    const LockKindInfo k = lock_kind(flags);
    Naming n;
    n.caller = caller_function(syms, frames);
    if (k.kind.rfind("user-", 0) == 0) {
        n.name = k.kind + "@" + (n.caller.empty() ? std::string("unknown") : n.caller);
        return n;
    }
    if (lock_class == LS_CLASS_MMAP_LOCK) {
        n.name = "mmap_lock";
        return n;
    }
    if (auto global = syms.global_object(address)) {
        n.name = *global;
        return n;
    }
    if (std::string cls = class_from_caller(k.kind, n.caller); !cls.empty()) {
        n.name = cls;
        return n;
    }
    if (k.kind == "spinlock") {
        // A sleeping lock's wait_lock: the function that took the spinlock
        // (the first frame past tracing and spinlock code) is mutex or rwsem code.
        for (uint64_t ip : frames) {
            const std::string fn = syms.function_name(ip);
            if (fn.empty() || starts_with(fn, "bpf_") || starts_with(fn, "__bpf_") || starts_with(fn, "_raw_spin") ||
                starts_with(fn, "queued_spin") || starts_with(fn, "__pv_queued") || starts_with(fn, "native_queued") ||
                starts_with(fn, "do_raw_spin"))
                continue;
            const char* outer = starts_with(fn, "__mutex_") || starts_with(fn, "mutex_") ? "mutex"
                                : starts_with(fn, "rwsem_") || starts_with(fn, "__rwsem") ? "rwsem"
                                                                                           : nullptr;
            if (outer) {
                const std::string cls = class_from_caller(outer, n.caller);
                n.name = (cls.empty() ? std::string(outer) + "@" + (n.caller.empty() ? "unknown" : n.caller) : cls) +
                         ".wait_lock";
                return n;
            }
            break;
        }
    }
    n.name = k.kind + "@" + (n.caller.empty() ? std::string("unknown") : n.caller);
    return n;
}

}  // namespace lockscope
