#include "core/analysis/chains.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_map>

#include "lockscope_abi.h"

namespace lockscope {
namespace {

// Heavier first: more wait, then more samples, then the name.
bool heavier(const ChainEdge& a, const ChainEdge& b)
{
    return std::tie(b.wait_ns, b.samples, a.to, a.from) < std::tie(a.wait_ns, a.samples, b.to, b.from);
}

ChainRoot root_of(const std::string& lock, const std::map<std::string, HolderSummary>& holders)
{
    ChainRoot root;
    root.lock = lock;
    auto h = holders.find(lock);
    if (h == holders.end())
        return root;
    const HolderSummary& s = h->second;
    uint64_t best = 0;
    for (const auto& [state, n] : s.samples_by_state)
        if (n > best) {
            best = n;
            root.state = state;
        }
    // Reader-owned queueings outnumber those that found one owner: nobody
    // in particular holds it.
    if (s.reader_owned > s.one_owner) {
        root.state = "reader-owned";
        return root;
    }
    if (best) {
        root.frames = s.frames;
        root.task = s.task;
        if (root.state == "running" && root.frames.empty())
            root.frames = s.on_cpu_frames;
    }
    return root;
}

}  // namespace

std::vector<Chain> assemble_chains(const std::vector<ChainEdge>& edges,
                                   const std::map<std::string, HolderSummary>& holders, size_t depth)
{
    std::map<std::pair<std::string, std::string>, ChainEdge> merged;
    for (const ChainEdge& e : edges) {
        ChainEdge& m = merged[{e.from, e.to}];
        m.from = e.from;
        m.to = e.to;
        m.samples = sat_add(m.samples, e.samples);
        m.wait_ns = sat_add(m.wait_ns, e.wait_ns);
        m.from_user = e.from_user;
    }
    std::map<std::string, std::vector<ChainEdge>> out_of;
    std::vector<ChainEdge> all;
    for (const auto& [key, e] : merged) {
        out_of[e.from].push_back(e);
        all.push_back(e);
    }
    for (auto& [from, list] : out_of)
        std::sort(list.begin(), list.end(), heavier);
    std::sort(all.begin(), all.end(), heavier);

    std::vector<Chain> chains;
    for (const ChainEdge& first : all) {
        Chain c;
        c.locks = {first.from, first.to};
        c.from_user = first.from_user;
        c.samples = first.samples;
        c.wait_ns = first.wait_ns;
        std::set<std::string> seen = {first.from};
        c.cycle = first.to == first.from;
        while (!c.cycle) {
            const std::string& last = c.locks.back();
            seen.insert(last);
            auto next = out_of.find(last);
            if (next == out_of.end())
                break;
            if (c.locks.size() >= depth) {
                c.truncated = true;
                break;
            }
            const std::string& to = next->second.front().to;
            c.cycle = seen.count(to) != 0;
            c.locks.push_back(to);
        }
        if (c.cycle) {
            c.root.lock = c.locks.back();
            c.root.state = "cycle";
        } else {
            c.root = root_of(c.locks.back(), holders);
        }
        chains.push_back(std::move(c));
    }
    return chains;
}

std::string user_lock_label(const std::string& name, const std::string& kind)
{
    return name + " (user " + kind + ")";
}

namespace {

// "sleeping:12 running:1" (UserLockChain::root_states) into a holder's votes.
void add_root_states(const std::string& text, HolderSummary& h)
{
    std::istringstream in(text);
    for (std::string item; in >> item;) {
        const size_t colon = item.rfind(':');
        if (colon == std::string::npos)
            continue;
        const std::string state = item.substr(0, colon);
        uint64_t n = 0;
        const char* digits = item.c_str() + colon + 1;
        if (std::from_chars(digits, item.c_str() + item.size(), n).ec != std::errc())
            continue;
        if (state == "reader-owned") {
            h.reader_owned = sat_add(h.reader_owned, n);
        } else if (state == "running" || state == "preempted" || state == "sleeping" || state == "io-wait") {
            uint64_t& votes = h.samples_by_state[state];
            votes = sat_add(votes, n);
            h.one_owner = sat_add(h.one_owner, n);
        }
    }
}

// The user locks' edges into kernel locks, and what their waiters saw the
// kernel lock's holder doing.
void add_user_edges(const Session& session, const std::function<bool(int64_t)>& wanted,
                    const std::unordered_map<int64_t, const LockInfo*>& locks, std::vector<ChainEdge>& edges,
                    std::map<std::string, HolderSummary>& holders)
{
    for (const UserLockChain& c : session.user_lock_chains) {
        auto to = locks.find(c.kernel_lock_id);
        if (!wanted(c.run) || to == locks.end())
            continue;
        edges.push_back({user_lock_label(c.name, c.kind), to->second->name, c.waits, c.wait_ns, true});
        add_root_states(c.root_states, holders[to->second->name]);
    }
}

}  // namespace

std::vector<Chain> session_chains(const Session& session, std::optional<int64_t> run)
{
    auto wanted = [&](int64_t r) { return !run || *run == r; };
    std::unordered_map<int64_t, const LockInfo*> locks;
    for (const LockInfo& l : session.locks)
        locks.emplace(l.id, &l);
    std::vector<ChainEdge> edges;
    for (const WaitEdge& e : session.edges) {
        auto from = locks.find(e.lock_id), to = locks.find(e.holder_lock_id);
        if (!wanted(e.run) || from == locks.end() || to == locks.end())
            continue;
        edges.push_back({from->second->name, to->second->name, e.samples, e.wait_ns});
    }
    std::map<std::string, HolderSummary> holders;
    add_user_edges(session, wanted, locks, edges, holders);
    if (edges.empty())
        return {};
    std::map<std::pair<std::string, std::vector<std::string>>, uint64_t> wait_by_stack;
    std::map<std::pair<std::string, std::vector<std::string>>, uint64_t> on_cpu_by_stack;
    for (const StackSample& st : session.stacks) {
        auto l = locks.find(st.lock_id);
        if (!st.holder() || !wanted(st.run) || l == locks.end())
            continue;
        if (st.holder_state() == "asleep")
            continue;  // the holder split's sleeps, not queueings: they do not vote either
        HolderSummary& h = holders[l->second->name];
        if (st.holder_state() == "on-cpu") {
            // Ticks, not queueings: they do not vote on what the holder was
            // doing when waiters queued.
            uint64_t& ticks = on_cpu_by_stack[{l->second->name, st.frames}];
            ticks = sat_add(ticks, st.samples);
            if (ticks > h.on_cpu_frames_samples) {
                h.on_cpu_frames_samples = ticks;
                h.on_cpu_frames = st.frames;
            }
            continue;
        }
        uint64_t& n = h.samples_by_state[st.holder_state()];
        n = sat_add(n, st.samples);
        uint64_t& w = wait_by_stack[{l->second->name, st.frames}];
        w = sat_add(w, st.wait_ns);
        if (w > h.frames_wait_ns || h.frames.empty()) {
            h.frames_wait_ns = w;
            h.frames = st.frames;
        }
    }
    std::map<std::pair<std::string, uint32_t>, std::pair<std::string, uint64_t>> task_samples;  // (lock, tid)
    for (const HolderTask& t : session.holder_tasks) {
        auto l = locks.find(t.lock_id);
        if (!wanted(t.run) || l == locks.end())
            continue;
        auto& [comm, n] = task_samples[{l->second->name, t.tid}];
        comm = t.comm;
        n = sat_add(n, t.samples);
    }
    for (const auto& [key, value] : task_samples) {
        HolderSummary& h = holders[key.first];
        if (value.second > h.task_samples) {
            h.task_samples = value.second;
            h.task = value.first + "[" + std::to_string(key.second) + "]";
        }
    }
    for (const LockInterval& li : session.lock_intervals) {
        auto l = locks.find(li.lock_id);
        if (!wanted(li.run) || l == locks.end())
            continue;
        HolderSummary& h = holders[l->second->name];
        h.reader_owned = sat_add(h.reader_owned, li.counters.owner[LS_OWNER_READER]);
        h.one_owner = sat_add(h.one_owner, li.counters.owner[LS_OWNER_ON_CPU] + li.counters.owner[LS_OWNER_OFF_CPU]);
    }
    return assemble_chains(edges, holders);
}

}  // namespace lockscope
