// The wait-chain graph of a session, laid out for drawing: lock classes as
// nodes in columns (a waiter's lock left of the lock its holder waited
// for), edges weighted by the wait they explain. Built from the report's
// chains (core/analysis/chains.h), which hold one chain per class-level edge.
#pragma once

#include "core/analysis/chains.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace lockscope::gui {

struct ChainGraph {
    struct Node {
        std::string name;                      // lock class, as in the locks table
        int column = 0;                        // longest path from a lock nobody's holder waits for
        int row = 0;                           // position within its column, heaviest first
        std::string root_state;                // for a lock at the end of a chain: what its holders did
        std::vector<std::string> root_frames;  // the root's heaviest holder stack
        uint64_t wait_out = 0;                 // wait explained by this lock's holders waiting elsewhere
        uint64_t wait_in = 0;                  // wait behind holders that waited for this lock
    };
    struct Edge {
        size_t from = 0, to = 0;  // indices into nodes
        uint64_t samples = 0;
        uint64_t wait_ns = 0;
        bool back = false;  // closes a cycle: drawn as a curve back to an earlier column
    };
    std::vector<Node> nodes;
    std::vector<Edge> edges;  // heaviest first
    int columns = 0;
    int rows = 0;  // of the tallest column
    uint64_t max_wait = 0;

    bool empty() const { return nodes.empty(); }
    // The node's index, or -1.
    int find(const std::string& name) const;
};

ChainGraph build_chain_graph(const std::vector<Chain>& chains);

}  // namespace lockscope::gui
