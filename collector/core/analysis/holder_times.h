// The holder split's tasks (HolderTime rows) rolled up for a report: per
// lock row, and per holder task over every lock (report --by task).
#pragma once

#include "core/analysis/report.h"
#include "core/model.h"

#include <cstdint>
#include <functional>
#include <set>
#include <vector>

namespace lockscope {

// The holder_times rows of `role` ("holder" or "preemptor") on the lock ids
// `locks` of the runs `wanted` keeps, one per task, most wait first, at most
// `top` (0: all).
std::vector<HolderTimeShare> holder_time_shares(const Session& session, const std::function<bool(int64_t)>& wanted,
                                                const std::set<int64_t>& locks, const std::string& role, size_t top);

// The report's HolderSplit: whether the session keeps it, and each holder
// task's waiting caused over every lock.
Report::HolderSplit holder_split_of(const Session& session, const std::function<bool(int64_t)>& wanted);

}  // namespace lockscope
