#include "userlock/recorder.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <tuple>
#include <utility>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "core/analysis/lock_vocabulary.h"
#include "core/error.h"
#include "bpfmap/map_read.h"
#include "unwind/user_unwinder.h"
#include "userlock/data_symbols.h"
#include "userlock/word_waits.h"
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

std::set<std::string> op_names(uint32_t ops)
{
    static constexpr std::pair<uint32_t, const char*> kOps[] = {
        {LS_ULOCK_OP_WAIT, "FUTEX_WAIT"},
        {LS_ULOCK_OP_WAIT_BITSET, "FUTEX_WAIT_BITSET"},
        {LS_ULOCK_OP_LOCK_PI, "FUTEX_LOCK_PI"},
        {LS_ULOCK_OP_LOCK_PI2, "FUTEX_LOCK_PI2"},
        {LS_ULOCK_OP_WAIT_REQUEUE_PI, "FUTEX_WAIT_REQUEUE_PI"},
        {LS_ULOCK_OP_WAITV, "futex_waitv"},
        {LS_ULOCK_OP_FUTEX_WAIT, "futex_wait"},
    };
    std::set<std::string> names;
    for (const auto& [bit, name] : kOps) {
        if (ops & bit) {
            names.insert(name);
        }
    }
    return names;
}

using Key = std::pair<pid_t, uint64_t>;  // (tgid, futex address)

// The futex operations that take a PI futex: lock waits whatever the stack.
constexpr uint32_t kPiOps = LS_ULOCK_OP_LOCK_PI | LS_ULOCK_OP_LOCK_PI2 | LS_ULOCK_OP_WAIT_REQUEUE_PI;

using Frames = std::vector<std::string>;

// The samples of one lock kind on one futex address.
struct KindSamples {
    uint64_t samples = 0;
    std::map<std::string, uint64_t> callers;  // first caller outside the locking library -> samples
    std::set<std::string> offset_callers;     // of them, those named by module and offset (no symbol)
    std::map<Frames, SampledStack> stacks;    // at most kMaxStacks, then "[other stacks]"
};

constexpr std::size_t kMaxStacks = 32;
constexpr uint32_t kSymbolTries = 4;  // samples of a word at which its data symbol is looked up

// A frame as stored: its function, else where it is.
std::string frame_text(const unwind::UserFrame& frame)
{
    if (!frame.function.empty()) {
        return frame.function;
    }
    if (frame.module.empty()) {
        return "[unknown]";
    }
    char offset[32];
    std::snprintf(offset, sizeof(offset), "+0x%llx]", static_cast<unsigned long long>(frame.module_offset));
    return "[" + frame.module.substr(frame.module.rfind('/') + 1) + offset;
}

void add_stack(KindSamples& kind, const std::vector<unwind::UserFrame>& frames, uint64_t wait_ns)
{
    Frames key;
    for (const auto& frame : frames) {
        key.push_back(frame_text(frame));
    }
    if (key.empty()) {
        key = {"[no frame unwound]"};
    }
    if (!kind.stacks.count(key) && kind.stacks.size() >= kMaxStacks) {
        key = {"[other stacks]"};
    }
    SampledStack& stack = kind.stacks[key];
    stack.frames = key;
    stack.samples += 1;
    stack.wait_ns += wait_ns;
}

// What the samples of one futex address said. One word can serve several
// kinds: glibc's rwlock readers and its waiting writer sleep on the same
// phase futex.
struct KeySamples {
    std::map<WaitClass, uint64_t> classes;
    uint64_t not_unwound = 0;  // samples whose stack named no frame: no vote
    uint32_t tid = 0;          // a thread that waited on it (whose maps are the process's)
    // The lock's data symbol, looked up while the process runs (at its
    // first samples: a process's maps can be unreadable for a moment).
    std::optional<DataSymbol> symbol;
    uint32_t symbol_tries = 0;
    std::map<std::string, KindSamples> lock_kinds;  // the samples of lock waits, per kind
    std::set<uint32_t> owner_tids;
};

