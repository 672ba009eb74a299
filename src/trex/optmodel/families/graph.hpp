// Random directed graphs for the network families (internal header).
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

#include "trex/optmodel/families/text.hpp"

namespace trex::optmodel::families {

// n nodes 0..n-1; a Hamiltonian-ish forward chain 0->1->...->n-1 (so every node is reachable from 0 and reaches
// n-1) plus about `extra` further arcs (no self loops, no duplicates, both directions allowed).
inline std::vector<std::pair<int, int>> random_arcs(int n, int extra, rng& r) {
    std::vector<std::pair<int, int>> arcs;
    for (int i = 0; i + 1 < n; i++) arcs.push_back({i, i + 1});
    for (int t = 0; t < extra * 4 && (int)arcs.size() < n - 1 + extra; t++) {
        int a = r.int_in(0, n - 1), b = r.int_in(0, n - 1);
        if (a == b || b == 0 || a == n - 1) continue;
        if (std::find(arcs.begin(), arcs.end(), std::make_pair(a, b)) != arcs.end()) continue;
        arcs.push_back({a, b});
    }
    std::sort(arcs.begin(), arcs.end());
    return arcs;
}

}  // namespace trex::optmodel::families
