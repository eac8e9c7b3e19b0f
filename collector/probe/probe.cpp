#include "probe/probe.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstdarg>
#include <cstddef>
#include <cstring>
#include <ctime>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "core/analysis/estimate.h"
#include "core/error.h"
#include "core/clock.h"
#include "episode.h"
#include "lockscope_abi.h"
#include "lockscope_bpf.skel.h"
#include "probe/features.h"
#include "probe/cpu_clock.h"
#include "probe/map_read.h"
#include "probe/rwsem_spin.h"

namespace lockscope::probe {
namespace {

// libbpf's warnings, kept so a load failure can say what the verifier said.
std::mutex g_log_mutex;
std::string g_last_warning;

int libbpf_print(enum libbpf_print_level level, const char* fmt, va_list args)
{
    if (level == LIBBPF_DEBUG)
        return 0;
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, args);
    std::lock_guard lock(g_log_mutex);
    g_last_warning = buf;
    while (!g_last_warning.empty() && g_last_warning.back() == '\n')
        g_last_warning.pop_back();
    return 0;
}

Error load_error(const char* what, int err)
{
    std::string remedy;
    if (err == EPERM)
        remedy = "needs root or CAP_BPF + CAP_PERFMON";
    else {
        std::lock_guard lock(g_log_mutex);
        remedy = g_last_warning;
    }
    return Error(what, "lockscope BPF programs", err, remedy);
}

LockCounters to_counters(const ls_lock_stats& s)
{
    LockCounters c;
#define LOCKSCOPE_X(name, merge, help) c.name = s.name;
    LS_LOCK_COUNTERS(LOCKSCOPE_X)
#undef LOCKSCOPE_X
    for (int i = 0; i < kOwnerStates; i++)
        c.owner[i] = s.owner[i];
    for (int i = 0; i < kHistBuckets; i++)
        c.hist[i] = s.hist[i];
    return c;
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

// A ring-buffer record as a session episode; false if it is malformed.
bool to_episode(const void* data, size_t size, Episode& e)
{
    constexpr size_t header = offsetof(ls_trace_episode, phases);
    if (size < header)
        return false;
    ls_trace_episode rec{};
    std::memcpy(&rec, data, std::min(size, sizeof rec));
    if (rec.nphases > LS_TRACE_MAX_PHASES || size < header + rec.nphases * sizeof(ls_trace_phase))
        return false;
    e.tid = rec.tid;
    e.tgid = rec.tgid;
    e.lock_address = rec.lock;
    e.lock_flags = rec.flags;
    e.begin_ns = rec.begin_ns;
    e.end_ns = rec.end_ns;
    e.spin_ns = rec.spin_ns;
    e.sleep_ns = rec.sleep_ns;
    e.preempt_ns = rec.preempt_ns;
    e.sleeps = rec.sleeps;
    e.preemptions = rec.preemptions;
    e.ret = rec.ret;
    e.waker_tid = rec.waker;
    e.waker_tgid = rec.waker ? rec.waker_tgid : 0;
    e.wake_ns = rec.waker ? rec.wake_ns : 0;
    e.truncated = rec.truncated != 0;
    e.phases.resize(rec.nphases);
    for (size_t i = 0; i < rec.nphases; i++) {
        const ls_trace_phase& p = rec.phases[i];
        e.phases[i].spin = p.kind == LS_PHASE_SPIN;
        e.phases[i].start_ns = p.start_ns;
        e.phases[i].owner = p.owner < LS_OWNER_STATES ? int(p.owner) : -1;
    }
    return true;
}

}  // namespace

// Reads the trace ring buffer on a thread of its own, so that a slow
// session write never stalls it: the kernel drops what does not fit.
class TraceStream {
public:
    explicit TraceStream(int map_fd)
    {
        ring_ = ring_buffer__new(map_fd, on_record, this, nullptr);
        if (!ring_)
            throw Error("cannot open the trace ring buffer", "lockscope BPF programs", errno);
        thread_ = std::thread([this] {
            while (!stop_.load(std::memory_order_relaxed)) {
                // When the session cannot keep up, let the ring buffer fill:
                // the kernel then counts the drops (trace_lost) and memory
                // stays bounded.
                if (backlog() >= kMaxBacklog)
                    std::this_thread::sleep_for(std::chrono::milliseconds(10));
                else
                    ring_buffer__poll(ring_, 50);
            }
        });
    }
    TraceStream(const TraceStream&) = delete;
    TraceStream& operator=(const TraceStream&) = delete;
    ~TraceStream()
    {
        stop();
        ring_buffer__free(ring_);
    }

