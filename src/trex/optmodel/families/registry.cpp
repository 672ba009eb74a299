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
TREX_FAMILY(multiple_knapsack);
TREX_FAMILY(dea);
TREX_FAMILY(winner_determination);
TREX_FAMILY(crew_scheduling);
TREX_FAMILY(job_shop);
TREX_FAMILY(p_median);
TREX_FAMILY(multi_commodity_flow);
TREX_FAMILY(capital_budgeting);
TREX_FAMILY(flow_shop);
TREX_FAMILY(vrptw);
TREX_FAMILY(assembly_line_balancing);
TREX_FAMILY(project_crashing);
TREX_FAMILY(unit_commitment);
TREX_FAMILY(fixed_charge_network);
TREX_FAMILY(generalized_flow);
TREX_FAMILY(max_covering);
TREX_FAMILY(spanning_tree);
TREX_FAMILY(workforce_planning);
TREX_FAMILY(cash_flow);
TREX_FAMILY(farm_planning);
TREX_FAMILY(multi_stage_production);
TREX_FAMILY(inventory_backorder);
TREX_FAMILY(logical_selection);
TREX_FAMILY(goal_programming);
TREX_FAMILY(piecewise_convex);
TREX_FAMILY(cutting_stock_patterns);
TREX_FAMILY(generalized_assignment);
TREX_FAMILY(graph_coloring);
TREX_FAMILY(quantity_discount);
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
            &multiple_knapsack(),
            &dea(),
            &winner_determination(),
            &crew_scheduling(),
            &job_shop(),
            &p_median(),
            &multi_commodity_flow(),
            &capital_budgeting(),
            &flow_shop(),
            &vrptw(),
            &assembly_line_balancing(),
            &project_crashing(),
            &unit_commitment(),
            &fixed_charge_network(),
            &generalized_flow(),
            &max_covering(),
            &spanning_tree(),
            &workforce_planning(),
            &cash_flow(),
            &farm_planning(),
            &multi_stage_production(),
            &inventory_backorder(),
            &logical_selection(),
            &goal_programming(),
            &piecewise_convex(),
            &cutting_stock_patterns(),
            &generalized_assignment(),
            &graph_coloring(),
            &quantity_discount(),
        };
    }();
    return list;
}

}  // namespace trex::optmodel
