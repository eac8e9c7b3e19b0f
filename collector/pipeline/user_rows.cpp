#include "pipeline/user_rows.h"

#include <algorithm>
#include <cstdio>
#include <iterator>

#include "core/analysis/lock_vocabulary.h"

namespace lockscope::userlock {
namespace {

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

constexpr const char* kRootStates[LS_ULOCK_ROOT_STATES] = {
    "running", "preempted", "sleeping", "io-wait", "reader-owned", "no-owner", "unknown", "unknown",
};

// One futex word's waits, or the part of them one kind has.
struct WordWaits {
    UserLockWaits waits;                       // only the counts and times
    std::map<uint32_t, UserLockWaker> wakers;  // by waker tid
};

WordWaits word_waits(const ls_ulock_stats& stats, const std::vector<UserLockWaker>& wakers)
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
    for (const UserLockWaker& waker : wakers) {
        w.wakers[waker.waker_tid] = waker;
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
    row.add_waits(w);
    for (const auto& [tid, waker] : word.wakers) {
        if (waker.wakes == 0) {
            continue;
        }
        UserLockWaker& into = builder.wakers[tid];
        const uint64_t wakes = into.wakes;
        into = waker;  // its name at its last wakeup
        into.wakes += wakes;
    }
    row.samples += kind_samples.samples;
    UserLockInstance& instance = row.words.emplace_back(UserLockInstance{w});
    instance.address = sampled.address;
    instance.shared = sampled.shared.value_or("");
    instance.samples = kind_samples.samples;
    row.ops.merge(op_names(ops));
    row.owner_tids.insert(sampled.owner_tids.begin(), sampled.owner_tids.end());
    for (const auto& [name, count] : kind_samples.callers) {
        builder.callers[name] += count;
    }
    builder.offset_callers.insert(kind_samples.offset_callers.begin(), kind_samples.offset_callers.end());
    for (const auto& [frames, stack] : kind_samples.stacks) {
        UserLockStack& into = builder.stacks[frames];
        into.frames = frames;
        into.samples += stack.samples;
        into.wait_ns += stack.wait_ns;
    }
    return id;
}

}  // namespace

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
    UserLockStack& stack = kind.stacks[key];
    stack.frames = key;
    stack.samples += 1;
    stack.wait_ns += wait_ns;
}

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

// Adds one futex word's waits to the rows of its lock. Waits are counted
// per word, kinds known from samples: a word that serves several kinds
// shares its waits among them as its samples do, the rounding left to the
// most sampled kind. Returns the row whose owners the word's owner TIDs
// are: its pthread_mutex row, or for a PI futex its main row; none for a
// word whose owner TID means nothing (an rwlock's word holds no owner).
std::optional<RowKey> add_word(std::map<RowKey, RowBuilder>& rows, pid_t tgid, const KeySamples& sampled,
                               const ls_ulock_stats& stats, const std::vector<UserLockWaker>& wakers,
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

void add_holder_split(RowBuilder& row, const ls_ulock_stats& stats, const std::vector<HolderTime>& holders)
{
    row.row.holder_running_ns += stats.holder_ns[LS_HOLDER_RUNNING];
    row.row.holder_runnable_ns += stats.holder_ns[LS_HOLDER_RUNNABLE];
    row.row.holder_asleep_ns += stats.holder_ns[LS_HOLDER_ASLEEP];
    for (const HolderTime& h : holders) {
        HolderTime& into = row.holders[{h.role, h.tid}];
        if (into.comm.empty())
            into = HolderTime{.role = h.role, .tid = h.tid, .tgid = h.tgid, .comm = h.comm};
        into.running_ns += h.running_ns;
        into.runnable_ns += h.runnable_ns;
        into.asleep_ns += h.asleep_ns;
        into.waits += h.waits;
    }
}

UserLock finish_row(RowBuilder& builder)
{
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
                     [](const UserLockWaker& a, const UserLockWaker& b) { return a.wakes > b.wakes; });
    for (auto& [task, holder] : builder.holders) {
        builder.row.holders.push_back(std::move(holder));
    }
    std::stable_sort(builder.row.holders.begin(), builder.row.holders.end(),
                     [](const HolderTime& a, const HolderTime& b) { return a.total_ns() > b.total_ns(); });
    for (auto& [frames, stack] : builder.stacks) {
        builder.row.stacks.push_back(std::move(stack));
    }
    std::stable_sort(builder.row.stacks.begin(), builder.row.stacks.end(),
                     [](const UserLockStack& a, const UserLockStack& b) { return a.samples > b.samples; });
    std::sort(builder.row.words.begin(), builder.row.words.end(),
              [](const UserLockInstance& a, const UserLockInstance& b) { return a.address < b.address; });
    return std::move(builder.row);
}

}  // namespace lockscope::userlock
