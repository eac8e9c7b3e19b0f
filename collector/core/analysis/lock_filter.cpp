#include "core/analysis/lock_filter.h"

#include <fnmatch.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "core/analysis/lock_samples.h"
#include "core/analysis/lock_vocabulary.h"
#include "core/error.h"
#include "core/lock_key.h"
#include "episode.h"
#include "lockscope_abi.h"

namespace lockscope {
namespace {

struct KindName {
    const char* name;
    const char* kind = nullptr;  // nullptr: the name is the kind's own
    const char* mode = "";
};

// lockscope's names first, then perf lock contention's spellings.
constexpr KindName kKindNames[] = {
    {"mutex"},
    {"rwsem"},
    {"spinlock"},
    {"rwlock"},
    {"rtmutex"},
    {"rt-rwlock"},
    {"percpu-rwsem"},
    {"semaphore"},
    {"user-mutex"},
    {"user-rwsem"},
    // the user-space locks' kinds, as their table prints them
    {"pthread_mutex"},
    {"pthread_rwlock"},
    {"futex"},
    // perf's
    {"mutex:spin", "mutex", kSpinPhases},
    {"mutex-spin", "mutex"},  // an older perf's alias: every mutex wait, as before
    {"rt-mutex", "rtmutex"},
    {"rwlock-rt", "rt-rwlock"},
    {"pcpu-sem", "percpu-rwsem"},
    {"pcpu_sem", "percpu-rwsem"},
    {"sem", "semaphore"},
};

std::string valid_names()
{
    std::string out;
    for (const KindName& k : kKindNames)
        out += (out.empty() ? "" : ", ") + std::string(k.name);
    return out + " (add :R or :W, or /read or /write, for a reader-writer lock's side)";
}

// The flags of an episode of each kind bit, to map names to bits through
// the kernel's own ls_kind_bit().
constexpr uint32_t kBitFlags[LS_KIND_BITS] = {LCB_F_MUTEX,
                                              LCB_F_READ,
                                              LCB_F_WRITE,
                                              LCB_F_SPIN,
                                              LCB_F_SPIN | LCB_F_READ,
                                              LCB_F_SPIN | LCB_F_WRITE,
                                              LCB_F_RT,
                                              LCB_F_RT | LCB_F_READ,
                                              LCB_F_RT | LCB_F_WRITE,
                                              LCB_F_PERCPU | LCB_F_READ,
                                              LCB_F_PERCPU | LCB_F_WRITE,
                                              0,
                                              LS_F_USER | LCB_F_MUTEX,
                                              LS_F_USER};

}  // namespace

bool LockFilter::matches_kind(const std::string& kind, const std::string& mode) const
{
    if (kinds.empty())
        return true;
    return std::any_of(kinds.begin(), kinds.end(), [&](const auto& k) {
        return k.first == kind && (k.second.empty() || k.second == mode || k.second == kSpinPhases);
    });
}

bool LockFilter::spin_phases_only(const std::string& kind, const std::string& mode) const
{
    bool spin = false;
    for (const auto& [k, m] : kinds) {
        if (k != kind)
            continue;
        if (m != kSpinPhases && (m.empty() || m == mode))
            return false;
        spin = spin || m == kSpinPhases;
    }
    return spin;
}

namespace {

bool any_pattern(const std::vector<std::string>& patterns, const std::string& text)
{
    return patterns.empty() || std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) {
               return fnmatch(p.c_str(), text.c_str(), 0) == 0;
           });
}

}  // namespace

bool LockFilter::matches(const LockInfo& lock) const
{
    return matches_kind(lock.kind, lock.mode) && any_pattern(locks, lock.name) && any_pattern(callers, lock.caller);
}

bool LockFilter::matches(const UserLockWaits& lock) const
{
    // "pthread_rwlock/r": the kind and its side, as a kernel rwsem's
    const size_t slash = lock.kind.find('/');
    const std::string kind = lock.kind.substr(0, slash);
    const std::string side = slash == std::string::npos ? "" : lock.kind.substr(slash + 1);
    const std::string mode = side == "r" ? "read" : side == "w" ? "write" : side;
    return matches_kind(kind, mode) && any_pattern(locks, lock.name) && any_pattern(callers, lock.caller);
}

