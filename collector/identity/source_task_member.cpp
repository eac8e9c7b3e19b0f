// Name source `task_member`: the waiting task's own well-known member the
// lock is (bpf/identity.h's task_member(): its mm's mmap_lock, its
// sighand's siglock, ...).
#include "identity/ladder.h"
#include "lockscope_abi.h"

namespace lockscope {

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
