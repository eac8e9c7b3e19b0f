#include "probe/user_probe.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <tuple>
#include <utility>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpfmap/vmlinux_btf.h"
#include "core/error.h"
#include "bpfmap/map_read.h"
#include "unwind/user_unwinder.h"
#include "identity/user_data_symbols.h"
#include "pipeline/user_rows.h"
#include "probe/user_word_waits.h"
#include "userlock_abi.h"
#include "userlock_bpf.skel.h"

namespace lockscope::userlock {
namespace {

// The programs test the futex calls' numbers as constants.
static_assert(SYS_futex == LS_ULOCK_NR_FUTEX, "userlock_abi.h: another futex number");
#ifdef SYS_futex_waitv
static_assert(SYS_futex_waitv == LS_ULOCK_NR_FUTEX_WAITV, "userlock_abi.h: another futex_waitv number");
#endif
#ifdef SYS_futex_wait
static_assert(SYS_futex_wait == LS_ULOCK_NR_FUTEX_WAIT, "userlock_abi.h: another futex_wait number");
#endif

constexpr const char* kRemedy = "run as root (or with CAP_BPF and CAP_PERFMON) on a kernel with BTF";

using Key = std::pair<pid_t, uint64_t>;  // (tgid, futex address)

ForkedFrom forked_from(const ls_ulock_sample& sample)
{
    ForkedFrom out{};
    std::copy(std::begin(sample.forked_from), std::end(sample.forked_from), out.begin());
    return out;
}

constexpr uint32_t kSymbolTries = 4;  // samples of a word at which its data symbol is looked up

// The chain records of every futex word: (tgid, address) -> their keys and stats.
std::map<std::pair<pid_t, uint64_t>, std::vector<std::pair<ls_ulock_chain_key, ls_ulock_chain_stats>>> read_chains(
    bpf_map* map)
{
    std::map<std::pair<pid_t, uint64_t>, std::vector<std::pair<ls_ulock_chain_key, ls_ulock_chain_stats>>> out;
    probe::for_each_entry<ls_ulock_chain_key, ls_ulock_chain_stats>(
        map, 1, [&](const ls_ulock_chain_key& key, const ls_ulock_chain_stats* stats) {
            out[{static_cast<pid_t>(key.tgid), key.uaddr}].emplace_back(key, *stats);
        });
    return out;
}

// Whether this kernel can follow an owner TID to its task (bpf_task_from_pid, 6.2+).
bool kernel_finds_tasks_by_pid()
{
    const btf* vmlinux = probe::vmlinux_btf();
    return vmlinux != nullptr && btf__find_by_name_kind(vmlinux, "bpf_task_from_pid", BTF_KIND_FUNC) > 0;
}

// The wakers of every futex word: (tgid, address) -> its wakers.
std::map<std::pair<pid_t, uint64_t>, std::vector<UserLockWaker>> read_wakers(bpf_map* map)
{
    std::map<std::pair<pid_t, uint64_t>, std::vector<UserLockWaker>> out;
    probe::for_each_entry<ls_ulock_waker_key, ls_ulock_waker>(
        map, 1, [&](const ls_ulock_waker_key& key, const ls_ulock_waker* value) {
            UserLockWaker w;
            w.waker_tid = key.waker_tid;
            w.waker_pid = value->waker_tgid;
            w.waker_comm.assign(value->comm, strnlen(value->comm, sizeof(value->comm)));
            w.wakes = value->wakes;
            out[{static_cast<pid_t>(key.tgid), key.uaddr}].push_back(std::move(w));
        });
    return out;
}

// The holder split's tasks of every futex word: (tgid, address) -> the owners
// its waiters followed, and what preempted them.
std::map<std::pair<pid_t, uint64_t>, std::vector<HolderTime>> read_holders(bpf_map* map)
{
    std::map<std::pair<pid_t, uint64_t>, std::vector<HolderTime>> out;
    probe::for_each_entry<ls_ulock_holder_key, ls_holder_time>(
        map, 1, [&](const ls_ulock_holder_key& key, const ls_holder_time* value) {
            HolderTime h;
            h.role = key.role == LS_ULOCK_PREEMPTOR ? "preemptor" : "holder";
            h.tid = key.tid;
            h.tgid = value->tgid;
            h.comm.assign(value->comm, strnlen(value->comm, sizeof(value->comm)));
            h.running_ns = value->ns[LS_HOLDER_RUNNING];
            h.runnable_ns = value->ns[LS_HOLDER_RUNNABLE];
            h.asleep_ns = value->ns[LS_HOLDER_ASLEEP];
            h.waits = value->waits;
            out[{static_cast<pid_t>(key.tgid), key.uaddr}].push_back(std::move(h));
        });
    return out;
}

}  // namespace

struct Recorder::State {
    userlock_bpf* skel = nullptr;
    UntimedState untimed_given;  // what each read gave the waits not timed (word_waits.h)
    ring_buffer* ring = nullptr;
    unwind::UserUnwinder unwinder;
    DataSymbols data_symbols;
    std::map<Key, KeySamples> samples;
    uint64_t received = 0;
    std::set<pid_t> sampled;  // the processes whose samples came since take_sampled()
    uint64_t unwound = 0;
    // kernel lock, kind bits, kernel stack id, process -> its user stacks
    std::map<std::tuple<uint64_t, uint32_t, int32_t, pid_t>, KindSamples> kernel_stacks;
    uint64_t kernel_received = 0;
    std::vector<ls_ulock_event> events;  // finished waits (Options::trace_waits), since take_waits()
    std::string chains = "off (no kernel recorder)";