template <typename Map>
const typename Map::key_type* most_common(const Map& counts)
{
    const typename Map::value_type* best = nullptr;
    for (const auto& entry : counts) {
        if (best == nullptr || entry.second > best->second) {
            best = &entry;
        }
    }
    return best != nullptr ? &best->first : nullptr;
}

using RowKey = std::tuple<pid_t, std::string, std::string>;  // (tgid, name, kind)
using KernelLockKey = std::pair<uint64_t, uint32_t>;         // (address, kind bits)

struct RowBuilder {
    UserLock row;
    std::map<std::string, uint64_t> callers;
    std::set<std::string> offset_callers;
    std::map<Frames, SampledStack> stacks;
    std::map<KernelLockKey, KernelChain> chains;
    std::map<uint32_t, Waker> wakers;  // by tid
};

constexpr const char* kRootStates[LS_ULOCK_ROOT_STATES] = {
    "running", "preempted", "sleeping", "io-wait", "reader-owned", "no-owner", "unknown", "unknown",
};

void add_chain(std::map<KernelLockKey, KernelChain>& chains, const ls_ulock_chain_key& key,
               const ls_ulock_chain_stats& stats)
{
    KernelChain& chain = chains[{key.kernel_lock, key.kernel_flags}];
    if (chain.kernel_lock == 0) {
        const LockKindInfo kind = lock_kind(key.kernel_flags);
        chain.kernel_lock = key.kernel_lock;
        chain.kernel_flags = key.kernel_flags;
        chain.kernel_kind = kind.kind;
        chain.kernel_mode = kind.mode;
    }
    chain.waits += stats.waits;
    chain.wait_ns += stats.wait_ns;
    chain.max_wait_ns = std::max<uint64_t>(chain.max_wait_ns, stats.max_wait_ns);
    chain.owner_tids.insert(stats.owner_tid);
    if (stats.root_tid != 0) {
        chain.root_tids.insert(stats.root_tid);
    }
    for (std::size_t state = 0; state < LS_ULOCK_ROOT_STATES; ++state) {
        if (stats.roots[state] != 0) {
            chain.root_states[kRootStates[state]] += stats.roots[state];
        }
    }
}

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
    btf* vmlinux = btf__load_vmlinux_btf();
    if (vmlinux == nullptr) {
        return false;
    }
    const bool found = btf__find_by_name_kind(vmlinux, "bpf_task_from_pid", BTF_KIND_FUNC) > 0;
    btf__free(vmlinux);
    return found;
}

// One futex word's waits, or the part of them one kind has.
struct WordWaits {
    UserLockWaits waits;               // only the counts and times
    std::map<uint32_t, Waker> wakers;  // by waker tid
};

WordWaits word_waits(const ls_ulock_stats& stats, const std::vector<Waker>& wakers)
{
    WordWaits w;
    w.waits.waits = stats.waits;
    w.waits.wait_ns = stats.wait_ns;
    w.waits.max_wait_ns = stats.max_wait_ns;
    w.waits.oncpu_ns = stats.oncpu_ns;
    w.waits.asleep_ns = stats.asleep_ns;
    w.waits.runnable_ns = stats.runnable_ns;
    w.waits.wakes = stats.wakes;
    std::copy(std::begin(stats.hist), std::end(stats.hist), w.waits.hist.begin());
    for (const Waker& waker : wakers) {
        w.wakers[waker.tid] = waker;
    }
    return w;
}

// Calls fn(whole's field, part's field) for each count and time a word's
// waits are shared by (not max_wait_ns: a kind's longest wait is the word's).
template <typename Fn>
void for_each_shared(const WordWaits& whole, WordWaits& part, Fn&& fn)
{
    fn(whole.waits.waits, part.waits.waits);
    fn(whole.waits.wait_ns, part.waits.wait_ns);
    fn(whole.waits.oncpu_ns, part.waits.oncpu_ns);
    fn(whole.waits.asleep_ns, part.waits.asleep_ns);
    fn(whole.waits.runnable_ns, part.waits.runnable_ns);
    fn(whole.waits.wakes, part.waits.wakes);
    for (std::size_t b = 0; b < whole.waits.hist.size(); ++b) {
        fn(whole.waits.hist[b], part.waits.hist[b]);
    }
    for (const auto& [tid, waker] : whole.wakers) {
        fn(waker.wakes, part.wakers[tid].wakes);
    }
}

