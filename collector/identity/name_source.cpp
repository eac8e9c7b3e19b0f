#include "identity/name_source.h"

namespace lockscope {

const char* name_source_name(NameSource source)
{
    switch (source) {
        case NameSource::Slab:
            return "slab";
        case NameSource::Global:
            return "global";
        case NameSource::Percpu:
            return "percpu";
        case NameSource::Task:
            return "task";
        case NameSource::KernelData:
            return "kernel-data";
        case NameSource::Caller:
            return "caller";
        case NameSource::Unknown:
            break;
    }
    return "unknown";
}

}  // namespace lockscope
