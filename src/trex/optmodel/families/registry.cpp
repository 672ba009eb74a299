// The list of problem families (order fixed: it is part of the build's determinism).
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel {

namespace families {
TREX_FAMILY(transportation);
TREX_FAMILY(transshipment);
TREX_FAMILY(assignment);
TREX_FAMILY(knapsack_01);
TREX_FAMILY(knapsack_bounded);
TREX_FAMILY(bin_packing);
TREX_FAMILY(cutting_stock);
TREX_FAMILY(facility_capacitated);
TREX_FAMILY(facility_uncapacitated);
TREX_FAMILY(set_cover);
TREX_FAMILY(min_cost_flow);
TREX_FAMILY(max_flow);
TREX_FAMILY(shortest_path);
TREX_FAMILY(tsp);
TREX_FAMILY(cvrp);
TREX_FAMILY(machine_scheduling);
TREX_FAMILY(shift_scheduling);
TREX_FAMILY(lot_sizing);
TREX_FAMILY(production_planning);
TREX_FAMILY(product_mix);
TREX_FAMILY(blending);
TREX_FAMILY(diet);
TREX_FAMILY(capacity_planning);
TREX_FAMILY(portfolio);
TREX_FAMILY(generic_lp);
TREX_FAMILY(generic_milp);
TREX_FAMILY(story_lp);
TREX_FAMILY(story_ilp);
}  // namespace families

const std::vector<const family*>& all_families() {
    static const std::vector<const family*> list = [] {
        using namespace families;
        return std::vector<const family*>{
            &transportation(),
            &transshipment(),
            &assignment(),
            &knapsack_01(),
            &knapsack_bounded(),
            &bin_packing(),
            &cutting_stock(),
            &facility_capacitated(),
            &facility_uncapacitated(),
            &set_cover(),
            &min_cost_flow(),
            &max_flow(),
            &shortest_path(),
            &tsp(),
            &cvrp(),
            &machine_scheduling(),
            &shift_scheduling(),
            &lot_sizing(),
            &production_planning(),
            &product_mix(),
            &blending(),
            &diet(),
            &capacity_planning(),
            &portfolio(),
            &generic_lp(),
            &generic_milp(),
            &story_lp(),
            &story_ilp(),
        };
    }();
    return list;
}

}  // namespace trex::optmodel
