// The Bench4Opt-ORGEval structural-equivalence judge: is the answer's model the reference model up to renaming and
// reordering of variables and constraints?
//
//  1. Normal form: a maximisation becomes min −c·x; a ≥ row becomes the ≤ row with negated coefficients and rhs;
//     an equality row takes the sign that makes its rhs positive (rhs 0: the sign whose sorted coefficients are
//     lexicographically smaller; a row equal to its own negation up to reordering may take either sign); binary
//     = integer in [0, 1]; empty rows are dropped. Numbers compare at 12 significant digits.
//  2. Bipartite graph: variable nodes labelled (type, lb, ub, objective coefficient), constraint nodes labelled
//     (sense, rhs), edges labelled by the coefficient.
//  3. Weisfeiler–Lehman colour refinement on the disjoint union of both graphs until the partition is stable;
//     different colour histograms = not equivalent.
//  4. Exact matching check: individualise-and-refine search for a bijection (one node of the smallest ambiguous
//     colour class mapped to each candidate, refine, recurse), each complete candidate verified row by row. A
//     symmetric model decomposes into interchangeable classes, so the first branch succeeds whenever the models
//     are isomorphic; a search budget bounds the rare WL-equivalent but different pairs.
#pragma once

#include <string>

#include "trex/optmodel/ir/model.hpp"

namespace trex::eval {

struct structure_options {
    long search_budget = 20000;  // refinement calls in the exact matching search
};

struct structure_result {
    bool equivalent = false;
    std::string detail;  // why not (first difference found), or "" when equivalent
};

structure_result compare_structure(const optmodel::model& answer, const optmodel::model& reference,
                                   const structure_options& opt = {});

}  // namespace trex::eval
