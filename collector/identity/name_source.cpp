#include "identity/name_source.h"
#include "core/enum_names.h"

namespace lockscope {

const char* name_source_name(NameSource source)
{
    static constexpr std::array kNames{"slab", "global", "percpu", "task", "kernel-data", "caller", "unknown"};
    return enum_name<NameSource::Unknown>(kNames, source);
}

}  // namespace lockscope
