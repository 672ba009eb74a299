#include "trex/eval/judge.hpp"

#include <fmt/format.h>

#include <cfloat>
#include <cmath>

namespace trex::eval {

std::string objective_judge::describe() const {
    const char* k = kind == tolerance_kind::abs ? "abs" : kind == tolerance_kind::rel ? "rel" : "orlm";
    return fmt::format("{} {}", k, tol);
}

bool parse_objective_judge(const std::string& kind, double tol, objective_judge* out) {
    objective_judge j;
    if (kind == "abs") {
        j.kind = tolerance_kind::abs;
        j.tol = 1e-6;
    } else if (kind == "rel") {
        j.kind = tolerance_kind::rel;
        j.tol = 1e-4;
    } else if (kind == "orlm") {
        j.kind = tolerance_kind::orlm;
        j.tol = 0.05;
    } else {
        return false;
    }
    if (tol > 0) j.tol = tol;
    *out = j;
    return true;
}

namespace {

// |a − b| ≤ bound, inclusive, with a slack of 4 ulps of the larger operand (decimal inputs are not exact).
bool within(double a, double b, double bound) {
    const double slack = 4.0 * DBL_EPSILON * std::max(std::fabs(a), std::fabs(b));
    return std::fabs(a - b) <= bound + slack;
}

}  // namespace

bool objective_matches(const objective_judge& j, double pred, double truth) {
    if (!std::isfinite(pred) || !std::isfinite(truth)) return false;
    switch (j.kind) {
        case tolerance_kind::abs:
            return within(pred, truth, j.tol);
        case tolerance_kind::rel:
            if (truth == 0.0) return within(pred, 0.0, j.tol);
            return within(pred, truth, j.tol * std::fabs(truth));
        case tolerance_kind::orlm: {
            const double p = std::nearbyint(pred), t = std::nearbyint(truth);  // half to even, as Python's round
            if (t == 0.0) return std::fabs(p) <= j.tol;
            return std::fabs((p - t) / t) <= j.tol;
        }
    }
    return false;
}

const char* failure_name(failure f) {
    switch (f) {
        case failure::none:
            return "correct";
        case failure::no_artefact:
            return "no_artefact";
        case failure::parse_error:
            return "parse_error";
        case failure::runtime_error:
            return "runtime_error";
        case failure::no_solve:
            return "no_solve";
        case failure::timeout:
            return "timeout";
        case failure::infeasible:
            return "infeasible";
        case failure::wrong_objective:
            return "wrong_objective";
        case failure::structure_mismatch:
            return "structure_mismatch";
        case failure::unsupported:
            return "unsupported";
        case failure::backend_error:
            return "backend_error";
    }
    return "?";
}

verdict judge_outcome(const ground_truth& truth, const exec_outcome& ex, const objective_judge& j) {
    verdict v;
    auto fail = [&](failure f, std::string d) {
        v.correct = false;
        v.why = f;
        v.detail = std::move(d);
        return v;
    };
    const std::string& s = ex.status;
    if (s == "backend_error") return fail(failure::backend_error, ex.detail);
    if (s == "no_artefact" || ex.artefact.empty())
        return fail(failure::no_artefact, ex.detail.empty() ? "no model or code in the completion" : ex.detail);
    if (s == "parse_error") return fail(failure::parse_error, ex.detail);
    if (s == "unsupported") return fail(failure::unsupported, ex.detail);
    if (s == "runtime_error" || s == "solver_crash") return fail(failure::runtime_error, ex.detail);
    if (s == "no_solve") return fail(failure::no_solve, ex.detail.empty() ? "the program ran no solve" : ex.detail);
    if (s == "timeout") return fail(failure::timeout, ex.detail);
    if (truth.kind == truth_kind::structure) {
        if (s != "structure")
            return fail(failure::runtime_error,
                        "no model to compare with the reference LP" + (ex.detail.empty() ? "" : ": " + ex.detail));
        if (ex.equivalent) {
            v.correct = true;
            return v;
        }
        return fail(failure::structure_mismatch, ex.detail);
    }
    const bool no_opt = s == "infeasible" || s == "unbounded" || s == "inf_or_unbd";
    // only a solve the harness ran and recorded counts (results of older runs may hold printed objectives)
    if ((no_opt || s == "optimal") && ex.source != "solver")
        return fail(failure::no_solve, "the result was not produced by a solve of trex's solvers (" +
                                           (ex.source.empty() ? std::string("no source") : ex.source) + ")");
    if (truth.kind == truth_kind::no_solution) {
        if (no_opt) {
            v.correct = true;
            return v;
        }
        if (s == "optimal")
            return fail(failure::wrong_objective,
                        ex.has_objective
                            ? fmt::format("objective {} but no optimum exists ({})", ex.objective, truth.raw)
                            : fmt::format("optimal but no optimum exists ({})", truth.raw));
        return fail(failure::runtime_error, ex.detail.empty() ? "no result reported" : ex.detail);
    }
    if (truth.kind != truth_kind::objective) return fail(failure::runtime_error, "item has no ground truth");
    if (no_opt) return fail(failure::infeasible, fmt::format("answer reports {}; expected {}", s, truth.raw));
    if (s == "optimal") {
        if (!ex.has_objective) return fail(failure::runtime_error, "optimal but no objective value reported");
        if (objective_matches(j, ex.objective, truth.value)) {
            v.correct = true;
            return v;
        }
        return fail(failure::wrong_objective,
                    fmt::format("objective {} vs expected {} ({})", ex.objective, truth.raw, j.describe()));
    }
    return fail(failure::runtime_error, ex.detail.empty() ? "no result reported" : ex.detail);
}

}  // namespace trex::eval
