#include "models/chain_graph.h"

#include <algorithm>
#include <functional>
#include <map>

namespace lockscope::gui {

int ChainGraph::find(const std::string& name) const
{
    for (size_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].name == name)
            return int(i);
    return -1;
}

ChainGraph build_chain_graph(const std::vector<Chain>& chains)
{
    ChainGraph g;
    auto node = [&](const std::string& name) {
        int i = g.find(name);
        if (i < 0) {
            g.nodes.push_back({name});
            i = int(g.nodes.size() - 1);
        }
        return size_t(i);
    };
    // Each chain's first hop is one class-level edge, with its weight.
    std::map<std::pair<size_t, size_t>, size_t> seen;
    for (const Chain& c : chains) {
        if (c.locks.size() < 2)
            continue;
        const size_t from = node(c.locks[0]), to = node(c.locks[1]);
        if (seen.count({from, to}))
            continue;
        seen[{from, to}] = g.edges.size();
        g.edges.push_back({from, to, c.samples, c.wait_ns});
        // The root of the chain: the last lock, and what its holders did.
        ChainGraph::Node& last = g.nodes[node(c.locks.back())];
        if (last.root_state.empty() && !c.cycle) {
            last.root_state = c.root.state;
            last.root_frames = c.root.frames;
        }
    }
    std::stable_sort(g.edges.begin(), g.edges.end(),
                     [](const ChainGraph::Edge& a, const ChainGraph::Edge& b) { return a.wait_ns > b.wait_ns; });
    std::vector<std::vector<size_t>> out(g.nodes.size());  // edge indices
    for (size_t e = 0; e < g.edges.size(); ++e) {
        const ChainGraph::Edge& edge = g.edges[e];
        g.nodes[edge.from].wait_out += edge.wait_ns;
        g.nodes[edge.to].wait_in += edge.wait_ns;
        g.max_wait = std::max(g.max_wait, edge.wait_ns);
        out[edge.from].push_back(e);
    }
    // Depth-first from the heaviest sources: an edge to a lock on the current
    // path closes a cycle (back edge); the rest form a DAG, laid out by the
    // longest path from a source so every forward edge points right.
    enum Mark { New, Open, Done };
    std::vector<Mark> mark(g.nodes.size(), New);
    std::vector<size_t> finished;  // reverse topological order
    std::function<void(size_t)> visit = [&](size_t n) {
        mark[n] = Open;
        for (size_t e : out[n]) {
            const size_t to = g.edges[e].to;
            if (mark[to] == Open)
                g.edges[e].back = true;
            else if (mark[to] == New)
                visit(to);
        }
        mark[n] = Done;
        finished.push_back(n);
    };
    std::vector<size_t> order(g.nodes.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        const bool source_a = g.nodes[a].wait_in == 0, source_b = g.nodes[b].wait_in == 0;
        if (source_a != source_b)
            return source_a;
        return g.nodes[a].wait_out > g.nodes[b].wait_out;
    });
    for (size_t n : order)
        if (mark[n] == New)
            visit(n);
    for (auto it = finished.rbegin(); it != finished.rend(); ++it)
        for (size_t e : out[*it])
            if (!g.edges[e].back)
                g.nodes[g.edges[e].to].column = std::max(g.nodes[g.edges[e].to].column, g.nodes[*it].column + 1);
    std::map<int, std::vector<size_t>> by_column;
    for (size_t i = 0; i < g.nodes.size(); ++i)
        by_column[g.nodes[i].column].push_back(i);
    for (auto& [column, members] : by_column) {
        std::stable_sort(members.begin(), members.end(), [&](size_t a, size_t b) {
            return g.nodes[a].wait_in + g.nodes[a].wait_out > g.nodes[b].wait_in + g.nodes[b].wait_out;
        });
        for (size_t r = 0; r < members.size(); ++r)
            g.nodes[members[r]].row = int(r);
        g.columns = std::max(g.columns, column + 1);
        g.rows = std::max(g.rows, int(members.size()));
    }
    return g;
}

}  // namespace lockscope::gui