std::string LockFilter::describe() const
{
    std::vector<std::string> parts;
    auto join = [](const std::vector<std::string>& v) {
        std::string out;
        for (const std::string& s : v)
            out += (out.empty() ? "" : ", ") + s;
        return out;
    };
    if (!kinds.empty()) {
        std::vector<std::string> names;
        for (const auto& [kind, mode] : kinds)
            names.push_back(mode == kSpinPhases ? kind + ":spin" : kind_text(kind, mode));
        parts.push_back("kind " + join(names));
    }
    if (!locks.empty())
        parts.push_back("lock " + join(locks));
    if (!callers.empty())
        parts.push_back("caller " + join(callers));
    if (!callstacks.empty())
        parts.push_back("callstack " + join(callstacks));
    std::string out;
    for (const std::string& p : parts)
        out += (out.empty() ? "" : "; ") + p;
    return out;
}

uint32_t LockFilter::kind_bits() const
{
    if (kinds.empty())
        return 0;
    uint32_t bits = 0;
    for (uint32_t bit = 0; bit < LS_KIND_BITS; ++bit) {
        const LockKindInfo k = lock_kind(kBitFlags[bit]);
        if (ls_kind_bit(kBitFlags[bit]) == bit && matches_kind(k.kind, k.mode))
            bits |= 1u << bit;
    }
    return bits;
}

void add_kind_filter(LockFilter& filter, const std::string& list, const char* option)
{
    const std::string opt = option;
    size_t start = 0;
    while (start <= list.size()) {
        const size_t comma = std::min(list.find(',', start), list.size());
        std::string item = list.substr(start, comma - start);
        start = comma + 1;
        if (item.empty())
            throw UsageError(opt + ": an empty kind in '" + list + "'; kinds are " + valid_names());
        std::string mode;
        for (const auto& [suffix, m] : {std::pair{":R", "read"},
                                        {":W", "write"},
                                        {"/read", "read"},
                                        {"/write", "write"},
                                        {"/r", "read"},
                                        {"/w", "write"}}) {
            const std::string sfx = suffix;
            if (item.size() > sfx.size() && item.compare(item.size() - sfx.size(), sfx.size(), sfx) == 0) {
                mode = m;
                item.resize(item.size() - sfx.size());
                break;
            }
        }
        const KindName* found = nullptr;
        for (const KindName& k : kKindNames)
            if (item == k.name)
                found = &k;
        if (!found)
            throw UsageError(opt + ": unknown lock kind '" + item + "'; kinds are " + valid_names());
        const std::string kind = found->kind ? found->kind : found->name;
        const bool rw = kind == "rwsem" || kind == "rwlock" || kind == "rt-rwlock" || kind == "percpu-rwsem" ||
                        kind == "pthread_rwlock";
        if (!mode.empty() && !rw)
            throw UsageError(opt + ": '" + kind + "' has no reader and writer sides");
        filter.kinds.emplace_back(kind, mode.empty() ? std::string(found->mode) : mode);
        if (comma >= list.size())
            break;
    }
}

void add_pattern_filter(std::vector<std::string>& patterns, const std::string& pattern, const char* option)
{
    if (pattern.empty())
        throw UsageError(std::string(option) + " needs a name or a pattern (*, ?, [...])");
    int depth = 0;
    for (size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] == '\\') {
            ++i;
        } else if (pattern[i] == '[') {
            depth = 1;
        } else if (pattern[i] == ']') {
            depth = 0;
        }
    }
    if (depth)
        throw UsageError(std::string(option) + ": unbalanced '[' in '" + pattern + "'");
    patterns.push_back(pattern);
}

void add_lock_list_filter(LockFilter& filter, const std::string& list)
{
    size_t start = 0;
    while (start <= list.size()) {
        const size_t comma = std::min(list.find(',', start), list.size());
        const std::string item = list.substr(start, comma - start);
        start = comma + 1;
        if (item.rfind("0x", 0) == 0 || item.rfind("0X", 0) == 0)
            throw UsageError("-L/--lock-filter: '" + item +
                             "' is an address; lockscope names locks by class and keeps no addresses: give a "
                             "name or a pattern ('pipe_inode_info.mutex', 'inode.*')");
        add_pattern_filter(filter.locks, item, "-L/--lock-filter");
    }
}

void add_callstack_filter(LockFilter& filter, const std::string& text)
{
    if (text.empty())
        throw UsageError("-S/--callstack-filter needs part of a function name");
    filter.callstacks.push_back(text);
}

