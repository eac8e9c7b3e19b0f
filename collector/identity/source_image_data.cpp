// Name source `image_data`: a lock in the kernel image's data or bss that
// nothing above named (no data symbols here): marked kernel-data, and named
// by its caller.
#include "identity/kernel_data.h"
#include "identity/ladder.h"

namespace lockscope::identity {

bool source_image_data(const LockEvidence& e, LockIdentity& out)
{
    if (!e.data || !e.family || !e.data->sources().image.in_data(e.address))
        return false;
    out.name = e.caller_class.empty() ? e.by_caller : e.caller_class;
    out.source = NameSource::KernelData;
    return true;
}

}  // namespace lockscope::identity
