#include "holder_observer.h"

#include <bpf/libbpf.h>

#include <stdexcept>
#include <string>

#include "holder_observer_bpf.skel.h"
#include "root_env.h"

namespace lockscope::test {

HolderObserver::HolderObserver(pid_t tgid, bool rwsem)
{
    if (const std::string why = ensure_tracefs(); !why.empty())
        throw std::runtime_error("holder observer: " + why);
    skel_ = holder_observer_bpf__open();
    if (!skel_)
        throw std::runtime_error("holder observer open");
    skel_->rodata->targ_tgid = uint32_t(tgid);
    skel_->rodata->lock_is_rwsem = rwsem ? 1 : 0;
    if (holder_observer_bpf__load(skel_) || holder_observer_bpf__attach(skel_)) {
        holder_observer_bpf__destroy(skel_);
        throw std::runtime_error("holder observer load/attach");
    }
}

HolderObserver::~HolderObserver()
{
    holder_observer_bpf__destroy(skel_);
}

void HolderObserver::follow(pid_t holder_tid)
{
    constexpr unsigned kMax = sizeof skel_->bss->holder_tids / sizeof skel_->bss->holder_tids[0];
    const unsigned i = followed_++;
    if (i >= kMax)
        throw std::runtime_error("holder observer: more than " + std::to_string(kMax) + " holders");
    __atomic_store_n(&skel_->bss->holder_tids[i], uint32_t(holder_tid), __ATOMIC_RELEASE);
}

ObservedHolder HolderObserver::read() const
{
    const auto* b = skel_->bss;
    return {__atomic_load_n(&b->lock_addr, __ATOMIC_ACQUIRE),
            __atomic_load_n(&b->observed_runnable_ns, __ATOMIC_ACQUIRE),
            __atomic_load_n(&b->observed_asleep_ns, __ATOMIC_ACQUIRE),
            __atomic_load_n(&b->observed_waits, __ATOMIC_ACQUIRE)};
}

}  // namespace lockscope::test
