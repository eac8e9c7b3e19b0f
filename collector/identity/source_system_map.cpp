// Name source `system_map`: a global of the kernel image, from the
// System.map that matches the running kernel (kallsyms may list no data).
#include "identity/kernel_data.h"
#include "identity/ladder.h"

namespace lockscope::identity {

bool source_system_map(const LockEvidence& e, LockIdentity& out)
{
    if (!e.data || !e.family)
        return false;
    auto symbol = e.data->sources().image.symbol(e.address);
    if (!symbol)
        return false;
    out.name = *symbol;
    out.source = NameSource::Global;
    out.detail = "System.map";
    return true;
}

}  // namespace lockscope::identity
