// The kernel modules a guest needs before lockscope can run in it: virtio
// PCI and the 9p file system that carries the session back to the host.
#pragma once

#include <string>
#include <vector>

namespace lockscope::lab {

struct GuestModule {
    std::string name;      // "9pnet_virtio"
    std::string path;      // file in the modules directory (.ko, .ko.xz, .ko.zst)
    std::string contents;  // the uncompressed module, ready for insmod
};

// Modules to load, in load order (dependencies first), for `wanted` from
// `modules_dir` (lib/modules/<release>). Built-in modules (modules.builtin)
// are skipped; dependencies come from each module's own depends= field,
// since a package does not ship modules.dep. Compressed modules are
// decompressed here: busybox insmod reads plain ELF only.
std::vector<GuestModule> resolve_guest_modules(const std::string& modules_dir, const std::vector<std::string>& wanted);

// The depends= list of a module's .modinfo (exposed for tests).
std::vector<std::string> module_depends(const std::string& module_contents);

}  // namespace lockscope::lab
