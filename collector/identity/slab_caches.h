// Slab caches and the types they hold. A dedicated cache names its type
// ("sighand_cache" holds struct sighand_struct), confirmed by the object
// size in BTF; SLUB may have merged caches of the same size into one, so
// every name merged into a cache is a candidate. Generic caches (kmalloc-*)
// hold objects of any type.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace lockscope::identity {

class SlabCaches {
public:
    // /sys/kernel/slab: each cache a directory, merged names symlinks to one.
    static SlabCaches load(const std::string& dir = "/sys/kernel/slab");
    bool available() const { return !target_.empty(); }
    // The cache names sharing `name`'s cache, itself first; just `name`
    // when nothing is known of merging.
    std::vector<std::string> merged_with(const std::string& name) const;

    // For tests: name -> the directory it resolves to.
    void add(const std::string& name, const std::string& target) { target_[name] = target; }

private:
    std::map<std::string, std::string> target_;
};

// "kmalloc-192", "kmalloc-cg-2k", "dma-kmalloc-64", "kmalloc-rcl-…", "kmalloc-rnd-…".
bool is_generic_cache(std::string_view name);
// The object sizes a generic cache serves: (smaller cache's size, its size].
// {0, 0} when the name carries no size.
std::pair<uint32_t, uint32_t> generic_size_range(std::string_view name);

// Struct names a dedicated cache may hold, most likely first.
std::vector<std::string> candidate_types(std::string_view cache_name);

}  // namespace lockscope::identity
