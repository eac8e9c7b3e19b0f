#include "probe/features.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "bpfmap/vmlinux_btf.h"
#include "core/error.h"
#include "probe/cpu_clock.h"

namespace lockscope::probe {
namespace {

constexpr const char* kVmlinuxBtf = "/sys/kernel/btf/vmlinux";

bool has_capability(int cap)
{
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    if (syscall(SYS_capget, &header, data) != 0)
        return false;
    return (data[cap / 32].effective & (1u << (cap % 32))) != 0;
}

std::string kernel_release()
{
    utsname u{};
    uname(&u);
    return u.release;
}

struct BtfCheck {
    bool loaded = false;
    bool begin = false, end = false, sched_switch = false, sched_waking = false;
    bool task_on_cpu = false;
    bool kmem_cache_kfunc = false;
    bool task_from_pid_kfunc = false;
};

BtfCheck read_btf()
{
    BtfCheck c;
    const btf* vmlinux = vmlinux_btf();
    if (!vmlinux)
        return c;
    c.loaded = true;
    auto has = [&](const char* name) { return btf__find_by_name_kind(vmlinux, name, BTF_KIND_TYPEDEF) >= 0; };
    c.begin = has("btf_trace_contention_begin");
    c.end = has("btf_trace_contention_end");
    c.sched_switch = has("btf_trace_sched_switch");
    c.sched_waking = has("btf_trace_sched_waking");
    c.task_on_cpu = btf__find_by_name_kind(vmlinux, "task_struct", BTF_KIND_STRUCT) >= 0;
    c.kmem_cache_kfunc = btf__find_by_name_kind(vmlinux, "bpf_get_kmem_cache", BTF_KIND_FUNC) >= 0;
    c.task_from_pid_kfunc = btf__find_by_name_kind(vmlinux, "bpf_task_from_pid", BTF_KIND_FUNC) >= 0 &&
                            btf__find_by_name_kind(vmlinux, "bpf_task_release", BTF_KIND_FUNC) >= 0;
    return c;
}

// The running kernel's BTF does not change while lockscope runs; it is
// parsed (5-6 MiB) once for every question asked of it here.
const BtfCheck& check_btf()
{
    static const BtfCheck c = read_btf();
    return c;
}

bool file_exists(const char* path)
{
    std::error_code ec;
    return std::filesystem::exists(path, ec);
}

std::string read_first_line(const char* path)
{
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

}  // namespace

std::string mount_point(const std::string& fstype)
{
    // mountinfo: "id parent major:minor root mount-point options... - fstype source ..."
    std::ifstream in("/proc/self/mountinfo");
    std::string line;
    const std::string marker = " - " + fstype + " ";
    while (std::getline(in, line)) {
        const size_t dash = line.find(" - ");
        if (dash == std::string::npos || line.compare(dash, marker.size(), marker) != 0)
            continue;
        size_t pos = 0;
        for (int field = 0; field < 4 && pos != std::string::npos; field++) {
            pos = line.find(' ', pos);
            if (pos != std::string::npos)
                pos++;
        }
        if (pos != std::string::npos)
            return line.substr(pos, line.find(' ', pos) - pos);
    }
    return {};
}

std::string tracefs_mount_point()
{
    return mount_point("tracefs");
}

bool kmem_cache_kfunc_available()
{
    return check_btf().kmem_cache_kfunc;
}

bool module_btf_readable()
{
    return has_capability(CAP_SYS_ADMIN);
}

bool holder_stacks_available()
{
    return check_btf().task_from_pid_kfunc;
}

bool recording_supported(std::string* why)
{
    for (const Feature& f : detect_features()) {
        if (f.required && !f.available) {
            if (why)
                *why = f.name + ": " + f.detail;
            return false;
        }
    }
    return true;
}

std::vector<Feature> detect_features()
{
    std::vector<Feature> out;
    const bool root = geteuid() == 0;
    const bool cap_bpf = has_capability(39 /* CAP_BPF */) || has_capability(CAP_SYS_ADMIN);
    const bool cap_perfmon = has_capability(38 /* CAP_PERFMON */) || has_capability(CAP_SYS_ADMIN);
    out.push_back({"privileges", root || (cap_bpf && cap_perfmon), true,
                   root ? "running as root"
                        : std::string("CAP_BPF ") + (cap_bpf ? "yes" : "missing") + ", CAP_PERFMON " +
                              (cap_perfmon ? "yes" : "missing") + " (record needs root or CAP_BPF + CAP_PERFMON)"});

    const BtfCheck& btf = check_btf();
    out.push_back({"kernel BTF", btf.loaded, true,
                   btf.loaded ? std::string(kVmlinuxBtf)
                              : std::string(kVmlinuxBtf) + " missing: the kernel needs CONFIG_DEBUG_INFO_BTF=y"});
    const std::string rel = kernel_release();
    out.push_back({"lock:contention_begin/end", btf.begin && btf.end, true,
                   btf.begin && btf.end ? "tracepoints present (tp_btf)"
                                        : "kernel " + rel + " has no lock:contention_begin tracepoint (needs 5.19+)"});
    out.push_back({"sched:sched_switch/sched_waking", btf.sched_switch && btf.sched_waking, true,
                   btf.sched_switch ? "present (off-CPU time, wakers, CPU idle)" : "missing"});
    out.push_back({"task storage maps", libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, nullptr) == 1, true,
                   "per-task episode state (needs 5.11+)"});
    out.push_back({"slab cache lookup", btf.kmem_cache_kfunc, false,
                   btf.kmem_cache_kfunc ? "bpf_get_kmem_cache: locks in slab objects named by type and member"
                                        : "no bpf_get_kmem_cache (needs 6.13+): slab objects' locks are named by "
                                          "the current task's members and callers only"});
    out.push_back({"holder stacks", btf.task_from_pid_kfunc, false,
                   btf.task_from_pid_kfunc ? "bpf_task_from_pid: the lock holder's stack when a waiter queues"
                                           : "no bpf_task_from_pid (needs 6.2+): holders' states only, no stacks"});
    std::string clock_why;
    const bool clock = cpu_clock_available(&clock_why);
    out.push_back({"running holders' stacks", clock, false,
                   clock ? "a CPU-clock perf event per CPU: the stack of a holder running on another CPU, taken "
                           "on its own CPU"
                         : "not available (" + clock_why +
                               "): a holder running on another CPU is recorded "
                               "without its stack"});
    out.push_back({"ring buffer", libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, nullptr) == 1, false,
                   "per-episode trace mode"});
    const std::string stats = read_first_line("/proc/sys/kernel/bpf_stats_enabled");
    // Present is not on: at 0 the kernel counts nothing.
    out.push_back({"BPF run-time stats", !stats.empty() && stats != "0", false,
                   stats.empty()  ? "kernel.bpf_stats_enabled unavailable"
                   : stats == "0" ? "kernel.bpf_stats_enabled=0: off (sysctl kernel.bpf_stats_enabled=1 to measure "
                                    "overhead)"
                                  : "kernel.bpf_stats_enabled=" + stats + " (overhead measurement)"});
    // libbpf attaches kprobes through the kprobe PMU, which needs no tracefs.
    out.push_back({"kprobes", file_exists("/sys/bus/event_source/devices/kprobe/type"), false, "optional extras only"});
    const std::string tracefs = tracefs_mount_point();
    out.push_back({"tracefs", !tracefs.empty(), false,
                   tracefs.empty() ? "not mounted: lockscope does not need it (it attaches through BTF); perf and "
                                     "bpftrace's tracepoint: probes do (mount -t tracefs nodev /sys/kernel/tracing)"
                                   : "mounted at " + tracefs + " (lockscope does not need it; perf and bpftrace do)"});
    out.push_back({"kernel config", file_exists("/proc/config.gz") || file_exists(("/boot/config-" + rel).c_str()),
                   false, "lock-relevant config lines in session metadata"});
    return out;
}

void require_recording_features()
{
    for (const Feature& f : detect_features()) {
        if (f.required && !f.available)
            throw Error("cannot record: " + f.detail, "");
    }
}

}  // namespace lockscope::probe
