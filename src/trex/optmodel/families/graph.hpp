// Random directed graphs for the network families (internal header).
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <string>

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

// data["from"] and data["to"]: the tail and head node name of each arc name (arc a joins nodes[arcs[a]]).
inline void write_arc_ends(nlohmann::ordered_json& data, const std::vector<std::string>& nodes,
                           const std::vector<std::string>& arc_names, const std::vector<std::pair<int, int>>& arcs) {
    nlohmann::ordered_json tail = nlohmann::ordered_json::object(), head = nlohmann::ordered_json::object();
    for (size_t a = 0; a < arcs.size(); a++) {
        tail[arc_names[a]] = nodes[(size_t)arcs[a].first];
        head[arc_names[a]] = nodes[(size_t)arcs[a].second];
    }
    data["from"] = tail;
    data["to"] = head;
}

}  // namespace trex::optmodel::families
