// Name source `percpu`: a lock in one CPU's copy of a per-CPU variable
// (BTF's .data..percpu; each CPU's area from its `runqueues`).
#include "identity/kernel_data.h"
#include "identity/ladder.h"

namespace lockscope::identity {

bool source_percpu(const LockEvidence& e, LockIdentity& r)
{
    if (!e.data || !e.family || !e.data->sources().types)
        return false;
    const KernelData::Sources& sources = e.data->sources();
    const uint64_t address = e.address;
    const LockFamily family = *e.family;
    const uint64_t size = sources.types->percpu_size();
    for (size_t cpu = 0; cpu < sources.percpu_bases.size(); cpu++) {
        const uint64_t base = sources.percpu_bases[cpu];
        if (!base || address < base || address - base >= size)
            continue;
        const uint64_t off = address - base;
        const KernelTypes::PercpuVar* var = sources.types->percpu_var_at(off);
        if (!var)
            return false;
        auto p = sources.types->lock_at(var->type_id, off - var->offset, family);
        if (!p)
            return false;
        // A struct names the class ("rq.__lock"); a lock variable itself, or
        // an array of them, by the variable's name.
        r.name = p->class_name.empty() || p->class_name[0] == '[' ? var->name + p->class_name : p->class_name;
        r.source = NameSource::Percpu;
        r.detail =
            "per-CPU " + var->name + " +" + hex(off - var->offset) + (p->path.empty() ? "" : " (" + p->path + ")");
        r.instance = "CPU " + std::to_string(cpu);
        return true;
    }
    return false;
}

}  // namespace lockscope::identity
