// The holder split's tasks (HolderTime rows) rolled up for a report: per
// lock row, and per holder task over every lock (report --by task).
#pragma once

#include "core/model.h"

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace lockscope {

// The holder_times rows of `role` ("holder" or "preemptor") on the lock ids
// `locks` of the runs `wanted` keeps, one per task (run, lock_id and role
// unset), most wait first, at most `top` (0: all).
std::vector<HolderTime> holder_time_shares(const Session& session, const std::function<bool(int64_t)>& wanted,
                                           const std::set<int64_t>& locks, const std::string& role, size_t top);

// Each holder task's waiting caused over every lock, kernel and user-space (their
// user_lock_holders), most first.
std::vector<HolderTime> holder_times_by_task(const Session& session, const std::function<bool(int64_t)>& wanted);

}  // namespace lockscope
