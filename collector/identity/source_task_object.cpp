// Name source `task_object`: an object the waiting task reached in BPF
// (bpf/identity.h), whose type the reach says: a pipe in its fd table, its
// process's private futex hash. BTF says which member the lock is.
#include "identity/kernel_data.h"
#include "identity/ladder.h"
#include "lockscope_abi.h"

namespace lockscope::identity {

bool source_task_object(const LockEvidence& e, LockIdentity& r)
{
    if (!e.data || !e.family || !e.data->sources().types || !e.raw.object)
        return false;
    const KernelData::Sources& sources = e.data->sources();
    const uint64_t address = e.address;
    const LockFamily family = *e.family;
    const RawIdentity& id = e.raw;
    const char* type_name = id.task_member == LS_TASK_PIPE         ? "pipe_inode_info"
                            : id.task_member == LS_TASK_FUTEX_HASH ? "futex_private_hash"
                                                                   : nullptr;
    const auto type = type_name ? sources.types->named_type(type_name) : std::nullopt;
    if (!type || !id.object || address < id.object)
        return false;
    const uint64_t off = address - id.object;
    auto p = sources.types->lock_at(*type, off, family);
    if (!p)
        return false;
    r.name = p->class_name;
    r.source = NameSource::Task;
    r.detail = std::string(id.task_member == LS_TASK_PIPE ? "a pipe the waiter has open (its fd table)"
                                                          : "its process's private futex hash (mm->futex_phash)") +
               ": struct " + type_name + " +" + hex(off) + (p->path.empty() ? "" : " (" + p->path + ")") +
               (id.cache_name.empty() ? "" : ", in " + id.cache_name);
    r.instance = instance_of(r.name, id);
    if (id.task_member == LS_TASK_FUTEX_HASH)
        r.instance += ", " + p->path.substr(0, p->path.find('.'));  // its bucket: "queues[14]"
    return true;
}

}  // namespace lockscope::identity