// Makes the parts of a shared wait add up to it after rounding: the
// runnable part is what on CPU and asleep leave, and the histogram's
// rounding goes to its fullest bucket.
void settle_parts(UserLockWaits& w)
{
    w.oncpu_ns = std::min(w.oncpu_ns, w.wait_ns);
    w.asleep_ns = std::min(w.asleep_ns, w.wait_ns - w.oncpu_ns);
    w.runnable_ns = w.wait_ns - w.oncpu_ns - w.asleep_ns;
    uint64_t counted = 0;
    for (uint64_t n : w.hist) {
        counted += n;
    }
    auto fullest = std::max_element(w.hist.begin(), w.hist.end());
    if (counted < w.waits) {
        *fullest += w.waits - counted;
    } else {
        *fullest -= std::min(*fullest, counted - w.waits);
    }
}

// The share `num / den` of a word's waits; taken from `left`, so that what
// is left after every other kind's share goes, whole, to the main kind: the
// rows' sums are the word's. The parts of the wait are each shared the same
// way, so that they still add up to each share's wait (the last part is
// what the others leave).
WordWaits take_share(const WordWaits& whole, WordWaits& left, uint64_t num, uint64_t den)
{
    WordWaits part;
    part.waits.max_wait_ns = whole.waits.max_wait_ns;
    for (const auto& [tid, waker] : whole.wakers) {
        part.wakers[tid] = waker;
        part.wakers[tid].wakes = 0;
    }
    for_each_shared(whole, part, [&](uint64_t from, uint64_t& to) {
        to = static_cast<uint64_t>(static_cast<long double>(from) * num / den);
    });
    settle_parts(part.waits);
    for_each_shared(part, left, [](uint64_t taken, uint64_t& rest) { rest -= std::min(taken, rest); });
    settle_parts(left.waits);
    return part;
}

// Adds one futex word's waits of one kind to the row of the lock it names.
// Names, in order: the data symbol, the first caller's function, the data
// section and offset, the first caller's module and offset, none.
RowKey add_waits(std::map<RowKey, RowBuilder>& rows, pid_t tgid, const std::string& kind,
                 const std::optional<DataSymbol>& symbol, const KindSamples& kind_samples, const WordWaits& word,
                 uint32_t ops, const KeySamples& sampled)
{
    UserLock lock;
    lock.tgid = tgid;
    lock.kind = kind;
    const auto* caller = most_common(kind_samples.callers);
    const bool caller_is_offset = caller != nullptr && kind_samples.offset_callers.count(*caller) != 0;
    if (symbol && (symbol->source == "user-symbol" || caller == nullptr || caller_is_offset)) {
        lock.name = symbol->symbol;
        lock.module = symbol->module;
        lock.name_source = symbol->source;
    } else if (caller != nullptr) {
        lock.name = caller_lock_name(kind, *caller);
        lock.name_source = caller_is_offset ? "user-caller-offset" : "user-caller";
    } else {
        lock.name = caller_lock_name(kind, "unknown");
        lock.name_source = "unknown";
    }
    RowKey id{tgid, lock.name, kind};
    auto& builder = rows[id];
    if (builder.row.name.empty()) {
        builder.row = std::move(lock);
    }
    auto& row = builder.row;
    const UserLockWaits& w = word.waits;
    row.waits += w.waits;
    row.wait_ns += w.wait_ns;
    row.max_wait_ns = std::max<uint64_t>(row.max_wait_ns, w.max_wait_ns);
    row.oncpu_ns += w.oncpu_ns;
    row.asleep_ns += w.asleep_ns;
    row.runnable_ns += w.runnable_ns;
    row.wakes += w.wakes;
    for (std::size_t b = 0; b < row.hist.size(); ++b) {
        row.hist[b] += w.hist[b];
    }
    for (const auto& [tid, waker] : word.wakers) {
        if (waker.wakes == 0) {
            continue;
        }
        Waker& into = builder.wakers[tid];
        into.tid = waker.tid;
        into.tgid = waker.tgid;
        into.comm = waker.comm;
        into.wakes += waker.wakes;
    }
    row.samples += kind_samples.samples;
    row.ops.merge(op_names(ops));
    row.owner_tids.insert(sampled.owner_tids.begin(), sampled.owner_tids.end());
    for (const auto& [name, count] : kind_samples.callers) {
        builder.callers[name] += count;
    }
    builder.offset_callers.insert(kind_samples.offset_callers.begin(), kind_samples.offset_callers.end());
    for (const auto& [frames, stack] : kind_samples.stacks) {
        SampledStack& into = builder.stacks[frames];
        into.frames = frames;
        into.samples += stack.samples;
        into.wait_ns += stack.wait_ns;
    }
    return id;
}

