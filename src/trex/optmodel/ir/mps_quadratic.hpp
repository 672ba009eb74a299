// The quadratic sections of MPS files, which GLPK's MPS reader does not know: read_mps_file takes them out of the text
// before GLPK reads the rest and puts them on the model after.
//
// Sections (each entry `name1 name2 value`, MOSEK's QSECTION also `name1 name2 value name3 value2`):
//   QUADOBJ          objective += ½·xᵀQx, one triangle of Q listed (Gurobi, HiGHS, CPLEX's alternative);
//   QMATRIX          objective += ½·xᵀQx, all of Q listed (both (i, j) and (j, i)) (CPLEX);
//   QSECTION <row>   <row> += ½·xᵀQx, one triangle listed; the objective when <row> is the first N row (MOSEK);
//   QCMATRIX <row>   <row> += xᵀQx, all of Q listed, not halved (CPLEX, Gurobi).
// Another N row's terms are dropped with the row (it constrains nothing). Names are whitespace-separated (names with
// blanks in fixed-format MPS are not supported here).
#pragma once

#include <string>
#include <vector>

#include "trex/optmodel/ir/model.hpp"

namespace trex::optmodel {

struct mps_quadratic {
    struct entry {
        std::string row;    // "" = the objective
        std::string a, b;   // variable names
        double coef = 0.0;  // the IR's coefficient of x_a·x_b (halving and doubling already applied)
        int line = 0;       // 1-based, for errors
    };
    std::vector<entry> entries;
    bool empty() const { return entries.empty(); }
};

// Finds the quadratic sections in `text` (an MPS file's contents), turns their lines into comment lines (so GLPK's
// line numbers still match the file) and returns their entries. A malformed line throws naming path:line.
mps_quadratic strip_mps_quadratic(std::string& text, const std::string& path);

// Adds the entries to m's objective and rows, finding variables and rows by name (a ranged row read as name_lo and
// name_hi gets the terms on both); an unknown name throws naming path:line.
void attach_mps_quadratic(model& m, const mps_quadratic& q, const std::string& path);

}  // namespace trex::optmodel
