// Name source `user_lock`: a user-space lock (reflock's USDT probes) is
// named kind@caller; no kernel data knows it.
#include "identity/ladder.h"

namespace lockscope::identity {

bool source_user_lock(const LockEvidence& e, LockIdentity& out)
{
    if (!e.kind.kind.starts_with("user-"))
        return false;
    out.name = e.by_caller;
    out.source = NameSource::Caller;
    return true;
}

}  // namespace lockscope::identity