// Adds one futex word's waits to the rows of its lock. Waits are counted
// per word, kinds known from samples: a word that serves several kinds
// shares its waits among them as its samples do, the rounding left to the
// most sampled kind. Returns the row whose owners the word's owner TIDs
// are: its pthread_mutex row, or for a PI futex its main row; none for a
// word whose owner TID means nothing (an rwlock's word holds no owner).
std::optional<RowKey> add_word(std::map<RowKey, RowBuilder>& rows, pid_t tgid, const KeySamples& sampled,
                               const ls_ulock_stats& stats, const std::vector<Waker>& wakers,
                               const std::optional<DataSymbol>& symbol, RowKey& main_row)
{
    if (sampled.lock_kinds.empty()) {
        return std::nullopt;  // no sample of this word was a lock wait
    }
    const bool pi = stats.ops & kPiOps;
    std::optional<RowKey> owners_row;
    uint64_t lock_samples = 0;
    for (const auto& [kind, kind_samples] : sampled.lock_kinds) {
        lock_samples += kind_samples.samples;
    }
    const std::string* main_kind = nullptr;
    for (const auto& [kind, kind_samples] : sampled.lock_kinds) {
        if (main_kind == nullptr || kind_samples.samples > sampled.lock_kinds.at(*main_kind).samples) {
            main_kind = &kind;
        }
    }
    const WordWaits whole = word_waits(stats, wakers);
    WordWaits left = whole;
    for (const auto& [kind, kind_samples] : sampled.lock_kinds) {
        if (&kind == main_kind) {
            continue;
        }
        const WordWaits share = take_share(whole, left, kind_samples.samples, lock_samples);
        const RowKey id = add_waits(rows, tgid, kind, symbol, kind_samples, share, stats.ops, sampled);
        if (kind == "pthread_mutex") {
            owners_row = id;
        }
    }
    const RowKey id =
        add_waits(rows, tgid, *main_kind, symbol, sampled.lock_kinds.at(*main_kind), left, stats.ops, sampled);
    main_row = id;
    if (pi || *main_kind == "pthread_mutex") {
        owners_row = id;
    }
    return owners_row;
}

// The wakers of every futex word: (tgid, address) -> its wakers.
std::map<std::pair<pid_t, uint64_t>, std::vector<Waker>> read_wakers(bpf_map* map)
{
    std::map<std::pair<pid_t, uint64_t>, std::vector<Waker>> out;
    probe::for_each_entry<ls_ulock_waker_key, ls_ulock_waker>(
        map, 1, [&](const ls_ulock_waker_key& key, const ls_ulock_waker* value) {
            Waker w;
            w.tid = key.waker_tid;
            w.tgid = value->waker_tgid;
            w.comm.assign(value->comm, strnlen(value->comm, sizeof(value->comm)));
            w.wakes = value->wakes;
            out[{static_cast<pid_t>(key.tgid), key.uaddr}].push_back(std::move(w));
        });
    return out;
}

}  // namespace