    ~State()
    {
        ring_buffer__free(ring);
        userlock_bpf::destroy(skel);
    }

    // A copied user stack of process tgid, unwound; the process is marked as
    // running (its maps can be read).
    unwind::UnwoundStack unwind_copy(uint32_t tgid, const ls_user_stack& copied, uint32_t tid,
                                     std::span<const pid_t> forked_from = {})
    {
        sampled.insert(static_cast<pid_t>(tgid));
        for (pid_t ancestor : forked_from) {
            if (ancestor > 0) {
                sampled.insert(ancestor);  // its maps unwind tgid's samples if tgid exits
            }
        }
        const unwind::UserRegs regs{copied.regs.ip, copied.regs.sp, copied.regs.bp};
        const std::span<const uint8_t> copy(copied.data, std::min<uint32_t>(copied.size, LS_USER_STACK_BYTES));
        return unwinder.unwind(static_cast<pid_t>(tgid), regs, copy, regs.sp, static_cast<pid_t>(tid), forked_from);
    }

    void take(const ls_ulock_sample& sample)
    {
        ++received;
        const ForkedFrom ancestors = forked_from(sample);
        const auto stack = unwind_copy(sample.tgid, sample.stack, sample.tid, ancestors);
        const bool named = std::any_of(stack.frames.begin(), stack.frames.end(),
                                       [](const auto& frame) { return !frame.function.empty(); });
        unwound += named ? 1 : 0;
        auto& key = samples[{static_cast<pid_t>(sample.tgid), sample.uaddr}];
        key.address = sample.uaddr;
        key.tid = sample.tid;
        key.forked_from = ancestors;
        if (!key.symbol && key.symbol_tries < kSymbolTries) {
            ++key.symbol_tries;
            key.symbol = data_symbols.lookup(static_cast<pid_t>(sample.tgid), sample.uaddr,
                                             static_cast<pid_t>(sample.tid), ancestors);
            if (!key.shared) {
                key.shared = shared_place(static_cast<pid_t>(sample.tgid), sample.uaddr, static_cast<pid_t>(sample.tid),
                                          ancestors);
            }
        }
        if (!named && !(sample.op & kPiOps)) {
            // A stack with no named frame says nothing about what waited:
            // it does not vote (a word with only such samples is left out
            // as "not unwound", not as "other").
            ++key.not_unwound;
            return;
        }
        const bool pi = sample.op & kPiOps;
        const auto classification = pi ? classify_pi(classify(stack.frames)) : classify(stack.frames);
        ++key.classes[classification.wait_class];
        const bool mutex = classification.wait_class == WaitClass::lock && classification.kind == "pthread_mutex";
        if ((pi || mutex) && sample.owner_tid != 0 && sample.owner_tid != sample.tid) {
            key.owner_tids.insert(sample.owner_tid);
        }
        if (classification.wait_class == WaitClass::lock) {
            auto& kind = key.lock_kinds[classification.kind];
            ++kind.samples;
            if (const auto caller = first_caller_of(stack.frames); !caller.name.empty()) {
                ++kind.callers[caller.name];
                if (caller.is_offset) {
                    kind.offset_callers.insert(caller.name);
                }
            }
            add_stack(kind, stack.frames, sample.wait_ns);
        }
    }

