// Natural-language rendering of instances: questions in three representations (DP: data in prose, DT: data in
// Markdown tables, DPS: data in an attached data.json), answers for four task categories, CPT documents, and the
// re-execution check of an answer. Questions are rendered from the instance alone (never from a solution), so no
// objective value or solution can leak into them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trex/optmodel/families/family.hpp"
#include "trex/optmodel/render/code.hpp"
#include "trex/optmodel/solvers/verify.hpp"

namespace trex::optmodel {

enum class representation { dp, dt, dps };
enum class task { formulation, formulation_code, code, lp_file, benchmark };
const char* representation_name(representation r);  // "DP", "DT", "DPS"
const char* task_name(task t);                      // "formulation", "formulation_code", "code", "lp_file", "benchmark"
bool parse_representation(const std::string& s, representation* r);
bool parse_task(const std::string& s, task* t);

// The words of an instance's scenario plus n_<key> = size of every list/map in its data.
vocab instance_words(const family& f, const instance& in);

// The problem statement without the task request (used by questions and CPT documents).
std::string render_problem(const family& f, const instance& in, representation rep, bool inline_json, uint64_t seed);

// The full user question. For DPS, code tasks read data.json at run time (schema only in the text); formulation and
// LP-file tasks also get the file's contents inline (they must see the numbers).
std::string render_question(const family& f, const instance& in, representation rep, task t, dialect d, uint64_t seed);

// The assistant answer: <think>...</think>, <model>...</model> (not for `code`), a code block (python for
// formulation_code / code, lp for lp_file) and the result line. For `formulation` the <model> block ends with the
// instance written out explicitly (write_latex), which is what re-execution parses.
// reasoned = false: the direct answer, without the <think> block, and for lp_file / benchmark also without the
// <model> block (the LP file is the model): the answer is what the judge reads and nothing else.
std::string render_answer(const family& f, const instance& in, representation rep, task t, dialect d,
                          const verification& label, uint64_t seed, bool reasoned = true);

// Whether a statement tells its data: every number of the data (data.json's numeric leaves) written in the text
// (missing lists those that are not), and every number the text writes one of the data's (unused lists the others;
// digits glued to letters, "CO2" or "x_1", are not numbers; "twice" is 2).
struct number_coverage {
    std::vector<std::string> missing, unused;
};
number_coverage check_numbers(const std::string& text, const ojson& data);

// The label as the public benchmarks write it: the objective (format_value) or "No Best Solution".
std::string label_text(const verification& label);

class python_runner;

struct reexec_result {
    bool ok = false;
    std::string detail;  // why not
};

// Re-executes what the answer text contains and compares it with the label: formulation -> the explicit LaTeX
// model parsed and solved by GLPK (and the stated value checked); lp_file -> the ```lp block read and solved by
// GLPK; code tasks -> the ```python block run by `py` in `work_dir` (with data.json for DPS). gurobipy programs
// cannot be run here: their PuLP twin (same template) is run instead when `twin` is given.
reexec_result reexec_answer(const std::string& answer, task t, representation rep, const ojson& data,
                            const verification& label, python_runner* py, const std::string& work_dir,
                            const std::string* twin = nullptr);

// A CPT document (Markdown): problem, formulation with explanations, solution and its interpretation (binding
// constraints; duals and reduced costs for LPs).
std::string render_cpt_document(const family& f, const instance& in, const verification& label, uint64_t seed);

}  // namespace trex::optmodel
