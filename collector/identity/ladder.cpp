#include "identity/ladder.h"

#include "core/analysis/stack_frames.h"
#include "identity/caller_classes.h"

namespace lockscope {
namespace identity {

// The name sources, most certain first; each is one file, source_<name>.cpp,
// and names the lock (true) or leaves it to the next, possibly with its
// evidence in out.detail for people. To add one: README.md.
#define LOCKSCOPE_NAME_SOURCES(X)                                                        \
    X(user_lock)   /* user-space locks: kind@caller, no kernel data to ask */            \
    X(task_object) /* inside an object the waiter reached (its open pipe, futex hash) */ \
    X(slab)        /* the slab object and member (bpf_get_kmem_cache + BTF) */           \
    X(system_map)  /* a global of the kernel image (System.map) */                       \
    X(percpu)      /* a per-CPU variable (BTF's .data..percpu) */                        \
    X(kallsyms)    /* a global kallsyms names (data symbols) */                          \
    X(task_member) /* the current task's well-known member (mm->mmap_lock, ...) */       \
    X(image_data)  /* in the kernel image's data, but unnamed there: by caller */        \
    X(caller)      /* a class the waiting function is known to lock (pipe_read: a pipe) */

#define LOCKSCOPE_X(source) bool source_##source(const LockEvidence& e, LockIdentity& out);
LOCKSCOPE_NAME_SOURCES(LOCKSCOPE_X)
#undef LOCKSCOPE_X

namespace {

using Source = bool (*)(const LockEvidence&, LockIdentity&);
constexpr Source kLadder[] = {
#define LOCKSCOPE_X(source) source_##source,
    LOCKSCOPE_NAME_SOURCES(LOCKSCOPE_X)
#undef LOCKSCOPE_X
};

}  // namespace
}  // namespace identity

std::string caller_function(const KernelSymbols& syms, const std::vector<uint64_t>& frames)
{
    for (uint64_t ip : frames) {
        if (syms.in_lock_text(ip))
            continue;
        std::string fn = syms.function_name(ip);
        if (fn.empty() || is_lock_plumbing(fn))
            continue;
        return fn;
    }
    return {};
}

LockIdentity identify_lock(const LockEvidence& e)
{
    LockIdentity out;
    out.kind = e.kind;
    out.caller = e.caller;
    for (identity::Source source : identity::kLadder)
        if (source(e, out))
            return out;
    out.name = e.by_caller;
    out.source = NameSource::Unknown;
    return out;
}

LockIdentity identify_lock(const KernelSymbols& syms, uint64_t address, uint32_t flags, const RawIdentity& raw,
                           const std::vector<uint64_t>& frames, const identity::KernelData* data)
{
    LockEvidence e{syms, address, flags, raw, frames};
    e.kind = lock_kind(flags);
    e.family = identity::lock_family(e.kind.kind);
    e.caller = caller_function(syms, frames);
    e.by_caller = e.kind.kind + "@" + (e.caller.empty() ? std::string("unknown") : e.caller);
    e.caller_class = identity::caller_class(syms, e.kind.kind, e.caller, frames);
    e.data = data;
    return identify_lock(e);
}

}  // namespace lockscope
