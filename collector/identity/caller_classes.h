// The caller table: classes recognisable from the waiting function (a few
// common, well-known ones), named as kernel data names them. Kernel data
// checks its evidence against it; the `caller` source names by it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/host/symbols.h"

namespace lockscope::identity {

// The class the caller suggests for a lock of `kind` ("" if none). A
// sleeping lock's wait_lock (a spinlock taken in mutex or rwsem code) is
// named after its lock: "pipe_inode_info.mutex.wait_lock", else
// "mutex@caller.wait_lock".
std::string caller_class(const KernelSymbols& syms, const std::string& kind, const std::string& caller,
                         const std::vector<uint64_t>& frames);

}  // namespace lockscope::identity
