// Oracle completions: answers written from a benchmark item's reference LP (our held-out sets and ORGEval-style
// items carry one), in any representation the harness executes — an LP, MPS or MathProg file, or a PuLP or gurobipy
// program — wrapped the way a model answers (<think>…</think> then a fenced block). They check the harness end to
// end (oracles must score 100%), and their mutations check that the judges are not fooled:
//   coef       one objective coefficient or right-hand side changed so that the optimum moves (verified by
//              solving the mutated model with Clp/Cbc; items where no single change moves it are left out); a
//              reference with no optimum (infeasible or unbounded, as many Bench4Opt-ORGEval references are: the
//              structure judge never solves) gets one matrix coefficient changed instead
//   rename     variables and constraints renamed and both reordered (structure judge: still equivalent)
//   structure  one constraint dropped (or, for a one-row model, one term dropped) (structure judge: not equivalent)
#pragma once

#include <string>
#include <vector>

#include "trex/eval/benchmark.hpp"
#include "trex/optmodel/ir/model.hpp"

namespace trex::eval {

enum class oracle_form { lp, mps, mathprog, pulp, gurobipy };
bool parse_oracle_form(const std::string& s, oracle_form* f);
const char* oracle_form_name(oracle_form f);  // "lp", "mps", "mathprog", "pulp", "gurobipy"

enum class oracle_mutation { none, coef, rename, structure };
bool parse_oracle_mutation(const std::string& s, oracle_mutation* m);

// The model with the mutation applied; false when the mutation cannot be made (coef: no single change moves the
// optimum by more than a relative 1e-3; structure: an empty model). seed picks the renaming and reordering.
bool mutate_model(const optmodel::model& m, oracle_mutation mut, uint64_t seed, optmodel::model* out);

// The completion text for a model in a form: "<think>…</think>\n```<fence>\n<artefact>```\n".
std::string oracle_completion(const optmodel::model& m, oracle_form form);

struct oracle_line {
    std::string id, completion;
};
struct oracle_report {
    long items = 0, written = 0;
    std::vector<std::string> skipped;  // "id: why"
};

// One completion per item that has a reference LP (read by GLPK), in benchmark order.
std::vector<oracle_line> make_oracle_completions(const std::vector<eval_item>& items, oracle_form form,
                                                 oracle_mutation mut, uint64_t seed, oracle_report* rep);

}  // namespace trex::eval
