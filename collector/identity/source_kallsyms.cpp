// Name source `kallsyms`: a global the kernel's data symbols name
// (rtnl_mutex), where /proc/kallsyms lists them.
#include "identity/ladder.h"

namespace lockscope::identity {

bool source_kallsyms(const LockEvidence& e, LockIdentity& out)
{
    auto global = e.syms.global_object(e.address);
    if (!global)
        return false;
    out.name = *global;
    out.source = NameSource::Global;
    return true;
}

}  // namespace lockscope::identity
