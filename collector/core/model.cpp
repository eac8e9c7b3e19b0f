#include "core/model.h"

#include "lockscope_abi.h"

#include <algorithm>
#include <limits>

namespace lockscope {

const char* owner_state_name(int state)
{
    switch (static_cast<OwnerState>(state)) {
    case OwnerState::OnCpu: return "on-cpu";
    case OwnerState::OffCpu: return "off-cpu";
    case OwnerState::ReaderOwned: return "reader-owned";
    case OwnerState::NonSpinnable: return "non-spinnable";
    case OwnerState::None: return "no-owner";
    }
    return "unknown";
}

double LockCounters::spin_failure_rate() const
{
    return spin_attempts ? double(spin_failures) / double(spin_attempts) : 0.0;
}

void LockCounters::add(const LockCounters& o)
{
    contentions = sat_add(contentions, o.contentions);
    spin_attempts = sat_add(spin_attempts, o.spin_attempts);
    spin_failures = sat_add(spin_failures, o.spin_failures);
    spin_successes = sat_add(spin_successes, o.spin_successes);
    wait_ns = sat_add(wait_ns, o.wait_ns);
    spin_ns = sat_add(spin_ns, o.spin_ns);
    sleep_ns = sat_add(sleep_ns, o.sleep_ns);
    preempt_ns = sat_add(preempt_ns, o.preempt_ns);
    sleeps = sat_add(sleeps, o.sleeps);
    preemptions = sat_add(preemptions, o.preemptions);
    max_wait_ns = std::max(max_wait_ns, o.max_wait_ns);
    errors = sat_add(errors, o.errors);
    wakeups = sat_add(wakeups, o.wakeups);
    for (size_t i = 0; i < owner.size(); ++i)
        owner[i] = sat_add(owner[i], o.owner[i]);
    for (size_t i = 0; i < hist.size(); ++i)
        hist[i] = sat_add(hist[i], o.hist[i]);
}

uint64_t LostCounters::total() const
{
    uint64_t t = 0;
#define LOCKSCOPE_X(f, label) t = sat_add(t, f);
    LOCKSCOPE_LOST_FIELDS(LOCKSCOPE_X)
#undef LOCKSCOPE_X
    return t;
}

void LostCounters::add(const LostCounters& o)
{
#define LOCKSCOPE_X(f, label) f = sat_add(f, o.f);
    LOCKSCOPE_LOST_FIELDS(LOCKSCOPE_X)
#undef LOCKSCOPE_X
}

LostCounters LostCounters::since(const LostCounters& base) const
{
    LostCounters d;
#define LOCKSCOPE_X(f, label) d.f = f >= base.f ? f - base.f : 0;
    LOCKSCOPE_LOST_FIELDS(LOCKSCOPE_X)
#undef LOCKSCOPE_X
    return d;
}

const LockInfo* Session::lock(int64_t id) const
{
    // The loader keeps locks ordered by id; a hand-built session may not be.
    auto it = std::lower_bound(locks.begin(), locks.end(), id,
                               [](const LockInfo& l, int64_t v) { return l.id < v; });
    if (it != locks.end() && it->id == id)
        return &*it;
    for (const auto& l : locks)
        if (l.id == id)
            return &l;
    return nullptr;
}

std::string Session::meta_value(const std::string& key, const std::string& fallback) const
{
    auto it = meta.find(key);
    return it == meta.end() ? fallback : it->second;
}

std::string stack_role_name(uint32_t role)
{
    switch (role) {
    case LS_ROLE_WAITER: return "waiter";
    case LS_ROLE_WAKER: return "waker";
    case LS_ROLE_HOLDER_RUNNING: return "holder:running";
    case LS_ROLE_HOLDER_PREEMPTED: return "holder:preempted";
    case LS_ROLE_HOLDER_SLEEPING: return "holder:sleeping";
    case LS_ROLE_HOLDER_IOWAIT: return "holder:io-wait";
    }
    return "unknown";
}

}  // namespace lockscope