LockCounters spin_phase_counters(const LockCounters& c)
{
    LockCounters s;
    s.contentions = c.spin_attempts;
    s.spin_attempts = c.spin_attempts;
    s.spin_failures = c.spin_failures;
    s.spin_successes = c.spin_successes;
    s.wait_ns = c.spin_ns;
    s.spin_ns = c.spin_ns;
    s.spin_offcpu_ns = c.spin_offcpu_ns;
    s.spin_yields = c.spin_yields;
    s.preempt_ns = c.spin_offcpu_ns;
    s.preemptions = c.spin_yields;
    // Every spin phase of a timed episode was timed.
    s.timed = c.timed >= c.contentions ? c.spin_attempts : c.timed;
    return s;
}

namespace {

// Locks with `text` in their caller or in a frame of one of their sampled stacks.
std::set<int64_t> locks_on_callstacks(const Session& s, const std::vector<std::string>& texts)
{
    auto has = [&](const std::string& frame) {
        return std::any_of(texts.begin(), texts.end(),
                           [&](const std::string& t) { return frame.find(t) != std::string::npos; });
    };
    std::set<int64_t> out;
    for (const LockInfo& l : s.locks)
        if (has(l.caller))
            out.insert(l.id);
    for (const StackSample& st : s.stacks)
        if (!st.holder() && std::any_of(st.frames.begin(), st.frames.end(), has))
            out.insert(st.lock_id);
    return out;
}

// The user-space locks' rows the filter keeps, as (run, pid, name, kind),
// and the session's user-lock tables cut to them.
void filter_user_locks(Session& s, const LockFilter& filter)
{
    using Key = std::tuple<int64_t, uint32_t, std::string, std::string>;
    auto has = [&](const std::string& frame) {
        return std::any_of(filter.callstacks.begin(), filter.callstacks.end(),
                           [&](const std::string& t) { return frame.find(t) != std::string::npos; });
    };
    std::set<Key> on_stacks;
    for (const UserLockStack& st : s.user_lock_stacks)
        if (std::any_of(st.frames.begin(), st.frames.end(), has))
            on_stacks.insert({st.run, st.pid, st.name, st.kind});
    std::set<Key> keep;
    for (const UserLockRow& r : s.user_locks) {
        const Key key{r.run, r.pid, r.name, r.kind};
        if (filter.matches(r) && (filter.callstacks.empty() || has(r.caller) || on_stacks.count(key)))
            keep.insert(key);
    }
    auto dropped = [&](const auto& row) { return !keep.count(Key{row.run, row.pid, row.name, row.kind}); };
    std::erase_if(s.user_locks, dropped);
    std::erase_if(s.user_lock_chains, dropped);
    std::erase_if(s.user_lock_wakers, dropped);
    std::erase_if(s.user_lock_holders, dropped);
    std::erase_if(s.user_lock_stacks, dropped);
    std::erase_if(s.user_lock_words, dropped);
    std::erase_if(s.user_lock_instances, dropped);
}

}  // namespace

Session filter_session(const Session& s, const LockFilter& filter)
{
    if (filter.empty())
        return s;
    Session out = s;
    std::set<int64_t> keep, spin_only;
    const std::set<int64_t> on_stacks =
        filter.callstacks.empty() ? std::set<int64_t>{} : locks_on_callstacks(s, filter.callstacks);
    for (const LockInfo& l : s.locks)
        if (filter.matches(l) && (filter.callstacks.empty() || on_stacks.count(l.id))) {
            keep.insert(l.id);
            if (filter.spin_phases_only(l.kind, l.mode))
                spin_only.insert(l.id);
        }
    std::erase_if(out.locks, [&](const LockInfo& l) { return !keep.count(l.id); });
    erase_lock_samples(out, [&](const auto& row) { return !keep.count(row.lock_id); });
    std::erase_if(out.edges,
                  [&](const WaitEdge& e) { return !keep.count(e.lock_id) || !keep.count(e.holder_lock_id); });
    filter_user_locks(out, filter);
    for (LockInterval& li : out.lock_intervals)
        if (spin_only.count(li.lock_id))
            li.counters = spin_phase_counters(li.counters);
    // Each interval's lock counters are now those of the kept locks.
    std::map<std::pair<int64_t, int64_t>, LockCounters> sums;
    for (const LockInterval& li : out.lock_intervals)
        sums[{li.run, li.index}].add(li.counters);
    for (IntervalTotals& in : out.intervals) {
        auto it = sums.find({in.run, in.index});
        in.counters = it == sums.end() ? LockCounters{} : it->second;
    }
    // Per-task totals cover every lock: they cannot be split by lock.
    if (!filter.empty())
        out.tasks.clear();
    out.meta["filters"] = filter.describe();
    return out;
}

}  // namespace lockscope
