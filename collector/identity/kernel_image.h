// The kernel image's own data: where it lies (so a lock there is known to be
// a global even when nothing names it) and, from a System.map that matches
// the running kernel, the names of its global variables.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/host/symbols.h"

namespace lockscope::identity {

class KernelImage {
public:
    // `kallsyms` is the running kernel's (text symbols suffice); `iomem` gives
    // the physical ranges of the image's data and bss (root only); a
    // System.map is used only if its functions sit where kallsyms says,
    // allowing for KASLR's one shift. Problems go to `warnings`.
    static KernelImage load(const KernelSymbols& kallsyms, std::vector<std::string>& warnings,
                            const std::string& iomem = "/proc/iomem", const std::string& system_map = "");

    // In the image's data or bss (rodata included).
    bool in_data(uint64_t address) const;
    // The global variable at (or containing) `address`, from System.map.
    std::optional<std::string> symbol(uint64_t address) const;

    bool has_ranges() const { return !ranges_.empty(); }
    bool has_symbols() const { return !data_.empty(); }
    const std::string& system_map_status() const { return map_status_; }

private:
    void load_iomem(const KernelSymbols& kallsyms, const std::string& path);
    void load_system_map(const KernelSymbols& kallsyms, const std::string& path, std::vector<std::string>& warnings);

    std::vector<std::pair<uint64_t, uint64_t>> ranges_;   // virtual [start, end)
    std::vector<std::pair<uint64_t, std::string>> data_;  // System.map data symbols, relocated, sorted
    std::vector<std::pair<uint64_t, uint64_t>> map_sections_;
    std::string map_status_;
};

}  // namespace lockscope::identity
