// Where a lock's name came from, most certain first: the session's
// name_source column and the JSON report's `name_source` key.
#pragma once

namespace lockscope {

// The first four name a lock from kernel data; kernel-data is a lock in the
// kernel image's own data that the kernel gives no way to name (no data
// symbols), named by caller.
enum class NameSource { Slab, Global, Percpu, Task, KernelData, Caller, Unknown };

// "slab", "global", "percpu", "task", "kernel-data", "caller", "unknown".
const char* name_source_name(NameSource source);

}  // namespace lockscope