    // Stops the reader thread and reads whatever is left.
    void finish()
    {
        stop();
        ring_buffer__consume(ring_);
    }

    std::vector<Episode> take()
    {
        std::lock_guard lock(mutex_);
        return std::exchange(pending_, {});
    }

private:
    static constexpr size_t kMaxBacklog = size_t(1) << 19;  // episodes, about 100 MiB

    size_t backlog()
    {
        std::lock_guard lock(mutex_);
        return pending_.size();
    }
    static int on_record(void* ctx, void* data, size_t size)
    {
        auto* self = static_cast<TraceStream*>(ctx);
        Episode e;
        if (!to_episode(data, size, e))
            return 0;  // cannot happen with our own programs; not worth stopping for
        std::lock_guard lock(self->mutex_);
        self->pending_.push_back(std::move(e));
        return 0;
    }
    void stop()
    {
        stop_.store(true);
        if (thread_.joinable())
            thread_.join();
    }

    ring_buffer* ring_ = nullptr;
    std::thread thread_;
    std::atomic<bool> stop_{false};
    std::mutex mutex_;
    std::vector<Episode> pending_;
};

Probe Probe::attach(const ProbeOptions& options)
{
    require_recording_features();
    libbpf_set_print(libbpf_print);

    // The running kernel's BTF named as CO-RE's target: a type it lacks
    // (futex_private_hash before 6.16) is then only absent, where libbpf 1.1
    // would look for it in the module BTFs, which needs CAP_SYS_ADMIN and
    // fails a recorder with CAP_BPF + CAP_PERFMON (the exporter service's).
    LIBBPF_OPTS(bpf_object_open_opts, open_opts);
    if (access("/sys/kernel/btf/vmlinux", R_OK) == 0)
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
    skel->rodata->max_locks = options.max_locks;
    skel->rodata->time_period = std::max(options.time_period, 1u);
    bpf_map__set_max_entries(skel->maps.lock_index, options.max_locks);
    bpf_map__set_max_entries(skel->maps.lock_stats, options.max_locks);
    bpf_map__set_max_entries(skel->maps.lock_ident, options.max_locks);
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
void Probe::attach_user_probes(uint32_t tgid)
{
    const std::string exe = "/proc/" + std::to_string(tgid) + "/exe";
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

Probe::Probe(Probe&& other) noexcept
    : skel_(std::exchange(other.skel_, nullptr)),
      possible_cpus_(other.possible_cpus_),
      time_period_(other.time_period_),
      delivered_stacks_(std::move(other.delivered_stacks_)),
      user_links_(std::move(other.user_links_)),
      clock_links_(std::move(other.clock_links_)),
      running_holders_(std::move(other.running_holders_)),
      user_probes_(other.user_probes_),
      slab_lookup_(other.slab_lookup_),
      detached_(other.detached_),
      exited_seen_(std::move(other.exited_seen_)),
      identities_(std::move(other.identities_)),
      cgroup_names_(std::move(other.cgroup_names_)),
      trace_(std::move(other.trace_)),
      rwsem_spin_(std::move(other.rwsem_spin_))
{
    other.user_links_.clear();
    other.clock_links_.clear();
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

std::vector<std::pair<uint32_t, uint32_t>> Probe::traced_processes()
{
    std::vector<std::pair<uint32_t, uint32_t>> out;
    std::set<uint32_t> exited;
    for_each_entry<uint32_t, uint32_t>(skel_->maps.traced_tgids, 1, [&](uint32_t tgid, const uint32_t* parent) {
        out.emplace_back(tgid, *parent & ~LS_TREE_EXITED);
        if (*parent & LS_TREE_EXITED)
            exited.insert(tgid);
    });
    // A process that exited is forgotten by the kernel one read after it was
    // first seen exited: its teardown (mm, files), after sched_process_exit,
    // is still recorded, and the map holds only the living.
    for (uint32_t tgid : exited_seen_) {
        if (!exited.count(tgid))
            continue;  // a new process of the tree took the pid since
        uint32_t parent = 0;
        if (bpf_map__lookup_elem(skel_->maps.traced_tgids, &tgid, sizeof tgid, &parent, sizeof parent, 0) == 0 &&
            (parent & LS_TREE_EXITED))
            bpf_map__delete_elem(skel_->maps.traced_tgids, &tgid, sizeof tgid, 0);
        exited.erase(tgid);
    }
    exited_seen_ = std::move(exited);
    return out;
}

std::vector<uint32_t> Probe::program_ids() const
{
    std::vector<uint32_t> ids;
    bpf_program* prog;
    bpf_object__for_each_program(prog, skel_->obj)
    {
        bpf_prog_info info{};
        uint32_t len = sizeof info;
        if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) == 0)
            ids.push_back(info.id);
    }
    return ids;
}

RawSnapshot Probe::snapshot()
{
    RawSnapshot out;
    out.cpus = uint32_t(sysconf(_SC_NPROCESSORS_ONLN));
    read_cpu_state(out);
    // Tasks before locks: a task publishes its totals after its episodes
    // reached their lock rows, so per-task (and per-cgroup) sums never
    // exceed the lock totals read after them.
    read_tasks(out);
    read_locks(out);
    if (rwsem_spin_)
        rwsem_spin_->merge_into(out);
    read_stacks(out);
    read_edges(out);
    read_holder_tasks(out);
    read_lock_cgroups(out);
    std::vector<uint64_t> ids;
    for (const RawTask& t : out.tasks)
        ids.push_back(t.cgroup_id);
    for (const RawLockCgroup& c : out.lock_cgroups)
        ids.push_back(c.cgroup_id);
    out.cgroup_paths = cgroup_names_.resolve(ids);
    return out;
}

void Probe::read_cpu_state(RawSnapshot& out)
{
    const uint32_t zero = 0;
    std::vector<ls_cpu_idle> idle(possible_cpus_);
    std::vector<ls_cpu_state> cpu(possible_cpus_);
    out.taken_ns = monotonic_ns();
    if (bpf_map__lookup_elem(skel_->maps.cpu_idle, &zero, sizeof zero, idle.data(), idle.size() * sizeof(ls_cpu_idle),
                             0) == 0) {
        for (const ls_cpu_idle& c : idle) {
            out.idle_ns += c.idle_ns;
            if (c.idle_since && c.idle_since < out.taken_ns)
                out.idle_ns += out.taken_ns - c.idle_since;
        }
    }
    if (bpf_map__lookup_elem(skel_->maps.hot_state, &zero, sizeof zero, cpu.data(), cpu.size() * sizeof(ls_cpu_state),
                             0) == 0) {
        RawCounters& r = out.counters;
        for (const ls_cpu_state& state : cpu) {
            const ls_counters& c = state.cnt;
            r.begins += c.begins;
            r.ends += c.ends;
#define LOCKSCOPE_X(name, version) r.name += c.name;
            LS_RUN_COUNTS(LOCKSCOPE_X)
#undef LOCKSCOPE_X
#define LOCKSCOPE_X(name, label) r.lost.name += c.lost_##name;
            LS_LOST_CAUSES(LOCKSCOPE_X)
#undef LOCKSCOPE_X
        }
    }
}

// lock_index gives each (lock, kind) its row of lock_stats once; the index is
// read first, so a row added meanwhile is read at the next snapshot, whole.
// While the programs run, a row lags by the episodes still pending on a CPU
// (at most one per CPU, added at that CPU's next event): never counted twice,
// never going back. Once they are detached, those are added here.
void Probe::read_locks(RawSnapshot& out)
{
    std::vector<std::pair<ls_lock_key, uint32_t>> keys;
    for_each_entry<ls_lock_key, uint32_t>(
        skel_->maps.lock_index, 1, [&](const ls_lock_key& key, const uint32_t* row) { keys.emplace_back(key, *row); });
    uint32_t rows = 0;
    for (const auto& [key, row] : keys)
        rows = std::max(rows, row + 1);
    std::vector<ls_lock_stats> stats = read_percpu_rows<ls_lock_stats>(skel_->maps.lock_stats, rows, possible_cpus_);
    if (detached_)
        add_pending(stats, rows);
    for (const auto& [key, row] : keys) {
        RawLock lock;
        lock.address = key.lock;
        lock.flags = key.flags;
        for (uint32_t cpu = 0; cpu < possible_cpus_; cpu++)
            lock.counters.add(to_counters(stats[size_t(row) * possible_cpus_ + cpu]));
        scale_timed(lock.counters, time_period_);
        lock.identity = identity_of(row);
        out.locks.push_back(std::move(lock));
    }
}

// Each CPU's episode that ended but is not in its lock's row yet (lockscope_abi.h,
// ls_pending), added as the BPF side would: only once nothing runs, as a
// pending slot read while programs run could be folded between two reads.
void Probe::add_pending(std::vector<ls_lock_stats>& stats, uint32_t rows)
{
    const uint32_t zero = 0;
    std::vector<ls_cpu_state> cpu(possible_cpus_);
    if (bpf_map__lookup_elem(skel_->maps.hot_state, &zero, sizeof zero, cpu.data(), cpu.size() * sizeof(ls_cpu_state),
                             0) != 0)
        return;
    for (uint32_t c = 0; c < possible_cpus_; c++) {
        const ls_pending& p = cpu[c].pending;
        if (p.row_plus1 == 0 || p.row_plus1 > rows)
            continue;
        ls_account(&stats[size_t(p.row_plus1 - 1) * possible_cpus_ + c], &p.ep, p.end_ns, p.ret, time_period_ > 1);
    }
}

// Written once, before the row was published in lock_index: read once.
const RawIdentity& Probe::identity_of(uint32_t row)
{
    if (row >= identities_.size())
        identities_.resize(row + 1);
    std::optional<RawIdentity>& cached = identities_[row];
    if (cached)
        return *cached;
    ls_lock_ident id{};
    cached.emplace();
    if (bpf_map__lookup_elem(skel_->maps.lock_ident, &row, sizeof row, &id, sizeof id, 0) != 0)
        return *cached;
    RawIdentity& r = *cached;
    auto text = [](const char* s, size_t n) { return std::string(s, strnlen(s, n)); };
    r.sources = id.sources;
    r.cache = id.cache;
    r.cache_name = text(id.cache_name, sizeof id.cache_name);
    r.object_size = id.object_size;
    r.slab_size = id.slab_size;
    r.red_left_pad = id.red_left_pad;
    r.order = id.order;
    r.min_order = id.min_order;
    r.task_member = id.task_member;
    r.object = id.object;
    r.tgid = id.tgid;
    r.inode_ino = id.inode_ino;
    r.inode_dev = id.inode_dev;
    r.fs_type = text(id.fs_type, sizeof id.fs_type);
    r.dentry_name = text(id.dentry_name, sizeof id.dentry_name);
    return r;
}

// Samples and wait of a per-CPU ls_stack_stats value, over the CPUs; the
// wait, of timed episodes only under record --sample, scaled as the locks'.
static std::pair<uint64_t, uint64_t> sum_cpus(const ls_stack_stats* per_cpu, uint32_t cpus, uint32_t time_period)
{
    std::pair<uint64_t, uint64_t> sum{0, 0};
    for (uint32_t cpu = 0; cpu < cpus; cpu++) {
        sum.first += per_cpu[cpu].samples;
        sum.second += per_cpu[cpu].wait_ns;
    }
    sum.second *= time_period;
    return sum;
}

void Probe::read_stacks(RawSnapshot& out)
{
    std::vector<ls_stack_key> fresh;  // stacks not yet delivered, fetched after the walk
    for_each_entry<ls_stack_key, ls_stack_stats>(
        skel_->maps.stack_samples, possible_cpus_, [&](const ls_stack_key& key, const ls_stack_stats* per_cpu) {
            const auto [samples, wait_ns] = sum_cpus(per_cpu, possible_cpus_, time_period_);
            out.stacks.push_back({key.lock, key.flags, key.stack_id, key.role, samples, wait_ns});
            if (!delivered_stacks_.count(key.stack_id))
                fresh.push_back(key);
        });
    for (const ls_stack_key& key : fresh) {
        if (delivered_stacks_.count(key.stack_id))
            continue;
        uint64_t ips[LS_MAX_STACK_DEPTH] = {};
        const uint32_t id = uint32_t(key.stack_id);
        bpf_map* frames_map = id & LS_HOLDER_STACK_BIT ? skel_->maps.holder_stacks : skel_->maps.stacks;
        if (bpf_map__lookup_elem(frames_map, &id, sizeof id, ips, sizeof ips, 0) != 0)
            continue;
        std::vector<uint64_t>& frames = out.stack_ips[key.stack_id];
        for (uint64_t ip : ips) {
            if (ip == 0)
                break;
            frames.push_back(ip);
        }
        delivered_stacks_.insert(key.stack_id);
    }
}

void Probe::read_edges(RawSnapshot& out)
{
    for_each_entry<ls_edge_key, ls_stack_stats>(
        skel_->maps.chain_edges, possible_cpus_, [&](const ls_edge_key& key, const ls_stack_stats* per_cpu) {
            const auto [samples, wait_ns] = sum_cpus(per_cpu, possible_cpus_, time_period_);
            out.edges.push_back({key.lock, key.flags, key.holder_lock, key.holder_flags, samples, wait_ns});
        });
}

void Probe::read_holder_tasks(RawSnapshot& out)
{
    for_each_entry<ls_holder_task_key, ls_holder_task>(
        skel_->maps.holder_tasks, 1, [&](const ls_holder_task_key& key, const ls_holder_task* v) {
            out.holder_tasks.push_back({key.lock,
                                        key.flags,
                                        {.tid = key.tid,
                                         .tgid = v->tgid,
                                         .comm = std::string(v->comm, strnlen(v->comm, sizeof v->comm)),
                                         .samples = v->samples}});
        });
}

void Probe::read_tasks(RawSnapshot& out)
{
    for_each_entry<uint32_t, ls_task_stats>(skel_->maps.task_stats, 1, [&](uint32_t pid, const ls_task_stats* v) {
        RawTask t;
        t.pid = pid;
        t.tgid = v->tgid;
        t.comm.assign(v->comm, strnlen(v->comm, sizeof v->comm));
#define LOCKSCOPE_X(name) t.counters.name = v->name;
        LS_TASK_COUNTERS(LOCKSCOPE_X)
#undef LOCKSCOPE_X
        scale_timed(t.counters, time_period_);
        t.cgroup_id = v->cgroup;
        out.tasks.push_back(std::move(t));
    });
}

void Probe::read_lock_cgroups(RawSnapshot& out)
{
    for_each_entry<ls_lock_cgroup_key, uint64_t>(
        skel_->maps.lock_cgroups, 1, [&](const ls_lock_cgroup_key& key, const uint64_t* samples) {
            out.lock_cgroups.push_back({key.lock, key.flags, key.cgroup, *samples});
        });
}

}  // namespace lockscope::probe
