#include "core/lock_key.h"

namespace lockscope {

std::string kind_text(const std::string& kind, const std::string& mode)
{
    return mode.empty() ? kind : kind + "/" + mode;
}

}  // namespace lockscope
