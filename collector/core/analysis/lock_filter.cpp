#include "core/analysis/lock_filter.h"

#include <fnmatch.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/analysis/lock_vocabulary.h"
#include "core/error.h"
#include "episode.h"
#include "lockscope_abi.h"

namespace lockscope {
namespace {

struct KindName {
    const char* name;
    const char* kind;
    const char* mode;
};

// lockscope's names first, then perf lock contention's spellings.
constexpr KindName kKindNames[] = {
    {"mutex", "mutex", ""},
    {"rwsem", "rwsem", ""},
    {"spinlock", "spinlock", ""},
    {"rwlock", "rwlock", ""},
    {"rtmutex", "rtmutex", ""},
    {"rt-rwlock", "rt-rwlock", ""},
    {"percpu-rwsem", "percpu-rwsem", ""},
    {"semaphore", "semaphore", ""},
    {"user-mutex", "user-mutex", ""},
    {"user-rwsem", "user-rwsem", ""},
    // perf's
    {"mutex-spin", "mutex", ""},
    {"rt-mutex", "rtmutex", ""},
    {"rwlock-rt", "rt-rwlock", ""},
    {"pcpu-sem", "percpu-rwsem", ""},
    {"pcpu_sem", "percpu-rwsem", ""},
    {"sem", "semaphore", ""},
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
    return std::any_of(kinds.begin(), kinds.end(),
                       [&](const auto& k) { return k.first == kind && (k.second.empty() || k.second == mode); });
}

bool LockFilter::matches(const LockInfo& lock) const
{
    auto any = [](const std::vector<std::string>& patterns, const std::string& text) {
        return patterns.empty() || std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) {
                   return fnmatch(p.c_str(), text.c_str(), 0) == 0;
               });
    };
    return matches_kind(lock.kind, lock.mode) && any(locks, lock.name) && any(callers, lock.caller);
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
            names.push_back(mode.empty() ? kind : kind + "/" + mode);
        parts.push_back("kind " + join(names));
    }
    if (!locks.empty())
        parts.push_back("lock " + join(locks));
    if (!callers.empty())
        parts.push_back("caller " + join(callers));
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

void add_kind_filter(LockFilter& filter, const std::string& list)
{
    size_t start = 0;
    while (start <= list.size()) {
        const size_t comma = std::min(list.find(',', start), list.size());
        std::string item = list.substr(start, comma - start);
        start = comma + 1;
        if (item.empty())
            throw UsageError("--kind: an empty kind in '" + list + "'; kinds are " + valid_names());
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
            throw UsageError("--kind: unknown lock kind '" + item + "'; kinds are " + valid_names());
        const std::string kind = found->kind;
        const bool rw = kind == "rwsem" || kind == "rwlock" || kind == "rt-rwlock" || kind == "percpu-rwsem";
        if (!mode.empty() && !rw)
            throw UsageError("--kind: '" + kind + "' has no reader and writer sides");
        filter.kinds.emplace_back(kind, mode);
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

Session filter_session(const Session& s, const LockFilter& filter)
{
    if (filter.empty())
        return s;
    Session out = s;
    std::set<int64_t> keep;
    for (const LockInfo& l : s.locks)
        if (filter.matches(l))
            keep.insert(l.id);
    std::erase_if(out.locks, [&](const LockInfo& l) { return !keep.count(l.id); });
    std::erase_if(out.lock_intervals, [&](const LockInterval& li) { return !keep.count(li.lock_id); });
    std::erase_if(out.stacks, [&](const StackSample& st) { return !keep.count(st.lock_id); });
    std::erase_if(out.edges,
                  [&](const WaitEdge& e) { return !keep.count(e.lock_id) || !keep.count(e.holder_lock_id); });
    std::erase_if(out.holder_tasks, [&](const HolderTask& h) { return !keep.count(h.lock_id); });
    std::erase_if(out.lock_cgroups, [&](const LockCgroup& c) { return !keep.count(c.lock_id); });
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
