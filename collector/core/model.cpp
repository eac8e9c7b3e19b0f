#include "core/model.h"

#include "lockscope_abi.h"

#include <algorithm>
#include <limits>

namespace lockscope {

const char* owner_state_name(int state)
{
    switch (static_cast<OwnerState>(state)) {
        case OwnerState::OnCpu:
            return "on-cpu";
        case OwnerState::OffCpu:
            return "off-cpu";
        case OwnerState::ReaderOwned:
            return "reader-owned";
        case OwnerState::NonSpinnable:
            return "non-spinnable";
        case OwnerState::None:
            return "no-owner";
    }
    return "unknown";
}

double LockCounters::spin_failure_rate() const
{
    return spin_attempts ? double(spin_failures) / double(spin_attempts) : 0.0;
}

void LockCounters::add(const LockCounters& o)
{
    for (const CounterField& f : kCounterFields)
        this->*f.member =
            f.merge == Merge::max ? std::max(this->*f.member, o.*f.member) : sat_add(this->*f.member, o.*f.member);
    for (size_t i = 0; i < owner.size(); ++i)
        owner[i] = sat_add(owner[i], o.owner[i]);
    for (size_t i = 0; i < hist.size(); ++i)
        hist[i] = sat_add(hist[i], o.hist[i]);
}

uint64_t LostCounters::total() const
{
    uint64_t t = 0;
    for (const LostField& f : kLostFields)
        t = sat_add(t, this->*f.member);
    return t;
}

void LostCounters::add(const LostCounters& o)
{
    for (const LostField& f : kLostFields)
        this->*f.member = sat_add(this->*f.member, o.*f.member);
}

LostCounters LostCounters::since(const LostCounters& base) const
{
    LostCounters d;
    for (const LostField& f : kLostFields)
        d.*f.member = this->*f.member >= base.*f.member ? this->*f.member - base.*f.member : 0;
    return d;
}

const LockInfo* Session::lock(int64_t id) const
{
    // The loader keeps locks ordered by id; a hand-built session may not be.
    auto it = std::lower_bound(locks.begin(), locks.end(), id, [](const LockInfo& l, int64_t v) { return l.id < v; });
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
        case LS_ROLE_WAITER:
            return "waiter";
        case LS_ROLE_WAKER:
            return "waker";
        case LS_ROLE_HOLDER_RUNNING:
            return "holder:running";
        case LS_ROLE_HOLDER_PREEMPTED:
            return "holder:preempted";
        case LS_ROLE_HOLDER_SLEEPING:
            return "holder:sleeping";
        case LS_ROLE_HOLDER_IOWAIT:
            return "holder:io-wait";
        case LS_ROLE_HOLDER_ON_CPU:
            return "holder:on-cpu";
        case LS_ROLE_HOLDER_ASLEEP:
            return "holder:asleep";
    }
    return "unknown";
}

void UserLockWaits::add_waits(const UserLockWaits& o)
{
    waits += o.waits;
    wait_ns += o.wait_ns;
    max_wait_ns = std::max(max_wait_ns, o.max_wait_ns);
    samples += o.samples;
    oncpu_ns += o.oncpu_ns;
    asleep_ns += o.asleep_ns;
    runnable_ns += o.runnable_ns;
    wakes += o.wakes;
    for (size_t b = 0; b < hist.size(); ++b)
        hist[b] += o.hist[b];
    holder_running_ns += o.holder_running_ns;
    holder_runnable_ns += o.holder_runnable_ns;
    holder_asleep_ns += o.holder_asleep_ns;
}

LockCounters UserLockWaits::counters() const
{
    LockCounters c;
    c.contentions = waits;
    c.wait_ns = wait_ns;
    c.max_wait_ns = max_wait_ns;
    c.sleep_ns = asleep_ns;
    c.preempt_ns = runnable_ns;
    c.wakeups = wakes;
    c.hist = hist;
    c.holder_running_ns = holder_running_ns;
    c.holder_runnable_ns = holder_runnable_ns;
    c.holder_asleep_ns = holder_asleep_ns;
    return c;
}

}  // namespace lockscope
