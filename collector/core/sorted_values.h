// The rows a map merged by key, as a list in order: what every table of
// merged samples (holder stacks, holder tasks, instances) does before it
// prints.
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

namespace lockscope {

// The map's values, moved out, in `before`'s order; values that tie keep
// the map's key order (a stable sort), so that a table reads the same from
// one run to the next.
template <typename Map, typename Before>
std::vector<typename Map::mapped_type> sorted_values(Map& merged, Before before)
{
    std::vector<typename Map::mapped_type> out;
    out.reserve(merged.size());
    for (auto& entry : merged)
        out.push_back(std::move(entry.second));
    std::stable_sort(out.begin(), out.end(), before);
    return out;
}

}  // namespace lockscope
