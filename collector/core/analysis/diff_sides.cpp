// Each session of a diff as its runs and report's lock rows, and which lock
// of A is compared with which of B.
#include "core/analysis/diff_sides.h"

#include "core/analysis/lock_samples.h"
#include "core/analysis/lock_vocabulary.h"
#include "core/analysis/user_locks.h"
#include "core/analysis/stack_frames.h"
#include "core/error.h"
#include "core/session_vocabulary.h"

#include <fnmatch.h>

#include <algorithm>
#include <set>

namespace lockscope {
namespace diff_detail {
namespace {

// The key report shows, under the class's current name (a renamed class matches).
LockKey class_key(const LockInfo& l)
{
    LockKey key = key_of(l);
    key.name = current_class_name(key.name);
    return key;
}

void add_stacks(const Session& s, const std::map<int64_t, const LockInfo*>& info,
                const std::map<int64_t, size_t>& unit_of, Side& side)
{
    for (const StackSample& st : s.stacks) {
        auto lock = info.find(st.lock_id);
        auto unit = unit_of.find(st.run);
        // the holders' sleeps are followed, every one: not samples to compare as these are
        if (lock == info.end() || unit == unit_of.end() || (st.role != "waiter" && !st.holder()) ||
            st.holder_state() == "asleep")
            continue;
        const LockKey key = class_key(*lock->second);
        if (!side.locks.count(key))
            continue;  // no row in report: nothing to compare its paths with
        std::vector<uint64_t>& samples = side.stacks[key][{st.role, traced_functions(st.frames)}];
        samples.resize(side.units.size());
        samples[unit->second] = sat_add(samples[unit->second], st.samples);
    }
}

}  // namespace

Side collect(const Session& s)
{
    Side side;
    std::map<int64_t, size_t> unit_of;  // run → unit
    for (const IntervalTotals& in : s.intervals) {
        ++side.intervals;
        auto [it, fresh] = unit_of.emplace(in.run, side.units.size());
        if (fresh)
            side.units.push_back(Unit{in.run});
        Unit& u = side.units[it->second];
        u.seconds += in.seconds();
        u.idle_ns += in.idle_ns;
        u.cpu_ns += in.cpu_ns;
        u.counters.add(in.counters);
        if (in.ops)
            u.ops = u.ops.value_or(0) + *in.ops;
        else
            side.all_ops = false;
    }
    side.runs = side.units.size();
    std::map<int64_t, const LockInfo*> info;
    for (const LockInfo& l : s.locks)
        info[l.id] = &l;
    // Report's rows: the lock rows of the runs' intervals, by class. A lock
    // the session knows but never counted (its first episode had not ended
    // when the recording stopped) is in no row, so in no diff.
    for (const LockInterval& li : s.lock_intervals) {
        auto lock = info.find(li.lock_id);
        auto unit = unit_of.find(li.run);
        if (lock == info.end() || unit == unit_of.end())
            continue;
        auto& series = side.locks[class_key(*lock->second)];
        series.resize(side.units.size());
        series[unit->second].add(li.counters);
    }
    // User-space locks are kept per run: their kinds ("pthread_mutex", ...)
    // keep them apart from kernel locks of the same name.
    for (const UserLockRow& u : s.user_locks) {
        auto unit = unit_of.find(u.run);
        if (unit == unit_of.end())
            continue;
        const LockKey key{u.name, u.kind, {}};
        if (!user_holder_split_kept(s.schema_version))
            side.no_holder_split.insert(key);
        auto& series = side.locks[key];
        series.resize(side.units.size());
        series[unit->second].add(u.counters());
    }
    add_stacks(s, info, unit_of, side);
    for (auto& [key, paths] : side.stacks)
        for (auto& [path, samples] : paths)
            samples.resize(side.units.size());
    return side;
}

namespace {

std::vector<LockKey> keys_named(const Side& side, const std::string& name)
{
    std::vector<LockKey> keys;
    for (const auto& [key, series] : side.locks)
        if (key.name == name)
            keys.push_back(key);
    return keys;
}

bool is_bench(const Session& s)
{
    return is_bench_scope(s.meta_value(kScopeKey));
}

// --pair, plus: two bench sessions of one lock each (say rwsem@4.2 and
// rwsem@4.7-hacked) compare that lock under each policy.
std::vector<std::pair<std::string, std::string>> lock_pairs(const Session& a, const Session& b, const Side& sa,
                                                            const Side& sb, const DiffOptions& options, DiffResult& d)
{
    std::vector<std::pair<std::string, std::string>> pairs = options.pairs;
    if (!pairs.empty() || !is_bench(a) || !is_bench(b) || sa.locks.size() != 1 || sb.locks.size() != 1)
        return pairs;
    const LockKey& ka = sa.locks.begin()->first;
    const LockKey& kb = sb.locks.begin()->first;
    if (ka.name != kb.name && ka.kind == kb.kind) {
        pairs.emplace_back(ka.name, kb.name);
        d.notes.push_back("bench sessions of one lock each: " + ka.name + " (" + options.label_a +
                          ") is compared with " + kb.name + " (" + options.label_b + ")");
    }
    return pairs;
}

// One --pair: B's locks of name_b, each with A's lock of name_a of the same
// kind and mode, or the one lock of each name when kinds differ (a mutex that
// became an rwsem). Their matches by name stay: a pair adds a comparison.
bool add_pair(const std::string& name_a, const std::string& name_b, const Side& sa, const Side& sb,
              std::vector<Match>& matches)
{
    const std::vector<LockKey> ka = keys_named(sa, name_a), kb = keys_named(sb, name_b);
    bool used = false;
    for (const LockKey& key_b : kb) {
        LockKey key_a{name_a, key_b.kind, key_b.mode};
        if (!sa.locks.count(key_a)) {
            if (ka.size() != 1 || kb.size() != 1)
                continue;
            key_a = ka.front();
        }
        used = true;
        const bool known =
            std::any_of(matches.begin(), matches.end(), [&](const Match& m) { return m.a == key_a && m.b == key_b; });
        if (!known)
            matches.push_back({key_a, key_b, name_b, key_a.kind == key_b.kind ? std::string() : key_b.kind});
    }
    return used;
}

// A lock keeps its class when its implementation changes (PREEMPT_RT makes a
// mutex an rtmutex, an rwsem an rt-rwlock): keys of the same name and mode,
// unmatched so far and found on one side each under different kinds, match.
void match_kind_changes(const Side& sa, const Side& sb, std::vector<Match>& matches)
{
    auto unmatched = [&](const Side& side, bool in_a) {
        std::map<std::pair<std::string, std::string>, std::vector<LockKey>> out;  // (name, mode)
        for (const auto& [key, series] : side.locks)
            if (std::none_of(matches.begin(), matches.end(),
                             [&, &k = key](const Match& m) { return (in_a ? m.a : m.b) == k; }))
                out[{key.name, key.mode}].push_back(key);
        return out;
    };
    const auto only_a = unmatched(sa, true);
    const auto only_b = unmatched(sb, false);
    for (const auto& [name_mode, keys_a] : only_a) {
        auto it = only_b.find(name_mode);
        if (it == only_b.end() || keys_a.size() != 1 || it->second.size() != 1)
            continue;
        const LockKey& key_b = it->second.front();
        if (key_b.kind != keys_a.front().kind)
            matches.push_back({keys_a.front(), key_b, "", key_b.kind});
    }
}

}  // namespace

std::vector<Match> match_locks(const Session& a, const Session& b, const Side& sa, const Side& sb,
                               const DiffOptions& options, DiffResult& d)
{
    std::vector<Match> matches;
    for (const auto& [key, series] : sa.locks)
        if (sb.locks.count(key))
            matches.push_back({key, key, "", ""});
    for (const auto& [name_a, name_b] : lock_pairs(a, b, sa, sb, options, d))
        if (name_a != name_b && !add_pair(name_a, name_b, sa, sb, matches))
            d.warnings.push_back("--pair " + name_a + "=" + name_b + " matched no lock (is '" + name_a + "' in " +
                                 options.label_a + " and '" + name_b + "' in " + options.label_b + "?)");
    const size_t before = matches.size();
    match_kind_changes(sa, sb, matches);
    if (matches.size() > before)
        d.notes.push_back(
            "a lock whose kind differs between the sessions (mutex → rtmutex under PREEMPT_RT) is "
            "compared under its class name; the kind change is shown with it");
    return matches;
}

}  // namespace diff_detail

Session select_runs(const Session& s, const std::string& pattern)
{
    Session out = s;
    std::set<int64_t> keep;
    std::string labels;
    for (const RunInfo& r : s.runs) {
        if (fnmatch(pattern.c_str(), r.label.c_str(), 0) == 0)
            keep.insert(r.id);
        if (labels.size() < 200)
            labels += (labels.empty() ? "" : ", ") + ("'" + r.label + "'");
    }
    if (keep.empty())
        throw Error("no run matches", pattern, 0,
                    s.runs.empty() ? "the session has no runs" : "its runs are " + labels);
    auto kept = [&](const auto& row) { return keep.count(row.run) == 0; };
    std::erase_if(out.runs, [&](const RunInfo& r) { return keep.count(r.id) == 0; });
    std::erase_if(out.intervals, kept);
    erase_lock_samples(out, kept);
    std::erase_if(out.edges, kept);
    std::erase_if(out.tasks, kept);
    std::erase_if(out.user_locks, kept);
    std::set<int64_t> seen;
    for (const LockInterval& li : out.lock_intervals)
        seen.insert(li.lock_id);
    std::erase_if(out.locks, [&](const LockInfo& l) { return seen.count(l.id) == 0; });
    out.meta["runs"] = pattern;
    return out;
}

}  // namespace lockscope
