#include "identity/kernel_data.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "lockscope_abi.h"

namespace lockscope::identity {
namespace {

// The kernel's dev_t: 12 bits of major above 20 bits of minor.
std::string device(uint32_t dev)
{
    return std::to_string(dev >> 20) + ":" + std::to_string(dev & 0xfffff);
}

}  // namespace

std::string hex(uint64_t v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)v);
    return buf;
}

std::string instance_of(const std::string& cls, const RawIdentity& id)
{
    if (cls == "inode.i_rwsem" && (id.sources & LS_IDENTITY_INODE_READ) && id.inode_ino) {
        std::string s = "inode " + std::to_string(id.inode_ino);
        if (!id.fs_type.empty())
            s += " on " + id.fs_type + " (" + device(id.inode_dev) + ")";
        if (!id.dentry_name.empty())
            s += " '" + id.dentry_name + "'";
        return s;
    }
    if (id.task_member == LS_TASK_PIPE && id.inode_ino)
        return "pipe:[" + std::to_string(id.inode_ino) + "]";
    if (id.task_member == LS_TASK_FUTEX_HASH && id.tgid)
        return "futex hash of process " + std::to_string(id.tgid);
    if (cls == "mm_struct.mmap_lock" && id.task_member == LS_TASK_MMAP_LOCK && id.tgid)
        return "mm of process " + std::to_string(id.tgid);
    return {};
}

std::shared_ptr<KernelData> KernelData::for_running_kernel(const KernelSymbols& syms,
                                                           const std::vector<uint64_t>& runqueues, bool slab_lookup,
                                                           std::vector<std::string>& warnings)
{
    Sources s;
    std::string why;
    s.types = KernelTypes::load_vmlinux(&why);
    if (!s.types)
        warnings.push_back("lock names from slab objects and per-CPU data are unavailable: " + why);
    s.slabs = SlabCaches::load();
    s.image = KernelImage::load(syms, warnings);
    s.slab_lookup = slab_lookup && s.types;
    s.page_size = uint64_t(sysconf(_SC_PAGESIZE));
    const KernelTypes::PercpuVar* rq = s.types ? s.types->percpu_var("runqueues") : nullptr;
    for (uint64_t a : runqueues)
        s.percpu_bases.push_back(rq && a ? a - rq->offset : 0);
    s.global_status = syms.has_data_symbols() ? "kallsyms data symbols"
                      : s.image.has_symbols()
                          ? s.image.system_map_status()
                          : "unavailable (no data symbols in kallsyms, " + s.image.system_map_status() + ")";
    return std::make_shared<KernelData>(std::move(s));
}

std::string KernelData::summary() const
{
    std::string out;
    out += std::string("slab: ") + (s_.slab_lookup ? "bpf_get_kmem_cache + BTF" : "unavailable (needs 6.13+ and BTF)");
    if (s_.slab_lookup && !s_.slabs.available())
        out += " (no /sys/kernel/slab: merged caches unknown)";
    out += "; global: " + s_.global_status;
    out += "; percpu: ";
    size_t cpus = std::count_if(s_.percpu_bases.begin(), s_.percpu_bases.end(), [](uint64_t b) { return b != 0; });
    out += s_.types && cpus ? "BTF .data..percpu, " + std::to_string(cpus) + " CPUs" : "unavailable";
    out += "; task: current task's members; kernel-data: ";
    out += s_.image.has_ranges() ? "/proc/iomem" : "unknown";
    return out;
}

const std::vector<MemberPath>& KernelData::generic_candidates(const std::string& cache, uint64_t below, uint64_t size,
                                                              uint64_t offset, LockFamily family) const
{
    const auto key = std::make_tuple(cache, offset, int(family));
    auto cached = generic_cache_.find(key);
    if (cached == generic_cache_.end())
        cached = generic_cache_.emplace(key, s_.types->types_with_lock_at(below, size, offset, family)).first;
    return cached->second;
}

}  // namespace lockscope::identity