struct Recorder::State {
    userlock_bpf* skel = nullptr;
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
    unwind::UnwoundStack unwind_copy(uint32_t tgid, const ls_user_stack& copied, uint32_t tid)
    {
        sampled.insert(static_cast<pid_t>(tgid));
        const unwind::UserRegs regs{copied.regs.ip, copied.regs.sp, copied.regs.bp};
        const std::span<const uint8_t> copy(copied.data, std::min<uint32_t>(copied.size, LS_USER_STACK_BYTES));
        return unwinder.unwind(static_cast<pid_t>(tgid), regs, copy, regs.sp, static_cast<pid_t>(tid));
    }

    void take(const ls_ulock_sample& sample)
    {
        ++received;
        const auto stack = unwind_copy(sample.tgid, sample.stack, sample.tid);
        const bool named = std::any_of(stack.frames.begin(), stack.frames.end(),
                                       [](const auto& frame) { return !frame.function.empty(); });
        unwound += named ? 1 : 0;
        auto& key = samples[{static_cast<pid_t>(sample.tgid), sample.uaddr}];
        key.tid = sample.tid;
        if (!key.symbol && key.symbol_tries < kSymbolTries) {
            ++key.symbol_tries;
            key.symbol =
                data_symbols.lookup(static_cast<pid_t>(sample.tgid), sample.uaddr, static_cast<pid_t>(sample.tid));
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
    const bool task_state = options.kernel_task_state_fd >= 0;
    if (task_state != (options.kernel_cpu_states_fd >= 0)) {
        throw Error("share the kernel recorder's maps", "userlock", EINVAL,
                    "give both kernel_task_state_fd and kernel_cpu_states_fd (probe::Probe::contention_state_fds)");
    }
    if (!task_state) {
        return false;
    }
    if (!kernel_finds_tasks_by_pid()) {
        status = "unavailable (the kernel has no bpf_task_from_pid: needs Linux 6.2+)";
        return false;
    }
    if (const int err = bpf_map__reuse_fd(skel->maps.task_state, options.kernel_task_state_fd); err != 0) {
        throw Error("reuse the kernel recorder's map", "task_state", -err);
    }
    if (const int err = bpf_map__reuse_fd(skel->maps.cpu_states, options.kernel_cpu_states_fd); err != 0) {
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
    static_assert(sizeof(ls_ulock_key) == 16 && sizeof(ls_ulock_stats) == 32 + 8 * (4 + LS_HIST_BUCKETS),
                  "userlock_abi.h changed");
    static_assert(sizeof(ls_ulock_waker_key) == 16 && sizeof(ls_ulock_waker) == 32, "userlock_abi.h changed");
    static_assert(LS_ULOCK_MAX_TARGETS == 1024, "record/user_locks.cpp says how many processes are followed");
    static_assert(sizeof(ls_ulock_chain_key) == 24 && sizeof(ls_ulock_chain_stats) == 96, "userlock_abi.h changed");
    static_assert(sizeof(ls_ulock_cpu) == 16, "userlock_abi.h changed");
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
    if (options.kernel_user_stacks_fd >= 0) {
        if (const int err =
                ring_buffer__add(state->ring, options.kernel_user_stacks_fd, State::on_kernel_sample, state.get());
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
    out.lost_keys = counters.lost_keys;
    out.lost_samples = counters.lost_samples;
    out.lost_inflight = counters.lost_inflight;
    out.rate_limited = counters.rate_limited;
    out.lost_chains = counters.lost_chains;
    out.lost_targets = counters.lost_targets;
    out.lost_wakers = counters.lost_wakers;
    out.lost_events = counters.lost_events;
    out.chains = state_->chains;
    out.samples = state_->received;
    out.samples_unwound = state_->unwound;
    out.kernel_user_samples = state_->kernel_received;
    for (const auto& [key, under] : state_->kernel_stacks) {
        for (const auto& [frames, stack] : under.stacks) {
            out.kernel_user_stacks.push_back({.kernel_lock = std::get<0>(key),
                                              .kernel_flags = std::get<1>(key),
                                              .kernel_stack_id = std::get<2>(key),
                                              .tgid = std::get<3>(key),
                                              .frames = frames,
                                              .samples = stack.samples,
                                              .wait_ns = stack.wait_ns});
        }
    }

    std::map<RowKey, RowBuilder> rows;
    const auto chains = read_chains(state_->skel->maps.chain_waits);
    const auto wakers = read_wakers(state_->skel->maps.wakers);
    static const std::vector<Waker> kNoWakers;
    const auto add_key = [&](const ls_ulock_key& key, const ls_ulock_stats& stats) {
        const pid_t tgid = static_cast<pid_t>(key.tgid);
        auto found = state_->samples.find({tgid, key.uaddr});
        if (found == state_->samples.end() && (stats.ops & kPiOps)) {
            // A PI futex is a lock even with no sample: counted, unnamed.
            found = state_->samples.emplace(Key{tgid, key.uaddr}, KeySamples{}).first;
            found->second.classes[WaitClass::lock] = 0;
            found->second.lock_kinds["futex_pi"];
        }
        const auto* decided = found != state_->samples.end() ? most_common(found->second.classes) : nullptr;
        if (decided != nullptr && *decided != WaitClass::lock) {
            out.other_words.insert({tgid, key.uaddr});
        }
        if (decided == nullptr || *decided != WaitClass::lock) {
            const bool failed_unwinds = found != state_->samples.end() && found->second.not_unwound != 0;
            auto& left = out.left_out[decided != nullptr ? std::string(to_string(*decided))
                                      : failed_unwinds   ? "not unwound"
                                                         : "unsampled"];
            ++left.addresses;
            left.waits += stats.waits;
            return;
        }
        const auto word_wakers = wakers.find({tgid, key.uaddr});
        RowKey main_row;
        const auto owners_row = add_word(
            rows, tgid, found->second, stats, word_wakers != wakers.end() ? word_wakers->second : kNoWakers,
            found->second.symbol ? found->second.symbol
                                 : state_->data_symbols.lookup(tgid, key.uaddr, static_cast<pid_t>(found->second.tid)),
            main_row);
        if (!std::get<1>(main_row).empty()) {
            out.lock_words[{tgid, key.uaddr}] = {std::get<1>(main_row), std::get<2>(main_row)};
        }
        const auto word_chains = chains.find({tgid, key.uaddr});
        if (owners_row && word_chains != chains.end()) {
            for (const auto& [chain_key, chain_stats] : word_chains->second) {
                add_chain(rows[*owners_row].chains, chain_key, chain_stats);
            }
        }
    };
    for (const auto& [key, stats] : read_word_waits(state_->skel)) {
        add_key(key, stats);
    }
    for (auto& [id, builder] : rows) {
        if (const auto* caller = most_common(builder.callers)) {
            builder.row.caller = *caller;
            builder.row.caller_samples = builder.callers[*caller];
        }
        for (auto& [kernel_lock, chain] : builder.chains) {
            builder.row.kernel_chains.push_back(std::move(chain));
        }
        std::sort(builder.row.kernel_chains.begin(), builder.row.kernel_chains.end(),
                  [](const KernelChain& a, const KernelChain& b) { return a.wait_ns > b.wait_ns; });
        for (auto& [tid, waker] : builder.wakers) {
            builder.row.wakers.push_back(std::move(waker));
        }
        std::stable_sort(builder.row.wakers.begin(), builder.row.wakers.end(),
                         [](const Waker& a, const Waker& b) { return a.wakes > b.wakes; });
        for (auto& [frames, stack] : builder.stacks) {
            builder.row.stacks.push_back(std::move(stack));
        }
        std::stable_sort(builder.row.stacks.begin(), builder.row.stacks.end(),
                         [](const SampledStack& a, const SampledStack& b) { return a.samples > b.samples; });
        out.locks.push_back(std::move(builder.row));
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
    const int fd = bpf_map__fd(state_->skel->maps.targets);
    std::vector<pid_t> out;
    uint32_t key = 0;
    const uint32_t* previous = nullptr;
    while (bpf_map_get_next_key(fd, previous, &key) == 0) {
        out.push_back(static_cast<pid_t>(key));
        previous = &key;
    }
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
