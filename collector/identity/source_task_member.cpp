// Name source `task_member`: the waiting task's own well-known member the
// lock is (bpf/identity.h's task_member(): its mm's mmap_lock, its
// sighand's siglock, ...).
#include "identity/ladder.h"
#include "lockscope_abi.h"

#include <utility>

namespace lockscope {

std::string task_member_class(uint32_t task_member)
{
    // bpf/identity.h's members of a task, and the classes of their locks.
    static constexpr std::pair<uint32_t, const char*> kClasses[] = {
        {LS_TASK_MMAP_LOCK, "mm_struct.mmap_lock"},
        {LS_TASK_SIGLOCK, "sighand_struct.siglock"},
        {LS_TASK_CRED_GUARD, "signal_struct.cred_guard_mutex"},
        {LS_TASK_EXEC_UPDATE, "signal_struct.exec_update_lock"},
        {LS_TASK_FILE_LOCK, "files_struct.file_lock"},
        {LS_TASK_FS_LOCK, "fs_struct.seq.lock"},
        {LS_TASK_RENAME, "super_block.s_vfs_rename_mutex"},
    };
    for (const auto& [member, cls] : kClasses)
        if (member == task_member)
            return cls;
    return {};
}

namespace identity {

bool source_task_member(const LockEvidence& e, LockIdentity& out)
{
    std::string cls = task_member_class(e.raw.task_member);
    if (cls.empty())
        return false;
    out.name = std::move(cls);
    out.source = NameSource::Task;
    if (e.raw.task_member == LS_TASK_MMAP_LOCK && e.raw.tgid)
        out.instance = "mm of process " + std::to_string(e.raw.tgid);
    return true;
}

}  // namespace identity
}  // namespace lockscope
