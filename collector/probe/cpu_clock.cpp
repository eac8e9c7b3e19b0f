#include "probe/cpu_clock.h"

#include <bpf/libbpf.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lockscope::probe {
namespace {

int open_cpu_clock(int cpu, uint32_t hz)
{
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_CPU_CLOCK;
    // A fixed period in ns of CPU time, not a frequency the kernel adapts.
    attr.sample_period = 1000000000ull / (hz ? hz : 1);
    attr.disabled = 1;  // the attach enables it
    return int(syscall(SYS_perf_event_open, &attr, -1 /* every task */, cpu, -1, PERF_FLAG_FD_CLOEXEC));
}

std::string refusal(int err)
{
    if (err == EACCES || err == EPERM)
        return "perf events refused (needs root or CAP_PERFMON)";
    if (err == ENOENT || err == ENODEV || err == EOPNOTSUPP)
        return "this kernel has no CPU-clock perf event";
    return std::string("perf_event_open: ") + std::strerror(err);
}

}  // namespace

bool cpu_clock_available(std::string* why)
{
    if (libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_PERF_EVENT, nullptr) != 1) {
        if (why)
            *why = "this kernel has no BPF programs of type perf_event";
        return false;
    }
    const int fd = open_cpu_clock(0, 1);
    if (fd < 0) {
        if (why)
            *why = refusal(errno);
        return false;
    }
    close(fd);
    return true;
}

std::vector<bpf_link*> attach_cpu_clock(bpf_program* prog, uint32_t hz, std::string* why)
{
    std::vector<bpf_link*> links;
    const int cpus = libbpf_num_possible_cpus();
    int first_error = 0;
    for (int cpu = 0; cpu < cpus; cpu++) {
        const int fd = open_cpu_clock(cpu, hz);
        if (fd < 0) {
            if (errno != ENODEV && !first_error)  // ENODEV: an offline CPU
                first_error = errno;
            continue;
        }
        // The link owns the event's fd from here.
        bpf_link* link = bpf_program__attach_perf_event(prog, fd);
        if (!link) {
            if (!first_error)
                first_error = errno;
            close(fd);
            continue;
        }
        links.push_back(link);
    }
    if (links.empty() && why)
        *why = first_error ? refusal(first_error) : "no online CPU";
    return links;
}

}  // namespace lockscope::probe