    // A kernel lock's sampled waiter: its user stack, above its kernel stack.
    void take_kernel(const ls_kernel_user_sample& sample)
    {
        ++kernel_received;
        const auto stack = unwind_copy(sample.tgid, sample.stack, sample.tid);
        KindSamples& under = kernel_stacks[{sample.lock, sample.flags, sample.stack_id, pid_t(sample.tgid)}];
        ++under.samples;
        add_stack(under, stack.frames, sample.wait_ns);
    }

    static int on_event(void* ctx, void* data, size_t size)
    {
        if (size >= sizeof(ls_ulock_event)) {
            auto* state = static_cast<State*>(ctx);
            state->events.emplace_back();
            std::memcpy(&state->events.back(), data, sizeof(ls_ulock_event));
        }
        return 0;
    }

    static int on_kernel_sample(void* ctx, void* data, size_t size)
    {
        if (size >= sizeof(ls_kernel_user_sample)) {
            // 8 KiB: not on the stack of libbpf's callback.
            auto sample = std::make_unique<ls_kernel_user_sample>();
            std::memcpy(sample.get(), data, sizeof(*sample));
            static_cast<State*>(ctx)->take_kernel(*sample);
        }
        return 0;
    }

    static int on_sample(void* ctx, void* data, size_t size)
    {
        if (size >= sizeof(ls_ulock_sample)) {
            ls_ulock_sample sample;
            std::memcpy(&sample, data, sizeof(sample));
            static_cast<State*>(ctx)->take(sample);
        }
        return 0;
    }
};

namespace {

// Gives the object the kernel recorder's contention state before it loads;
// whether chains are on, and `status` says so or why not.
bool share_kernel_state(userlock_bpf* skel, const Options& options, std::string& status)
{
    const bool task_state = options.kernel.task_state >= 0;
    if (task_state != (options.kernel.cpu_states >= 0)) {
        throw Error("share the kernel recorder's maps", "userlock", EINVAL,
                    "give both task_state and cpu_states (probe::Probe::contention_state_fds)");
    }
    if (!task_state) {
        return false;
    }
    if (!kernel_finds_tasks_by_pid()) {
        status = "unavailable (the kernel has no bpf_task_from_pid: needs Linux 6.2+)";
        return false;
    }
    if (const int err = bpf_map__reuse_fd(skel->maps.task_state, options.kernel.task_state); err != 0) {
        throw Error("reuse the kernel recorder's map", "task_state", -err);
    }
    if (const int err = bpf_map__reuse_fd(skel->maps.cpu_states, options.kernel.cpu_states); err != 0) {
        throw Error("reuse the kernel recorder's map", "cpu_states", -err);
    }
    status = "on";
    return true;
}

// Every process of the machine: more futex words. 32,768 entries each: about
// 7 MiB of kernel memory per CPU for the per-word rows, 6 MiB for the wakers.
void size_for_every_process(userlock_bpf* skel)
{
    constexpr uint32_t kEntries = 32768;
    skel->rodata->max_rows = kEntries;
    for (bpf_map* map : {skel->maps.wait_index, skel->maps.wakers}) {
        if (const int err = bpf_map__set_max_entries(map, kEntries); err != 0) {
            throw Error("size the map", bpf_map__name(map), -err);
        }
    }
}

}  // namespace

Recorder::Recorder(std::unique_ptr<State> state) noexcept : state_(std::move(state)) {}
Recorder::Recorder(Recorder&& other) noexcept = default;
Recorder& Recorder::operator=(Recorder&& other) noexcept = default;
Recorder::~Recorder() = default;

Recorder Recorder::prepare(const Options& options)
{
    static_assert(sizeof(ls_ulock_key) == 16 && sizeof(ls_ulock_stats) == 32 + 8 * (14 + LS_HIST_BUCKETS),
                  "userlock_abi.h changed");
    static_assert(sizeof(ls_ulock_waker_key) == 16 && sizeof(ls_ulock_waker) == 32, "userlock_abi.h changed");
    static_assert(sizeof(ls_ulock_holder_key) == 24 && sizeof(ls_holder_time) == 56, "userlock_abi.h changed");
    static_assert(LS_ULOCK_MAX_TARGETS == 1024, "record/user_locks.cpp says how many processes are followed");
    static_assert(sizeof(ls_ulock_chain_key) == 24 && sizeof(ls_ulock_chain_stats) == 96, "userlock_abi.h changed");
    static_assert(sizeof(ls_ulock_cpu) == 24, "userlock_abi.h changed");
    auto state = std::make_unique<State>();
    state->skel = userlock_bpf::open();
    if (state->skel == nullptr) {
        throw Error("open BPF program", "userlock", errno, kRemedy);
    }
    auto* rodata = state->skel->rodata;
    rodata->nr_cpus = static_cast<uint32_t>(std::max(libbpf_num_possible_cpus(), 1));
    if (const int err = bpf_map__set_max_entries(state->skel->maps.ulock_cpus, rodata->nr_cpus); err != 0) {
        throw Error("size the map", "ulock_cpus", -err);
    }
    rodata->sample_one_in = std::max<uint32_t>(options.sample_one_in, 1);
    rodata->max_samples_per_sec = options.max_samples_per_sec;
    rodata->follow_children = options.follow_children && !options.all_processes ? 1 : 0;
    rodata->all_processes = options.all_processes ? 1 : 0;
    rodata->self_tgid = static_cast<uint32_t>(getpid());
    if (options.trace_waits) {
        if (const int err = bpf_map__set_max_entries(state->skel->maps.events, options.trace_buffer_bytes); err != 0) {
            throw Error("size the map", "events", -err);
        }
    }
    if (options.all_processes) {
        size_for_every_process(state->skel);
    }
    // A row's entries, one per possible CPU (word_waits.cpp).
    if (const int err = bpf_map__set_max_entries(state->skel->maps.wait_rows, rodata->max_rows * rodata->nr_cpus);
        err != 0) {
        throw Error("size the map", "wait_rows", -err);
    }
    const bool chains = share_kernel_state(state->skel, options, state->chains);
    bpf_program__set_autoload(state->skel->progs.userlock_switch, !chains);
    bpf_program__set_autoload(state->skel->progs.userlock_switch_chains, chains);
    rodata->follow_holders = chains ? 1 : 0;
    bpf_program__set_autoload(state->skel->progs.userlock_enter, !options.trace_waits);
    bpf_program__set_autoload(state->skel->progs.userlock_enter_traced, options.trace_waits);
    bpf_program__set_autoload(state->skel->progs.userlock_exit, !options.trace_waits);
    bpf_program__set_autoload(state->skel->progs.userlock_exit_traced, options.trace_waits);
    // Every fork and exit of the machine runs these: only when children are followed.
    const bool children = options.follow_children && !options.all_processes;
    bpf_program__set_autoload(state->skel->progs.userlock_fork, children);
    bpf_program__set_autoload(state->skel->progs.userlock_exit_process, children);
    if (const int err = userlock_bpf::load(state->skel); err != 0) {
        throw Error("load BPF program", "userlock", -err, kRemedy);
    }
    const int targets = bpf_map__fd(state->skel->maps.targets);
    for (pid_t tgid : options.tgids) {
        const uint32_t key = static_cast<uint32_t>(tgid);
        const uint8_t yes = 1;
        if (bpf_map_update_elem(targets, &key, &yes, BPF_ANY) != 0) {
            throw Error("add target process", "userlock targets", errno);
        }
    }
    state->ring = ring_buffer__new(bpf_map__fd(state->skel->maps.samples), State::on_sample, state.get(), nullptr);
    if (state->ring == nullptr) {
        throw Error("open ring buffer", "userlock samples", errno);
    }
    if (options.trace_waits) {
        if (const int err =
                ring_buffer__add(state->ring, bpf_map__fd(state->skel->maps.events), State::on_event, state.get());
            err != 0) {
            throw Error("open ring buffer", "userlock events", -err);
        }
    }
    if (options.kernel.user_stacks >= 0) {
        if (const int err =
                ring_buffer__add(state->ring, options.kernel.user_stacks, State::on_kernel_sample, state.get());
            err != 0) {
            throw Error("open ring buffer", "kernel-lock user stacks", -err);
        }
    }
    return Recorder(std::move(state));
}

void Recorder::start()
{
    if (const int err = userlock_bpf::attach(state_->skel); err != 0) {
        throw Error("attach tp_btf/sys_enter and sys_exit", "userlock", -err, kRemedy);
    }
}

int Recorder::poll(int timeout_ms)
{
    const uint64_t before = state_->received + state_->kernel_received;
    const int err = ring_buffer__poll(state_->ring, timeout_ms);
    if (err < 0 && err != -EINTR) {
        throw Error("read ring buffer", "userlock samples", -err);
    }
    return static_cast<int>(state_->received + state_->kernel_received - before);
}

std::vector<Episode> Recorder::take_waits()
{
    std::vector<Episode> out;
    out.reserve(state_->events.size());
    for (const ls_ulock_event& w : state_->events) {
        Episode& e = out.emplace_back();
        e.tid = w.tid;
        e.tgid = w.tgid;
        e.lock_address = w.uaddr;
        e.lock_flags = kFutexWaitFlag;
        e.begin_ns = w.start_ns;
        e.end_ns = w.end_ns;
        e.spin_ns = w.oncpu_ns;
        e.sleep_ns = w.asleep_ns;
        e.preempt_ns = w.runnable_ns;
        e.ret = w.ret;
        e.waker_tid = w.waker_tid;
        e.waker_tgid = w.waker_tid ? w.waker_tgid : 0;
        e.wake_ns = w.wake_ns;
    }
    state_->events.clear();
    return out;
}

void Recorder::stop()
{
    userlock_bpf::detach(state_->skel);
    ring_buffer__consume(state_->ring);
}

Recording Recorder::read()
{
    ring_buffer__consume(state_->ring);
    Recording out;
    const auto& counters = state_->skel->bss->counters;
    out.counts.lost_keys = counters.lost_keys;
    out.counts.lost_samples = counters.lost_samples;
    out.counts.lost_inflight = counters.lost_inflight;
    out.counts.rate_limited = counters.rate_limited;
    out.lost_chains = counters.lost_chains;
    out.lost_targets = counters.lost_targets;
    out.counts.lost_wakers = counters.lost_wakers;
    out.lost_events = counters.lost_events;
    out.lost_holders = counters.lost_holders;
    out.chains = state_->chains;
    out.counts.samples = state_->received;
    out.counts.samples_unwound = state_->unwound;
    out.kernel_user_samples = state_->kernel_received;
    for (const auto& [key, under] : state_->kernel_stacks) {
        for (const auto& [frames, stack] : under.stacks) {
            out.kernel_user_stacks.push_back({.address = std::get<0>(key),
                                              .flags = std::get<1>(key),
                                              .stack_id = std::get<2>(key),
                                              .tgid = uint32_t(std::get<3>(key)),
                                              .frames = frames,
                                              .samples = stack.samples,
                                              .wait_ns = stack.wait_ns});
        }
    }

    std::map<RowKey, RowBuilder> rows;
    const auto chains = read_chains(state_->skel->maps.chain_waits);
    const auto wakers = read_wakers(state_->skel->maps.wakers);
    const auto holders = read_holders(state_->skel->maps.holder_waits);
    static const std::vector<UserLockWaker> kNoWakers;
    const auto add_key = [&](const ls_ulock_key& key, const ls_ulock_stats& stats) {
        const pid_t tgid = static_cast<pid_t>(key.tgid);
        auto found = state_->samples.find({tgid, key.uaddr});
        if (found == state_->samples.end() && (stats.ops & kPiOps)) {
            // A PI futex is a lock even with no sample: counted, unnamed.
            found = state_->samples.emplace(Key{tgid, key.uaddr}, KeySamples{.address = key.uaddr}).first;
            found->second.classes[WaitClass::lock] = 0;
            found->second.lock_kinds["futex_pi"];
        }
        const auto* decided = found != state_->samples.end() ? most_common(found->second.classes) : nullptr;
        if (decided != nullptr && *decided != WaitClass::lock) {
            out.other_words.insert({tgid, key.uaddr});
        }
        if (decided == nullptr || *decided != WaitClass::lock) {
            const bool failed_unwinds = found != state_->samples.end() && found->second.not_unwound != 0;
            const std::string reason = decided != nullptr ? std::string(to_string(*decided))
                                       : failed_unwinds   ? "not unwound"
                                                          : "unsampled";
            UserLockLeftOut& left = out.left_out[reason];
            left.reason = reason;
            ++left.addresses;
            left.waits += stats.waits;
            return;
        }
        const auto word_wakers = wakers.find({tgid, key.uaddr});
        RowKey main_row;
        const auto owners_row = add_word(
            rows, tgid, found->second, stats, word_wakers != wakers.end() ? word_wakers->second : kNoWakers,
            found->second.symbol ? found->second.symbol
                                 : state_->data_symbols.lookup(tgid, key.uaddr, static_cast<pid_t>(found->second.tid),
                                                               found->second.forked_from),
            main_row);
        if (!std::get<1>(main_row).empty()) {
            out.lock_words[{tgid, key.uaddr}] = {std::get<1>(main_row), std::get<2>(main_row)};
        }
        const auto word_holders = holders.find({tgid, key.uaddr});
        if (owners_row && (stats.holder_waits != 0 || word_holders != holders.end())) {
            static const std::vector<HolderTime> kNoHolders;
            add_holder_split(rows[*owners_row], stats,
                             word_holders != holders.end() ? word_holders->second : kNoHolders);
        }
        const auto word_chains = chains.find({tgid, key.uaddr});
        if (owners_row && word_chains != chains.end()) {
            for (const auto& [chain_key, chain_stats] : word_chains->second) {
                add_chain(rows[*owners_row].chains, chain_key, chain_stats);
            }
        }
    };
    UntimedWaits untimed;
    for (const auto& [key, stats] : read_word_waits(state_->skel, state_->untimed_given, untimed)) {
        add_key(key, stats);
    }
    out.counts.untimed_waits = untimed.waits;
    out.counts.untimed_estimated_ns = untimed.estimated_ns;
    for (auto& [id, builder] : rows) {
        out.locks.push_back(finish_row(builder));
    }
    std::sort(out.locks.begin(), out.locks.end(),
              [](const UserLock& a, const UserLock& b) { return a.wait_ns > b.wait_ns; });
    return out;
}

std::size_t Recorder::in_flight() const
{
    // Each CPU counts the waits begun on it less those ended on it, at the
    // head of its entry (one per possible CPU).
    bpf_map* map = state_->skel->maps.ulock_cpus;
    std::vector<uint8_t> value(bpf_map__value_size(map));
    int64_t count = 0;
    for (uint32_t cpu = 0; cpu < bpf_map__max_entries(map); ++cpu) {
        if (bpf_map__lookup_elem(map, &cpu, sizeof(cpu), value.data(), value.size(), 0) != 0) {
            throw Error("read the map", "ulock_cpus", errno);
        }
        ls_ulock_cpu counts;
        std::memcpy(&counts, value.data(), sizeof(counts));
        count += counts.in_flight;
    }
    return static_cast<std::size_t>(std::max<int64_t>(count, 0));
}

std::vector<int> Recorder::prog_fds() const
{
    std::vector<int> fds;
    bpf_program* prog = nullptr;
    bpf_object__for_each_program(prog, state_->skel->obj)
    {
        if (bpf_program__autoload(prog)) {
            fds.push_back(bpf_program__fd(prog));
        }
    }
    return fds;
}

std::set<pid_t> Recorder::take_sampled()
{
    return std::exchange(state_->sampled, {});
}

std::vector<pid_t> Recorder::targets() const
{
    std::vector<pid_t> out;
    probe::for_each_entry<uint32_t, uint8_t>(state_->skel->maps.targets, 1,
                                             [&](uint32_t tgid, const uint8_t*) { out.push_back(pid_t(tgid)); });
    return out;
}

void Recorder::read_names(pid_t tgid)
{
    state_->data_symbols.forget(tgid);
    state_->data_symbols.lookup(tgid, 0);
    // Its modules too: samples still in the ring when it exits are unwound
    // with them. One that cannot be read now is read at its next sample.
    std::string why;
    state_->unwinder.load(tgid, why);
}

}  // namespace lockscope::userlock
