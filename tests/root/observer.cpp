#include "observer.h"

#include <bpf/libbpf.h>

#include <array>
#include <stdexcept>
#include <string>
#include <vector>

#include "observer_bpf.skel.h"
#include "root_env.h"

namespace lockscope::test {

Observer::Observer(pid_t tgid, Scope scope)
{
    if (const std::string why = ensure_tracefs(); !why.empty())
        throw std::runtime_error("observer: " + why);
    skel_ = observer_bpf__open();
    if (!skel_)
        throw std::runtime_error("observer open");
    skel_->rodata->targ_tgid = uint32_t(tgid);
    skel_->rodata->targ_tree = scope == Scope::Process ? 0 : scope == Scope::Tree ? 1 : 2;
    if (observer_bpf__load(skel_) || observer_bpf__attach(skel_)) {
        observer_bpf__destroy(skel_);
        throw std::runtime_error("observer load/attach");
    }
}

Observer::~Observer()
{
    observer_bpf__destroy(skel_);
}

Observed Observer::read() const
{
    const int cpus = libbpf_num_possible_cpus();
    constexpr uint32_t kCounts = 5, kTimes = 7, kClasses = 3;  // as observer.bpf.c's OBS_*
    std::array<uint64_t, kCounts + kTimes * kClasses> sum{};
    for (uint32_t i = 0; i < sum.size(); i++) {
        std::vector<uint64_t> v(static_cast<size_t>(cpus));
        bpf_map__lookup_elem(skel_->maps.events, &i, sizeof i, v.data(), v.size() * 8, 0);
        for (uint64_t x : v)
            sum[i] += x;
    }
    auto wait = [&](uint32_t cls) {
        const uint64_t* t = &sum[kCounts + cls * kTimes];
        return ObservedWait{t[0], t[1], t[2], t[3], t[4], t[5], t[6]};
    };
    return {sum[0], sum[1], sum[2], sum[3], sum[4], wait(0), wait(1), wait(2)};
}

}  // namespace lockscope::test
