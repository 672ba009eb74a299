// GLPK environment plumbing shared by glpk_io.cpp and solve_glpk.cpp (internal header).
#pragma once

#include <glpk.h>

#include <csetjmp>
#include <string>
#include <type_traits>

#include "trex/optmodel/ir/model.hpp"
#include "trex/optmodel/solvers/solve.hpp"

namespace trex::optmodel::detail {

// While alive: GLPK's terminal output is captured into log() instead of printed, and GLPK's fatal-error hook
// is armed for glpk_run. Not nestable.
class glpk_quiet {
   public:
    glpk_quiet();
    ~glpk_quiet();
    glpk_quiet(const glpk_quiet&) = delete;
    glpk_quiet& operator=(const glpk_quiet&) = delete;
    const std::string& log() const;
    // The last non-empty line GLPK printed (usually its error message), trimmed.
    std::string last_message() const;
};

// Runs fn(ctx) (plain calls to GLPK) so that a GLPK fatal error (GLPK would abort() the process) returns false
// instead: GLPK's error hook long-jumps back here after freeing the GLPK environment (glp_free_env), so every GLPK
// object created before is gone. fn must not own objects with destructors. Runs under a glpk_quiet, whose hooks it
// installs again first (a fatal error in an earlier run freed them with the environment).
bool glpk_guarded(void (*fn)(void*), void* ctx);

template <typename F>
bool glpk_run(F&& f) {
    return glpk_guarded([](void* c) { (*static_cast<std::remove_reference_t<F>*>(c))(); }, &f);
}

// Copies a glp_prob into the IR (names kept; unnamed rows/columns get r<i>/c<j>) and the IR into a glp_prob, with
// the column and row bounds of solver_bounds_of(m) (solve.hpp: ±inf where unbounded, so a row can be free).
model from_glp(glp_prob* p, const std::string& name);
void to_glp(const model& m, const solver_bounds& b, glp_prob* p);

}  // namespace trex::optmodel::detail

