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
    std::array<uint64_t, 5> sum{};
    for (uint32_t i = 0; i < 5; i++) {
        std::vector<uint64_t> v(static_cast<size_t>(cpus));
        bpf_map__lookup_elem(skel_->maps.events, &i, sizeof i, v.data(), v.size() * 8, 0);
        for (uint64_t x : v)
            sum[i] += x;
    }
    return {sum[0], sum[1], sum[2], sum[3], sum[4]};
}

}  // namespace lockscope::test
