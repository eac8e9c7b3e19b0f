// The running kernel's data that lock identity reads (the name sources of
// ladder.cpp that need more than symbols): BTF types, slab caches and their
// merging, the kernel image's System.map and data ranges, and where each
// CPU's per-CPU area lies.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "core/host/symbols.h"
#include "identity/evidence.h"
#include "identity/kernel_image.h"
#include "identity/kernel_types.h"
#include "identity/slab_caches.h"

namespace lockscope::identity {

class KernelData {
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
    static std::shared_ptr<KernelData> for_running_kernel(const KernelSymbols& syms,
                                                          const std::vector<uint64_t>& runqueues, bool slab_lookup,
                                                          std::vector<std::string>& warnings);

    explicit KernelData(Sources sources) : s_(std::move(sources)) {}

    const Sources& sources() const { return s_; }

    // The types of (below, size] bytes with a lock of `family` at `offset`,
    // for a generic cache: a BTF scan each, remembered.
    const std::vector<MemberPath>& generic_candidates(const std::string& cache, uint64_t below, uint64_t size,
                                                      uint64_t offset, LockFamily family) const;

    // One line per source and whether it is available here (session metadata).
    std::string summary() const;

private:
    Sources s_;
    mutable std::map<std::tuple<std::string, uint64_t, int>, std::vector<MemberPath>> generic_cache_;
};

// Shared by the sources' evidence: "0x1a0".
std::string hex(uint64_t v);
// Which object of class `cls` it is, where the kernel said ("inode 12 on
// ext4 (8:1) 'dir'", "pipe:[5]", "mm of process 42"); "" where unknown.
std::string instance_of(const std::string& cls, const RawIdentity& id);

}  // namespace lockscope::identity
