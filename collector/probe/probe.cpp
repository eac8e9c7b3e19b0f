#include "probe/probe.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <thread>
#include <utility>

#include "core/error.h"
#include "lockscope_abi.h"
#include "lockscope_bpf.skel.h"
#include "probe/cpu_clock.h"
#include "probe/features.h"
#include "probe/libbpf_log.h"
#include "probe/rwsem_spin.h"
#include "probe/trace_stream.h"

namespace lockscope::probe {
namespace {

Error load_error(const char* what, int err)
{
    std::string remedy;
    if (err == EPERM)
        remedy = "needs root or CAP_BPF + CAP_PERFMON";
    else
        remedy = last_libbpf_warning();
    return Error(what, "lockscope BPF programs", err, remedy);
}

// Every CPU switches at least once, so idle CPUs start their idle clock now
// instead of at their next (possibly distant) wake-up.
void touch_every_cpu()
{
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    std::vector<std::thread> threads;
    for (long cpu = 0; cpu < cpus; cpu++) {
        threads.emplace_back([cpu] {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(cpu, &set);
            pthread_setaffinity_np(pthread_self(), sizeof set, &set);
            usleep(1000);
        });
    }
    for (auto& t : threads)
        t.join();
}

// The ring buffer's size in bytes: a power of two (the kernel's rule), at
// least one page.
uint32_t ring_bytes(uint32_t mib)
{
    uint64_t want = std::max<uint64_t>(uint64_t(mib) << 20, uint64_t(sysconf(_SC_PAGESIZE)));
    uint64_t bytes = 1;
    while (bytes < want)
        bytes <<= 1;
    return uint32_t(std::min<uint64_t>(bytes, uint64_t(1) << 31));
}

}  // namespace

Probe Probe::attach(const ProbeOptions& options)
{
    require_recording_features();
    keep_libbpf_warnings();

    // Without CAP_SYS_ADMIN, the running kernel's BTF is named as CO-RE's
    // target: a type it lacks (futex_private_hash before 6.16) is then only
    // absent, where libbpf 1.1 would look for it in the module BTFs, which
    // needs CAP_SYS_ADMIN and fails a recorder with CAP_BPF + CAP_PERFMON (the
    // exporter service's). Not otherwise: libbpf then parses that BTF once
    // for both CO-RE and the tp_btf attach points instead of twice, some
    // 70 ms of every start.
    LIBBPF_OPTS(bpf_object_open_opts, open_opts);
    if (!module_btf_readable() && access("/sys/kernel/btf/vmlinux", R_OK) == 0)
        open_opts.btf_custom_path = "/sys/kernel/btf/vmlinux";
    lockscope_bpf* skel = lockscope_bpf__open_opts(&open_opts);
    if (!skel)
        throw load_error("cannot open", errno);
    Probe probe(skel, uint32_t(libbpf_num_possible_cpus()), options.time_period);

    skel->rodata->targ_tgid = options.tgid;
    skel->rodata->targ_tree = options.tgid && options.children ? 1 : 0;
    bpf_program__set_autoload(skel->progs.on_process_fork, skel->rodata->targ_tree);
    bpf_program__set_autoload(skel->progs.on_process_exit, skel->rodata->targ_tree);
    skel->rodata->stack_period = options.stack_period;
    skel->rodata->holder_period = options.holder_period;
    skel->rodata->targ_kinds = options.kind_bits;
    skel->rodata->targ_tid = options.tid;
    skel->rodata->targ_cpus = options.cpus.empty() ? 0 : 1;
    for (unsigned cpu : options.cpus)
        if (cpu < LS_MAX_CPU_MASK_WORDS * 64)
            skel->rodata->targ_cpu_mask[cpu / 64] |= 1ull << (cpu % 64);
    if (options.cgroups.size() > LS_MAX_CGROUPS)
        throw UsageError("at most " + std::to_string(LS_MAX_CGROUPS) + " --cgroup options");
    skel->rodata->targ_cgroups = uint32_t(options.cgroups.size());
    for (size_t i = 0; i < options.cgroups.size(); i++) {
        skel->rodata->targ_cgroup_ids[i] = options.cgroups[i].id;
        skel->rodata->targ_cgroup_levels[i] = options.cgroups[i].level;
    }
    skel->rodata->trace_episodes = options.trace ? 1 : 0;
    // Off, the ring buffer stays at its one-page minimum.
    if (options.trace)
        bpf_map__set_max_entries(skel->maps.trace_events, ring_bytes(options.trace_buffer_mib));
    // A record is 8 KiB of stack: room for two seconds of them at the cap.
    skel->rodata->max_user_stacks_per_sec = options.user_stacks_per_sec;
    if (options.user_stacks_per_sec) {
        const uint64_t bytes = 2ull * options.user_stacks_per_sec * sizeof(ls_kernel_user_sample);
        bpf_map__set_max_entries(skel->maps.user_stacks,
                                 ring_bytes(uint32_t(std::min<uint64_t>((bytes + (1u << 20) - 1) >> 20, 64))));
        probe.user_stacks_ = true;
    }
    skel->rodata->max_locks = options.max_locks;
    skel->rodata->time_period = std::max(options.time_period, 1u);
    bpf_map__set_max_entries(skel->maps.lock_index, options.max_locks);
    bpf_map__set_max_entries(skel->maps.lock_stats, options.max_locks);
    bpf_map__set_max_entries(skel->maps.lock_identity, options.max_locks);
    // The end program that looks up slab caches needs the 6.13+ kfunc.
    probe.slab_lookup_ = kmem_cache_kfunc_available();
    bpf_program__set_autoload(skel->progs.on_contention_end_kmem, probe.slab_lookup_);
    bpf_program__set_autoload(skel->progs.on_contention_end, !probe.slab_lookup_);
    const bool holders = holder_stacks_available();
    bpf_program__set_autoload(skel->progs.on_contention_begin_holders, holders);
    bpf_program__set_autoload(skel->progs.on_contention_begin, !holders);
    // Running holders' stacks: an extra; without it the recording goes on.
    std::string clock_why;
    const bool clock = options.holder_period && options.running_holder_hz && cpu_clock_available(&clock_why);
    if (clock) {
        skel->rodata->oncpu_holders = 1;
        // fresh for two ticks: the holder still runs where a waiter saw it
        skel->rodata->oncpu_fresh_ns = 2 * (1000000000ull / options.running_holder_hz);
    }
    bpf_program__set_autoload(skel->progs.on_cpu_clock, clock);
    bpf_map__set_max_entries(skel->maps.stack_samples, options.max_stacks);
    bpf_map__set_max_entries(skel->maps.stacks, options.max_stacks);
    bpf_map__set_max_entries(skel->maps.task_stats, options.max_tasks);
    // Run by hand on each CPU (percpu_runqueues()), never attached.
    bpf_program__set_autoattach(skel->progs.read_percpu_bases, false);

    if (int err = lockscope_bpf__load(skel))
        throw load_error("cannot load", -err);
    if (int err = lockscope_bpf__attach(skel))
        throw load_error("cannot attach", -err);
    if (!options.holder_period || !options.running_holder_hz) {
        probe.running_holders_ = "off";
    } else if (!clock) {
        probe.running_holders_ = "unavailable (" + clock_why + ")";
    } else {
        for (bpf_link* link : attach_cpu_clock(skel->progs.on_cpu_clock, options.running_holder_hz, &clock_why))
            probe.clock_links_.emplace_back(link);
        probe.running_holders_ = probe.clock_links_.empty()
                                     ? "unavailable (" + clock_why + ")"
                                     : "on (" + std::to_string(probe.clock_links_.size()) + " CPUs, " +
                                           std::to_string(options.running_holder_hz) + " Hz)";
    }
    if (options.trace)
        probe.trace_ = std::make_unique<TraceStream>(bpf_map__fd(skel->maps.trace_events));
    probe.rwsem_spin_ = RwsemSpin::attach();
    touch_every_cpu();
    return probe;
}

Probe::Probe(lockscope_bpf* skel, uint32_t cpus, uint32_t time_period)
    : skel_(skel), possible_cpus_(cpus), time_period_(std::max(time_period, 1u))
{
}

// A process linked with reflock (or anything firing lockscope's USDT probes)
// is recorded with its user-space locks; a process without them is not an error.
void Probe::attach_user_probes(uint32_t tgid, const std::string& binary)
{
    const std::string exe = binary.empty() ? "/proc/" + std::to_string(tgid) + "/exe" : binary;
    Link begin(bpf_program__attach_usdt(skel_->progs.on_user_begin, int(tgid), exe.c_str(), "lockscope",
                                        "contention_begin", nullptr));
    Link end(bpf_program__attach_usdt(skel_->progs.on_user_end, int(tgid), exe.c_str(), "lockscope", "contention_end",
                                      nullptr));
    if (begin && end) {
        user_links_.push_back(std::move(begin));
        user_links_.push_back(std::move(end));
        user_probes_ = true;
    }
}

void Probe::LinkDeleter::operator()(bpf_link* link) const noexcept
{
    bpf_link__destroy(link);
}

// Every member starts empty (skel_ null), so the assignment below moves it all.
Probe::Probe(Probe&& other) noexcept
{
    *this = std::move(other);
}

Probe& Probe::operator=(Probe&& other) noexcept
{
    if (this != &other) {
        reset();
        skel_ = std::exchange(other.skel_, nullptr);
        possible_cpus_ = other.possible_cpus_;
        time_period_ = other.time_period_;
        delivered_stacks_ = std::move(other.delivered_stacks_);
        user_links_ = std::move(other.user_links_);
        other.user_links_.clear();
        clock_links_ = std::move(other.clock_links_);
        other.clock_links_.clear();
        running_holders_ = std::move(other.running_holders_);
        user_probes_ = other.user_probes_;
        user_stacks_ = other.user_stacks_;
        slab_lookup_ = other.slab_lookup_;
        detached_ = other.detached_;
        exited_seen_ = std::move(other.exited_seen_);
        identities_ = std::move(other.identities_);
        cgroup_names_ = std::move(other.cgroup_names_);
        trace_ = std::move(other.trace_);
        rwsem_spin_ = std::move(other.rwsem_spin_);
    }
    return *this;
}

Probe::~Probe()
{
    reset();
}

void Probe::reset() noexcept
{
    trace_.reset();  // its thread polls a map of the skeleton
    rwsem_spin_.reset();
    user_links_.clear();
    clock_links_.clear();
    if (skel_)
        lockscope_bpf__destroy(skel_);
    skel_ = nullptr;
}

std::string Probe::rwsem_spin_status() const
{
    return rwsem_spin_ ? rwsem_spin_->status() : "not probed";
}

std::vector<Episode> Probe::take_episodes()
{
    return trace_ ? trace_->take() : std::vector<Episode>{};
}

void Probe::detach()
{
    user_links_.clear();
    clock_links_.clear();
    lockscope_bpf__detach(skel_);
    if (rwsem_spin_)
        rwsem_spin_->detach();
    // A program already running on another CPU finishes within microseconds.
    usleep(10 * 1000);
    detached_ = true;
    if (trace_)
        trace_->finish();
}

ContentionStateFds Probe::contention_state_fds() const
{
    return {bpf_map__fd(skel_->maps.task_state), bpf_map__fd(skel_->maps.cpu_states),
            user_stacks_ ? bpf_map__fd(skel_->maps.user_stacks) : -1};
}

UserStackCounts Probe::user_stack_counts() const
{
    const ls_user_stack_counts& c = skel_->bss->user_stack_counts;
    return {c.sent, c.rate_limited, c.lost, c.no_user};
}

}  // namespace lockscope::probe
