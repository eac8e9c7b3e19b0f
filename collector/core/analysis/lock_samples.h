// A session's tables of what was sampled or counted per lock: one list of
// them, so that every cut of a session (by lock, by run) goes through the
// same tables, and a new one joins every cut at once.
#pragma once

#include <vector>

#include "core/model.h"

namespace lockscope {

// Erases the rows `drop` picks (a row has a run and a lock_id) from the
// lock intervals, the stacks, the holders' tasks, the cgroups and the user
// code above the waits.
template <typename Drop>
void erase_lock_samples(Session& s, const Drop& drop)
{
    std::erase_if(s.lock_intervals, drop);
    std::erase_if(s.stacks, drop);
    std::erase_if(s.holder_tasks, drop);
    std::erase_if(s.lock_cgroups, drop);
    std::erase_if(s.kernel_user_stacks, drop);
}

}  // namespace lockscope
