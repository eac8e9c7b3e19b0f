// Lock identity from kernel data (core's DataNamer), for the recorder:
// the slab object and member a lock is (bpf_get_kmem_cache + BTF), a global
// from System.map, a per-CPU structure (BTF's .data..percpu), and whether an
// unnamed lock lies in the kernel image's data. The current task's members
// and the caller table are core's (lock_naming.h).
#pragma once

#include <map>
#include <memory>
#include <tuple>
#include <string>
#include <vector>

#include "core/analysis/lock_naming.h"
#include "core/host/symbols.h"
#include "identity/kernel_image.h"
#include "identity/kernel_types.h"
#include "identity/slab_caches.h"

namespace lockscope::identity {

class KernelDataNamer : public DataNamer {
public:
    struct Sources {
        std::shared_ptr<const KernelTypes> types;  // null without BTF
        SlabCaches slabs;
        KernelImage image;
        std::vector<uint64_t> percpu_bases;  // per CPU: the address of its .data..percpu copy
        bool slab_lookup = false;            // the BPF side asks bpf_get_kmem_cache
        uint64_t page_size = 4096;
        std::string global_status;  // how globals are named, for the summary
    };

    // Everything the running kernel offers. `runqueues` holds, per CPU, the
    // address of its `runqueues` (read by BPF); problems go to `warnings`.
    static std::shared_ptr<KernelDataNamer> for_running_kernel(const KernelSymbols& syms,
                                                               const std::vector<uint64_t>& runqueues, bool slab_lookup,
                                                               std::vector<std::string>& warnings);

    explicit KernelDataNamer(Sources sources) : s_(std::move(sources)) {}

    Result name(uint64_t address, uint32_t flags, const RawIdentity& identity, const std::string& caller,
                const std::string& caller_class) const override;

    // One line per source and whether it is available here (session metadata).
    std::string summary() const;

private:
    bool from_slab(uint64_t address, LockFamily family, const std::string& kind, const RawIdentity& id,
                   const std::string& caller, const std::string& caller_class, Result& r) const;
    bool from_generic_cache(const std::vector<uint64_t>& offsets, LockFamily family, const std::string& kind,
                            const RawIdentity& id, const std::string& caller, const std::string& caller_class,
                            Result& r) const;
    bool from_percpu(uint64_t address, LockFamily family, Result& r) const;
    bool from_task_object(uint64_t address, LockFamily family, const RawIdentity& id, Result& r) const;
    std::vector<uint64_t> object_offsets(uint64_t address, const RawIdentity& id) const;

    Sources s_;
    // Candidates per (generic cache, offset, family): a BTF scan each.
    mutable std::map<std::tuple<std::string, uint64_t, int>, std::vector<MemberPath>> generic_cache_;
};

}  // namespace lockscope::identity
