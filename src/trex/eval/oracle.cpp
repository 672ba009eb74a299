#include "trex/eval/oracle.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "trex/base/rng.hpp"
#include "trex/optmodel/ir/glpk_io.hpp"
#include "trex/optmodel/ir/writers.hpp"
#include "trex/optmodel/solvers/solve.hpp"

namespace trex::eval {

using namespace trex::optmodel;

namespace {

constexpr const char* kFormNames[] = {"lp", "mps", "mathprog", "pulp", "gurobipy"};

// A permutation of 0..n-1 from (seed, stream): Fisher-Yates on counter-based uniforms.
std::vector<int> permutation(int n, uint64_t seed, uint64_t stream) {
    std::vector<int> p((size_t)n);
    std::iota(p.begin(), p.end(), 0);
    for (int i = n - 1; i > 0; i--) {
        const int j = (int)(uniform01(seed, stream, (uint64_t)i) * (i + 1));
        std::swap(p[(size_t)i], p[(size_t)std::min(j, i)]);
    }
    return p;
}

bool optimum_moves(const model& base, double base_obj, const model& changed) {
    solve_options so;
    so.time_limit_s = 20;
    const solve_result r = solve_coin(changed, so);
    if (r.status != solve_status::optimal) return true;  // now infeasible / unbounded: the answer is wrong too
    return std::fabs(r.objective - base_obj) > 1e-3 * std::max(1.0, std::fabs(base_obj));
}

}  // namespace

bool parse_oracle_form(const std::string& s, oracle_form* f) {
    for (int i = 0; i < 5; i++)
        if (s == kFormNames[i]) {
            *f = (oracle_form)i;
            return true;
        }
    return false;
}

const char* oracle_form_name(oracle_form f) {
    return kFormNames[(int)f];
}

bool parse_oracle_mutation(const std::string& s, oracle_mutation* m) {
    if (s == "none")
        *m = oracle_mutation::none;
    else if (s == "coef")
        *m = oracle_mutation::coef;
    else if (s == "rename")
        *m = oracle_mutation::rename;
    else if (s == "structure")
        *m = oracle_mutation::structure;
    else
        return false;
    return true;
}

namespace {

// A model with no optimum to move (infeasible, unbounded: judged by structure only): one matrix coefficient, else
// one objective coefficient, changed. False when the model has neither.
bool change_a_coefficient(const model& m, model* out) {
    *out = m;
    for (auto& c : out->cons)
        if (!c.terms.empty()) {
            c.terms[0].coef = c.terms[0].coef * 1.5 + (c.terms[0].coef > 0 ? 1 : -1);
            return true;
        }
    for (auto& v : out->vars)
        if (v.obj != 0.0) {
            v.obj = v.obj * 1.5 + (v.obj > 0 ? 1 : -1);
            return true;
        }
    return false;
}

}  // namespace

bool mutate_model(const model& m, oracle_mutation mut, uint64_t seed, model* out) {
    *out = m;
    switch (mut) {
        case oracle_mutation::none:
            return true;
        case oracle_mutation::rename: {
            const std::vector<int> vp = permutation((int)m.vars.size(), seed, 1);  // new position -> old index
            const std::vector<int> cp = permutation((int)m.cons.size(), seed, 2);
            std::vector<int> where(m.vars.size());
            out->vars.clear();
            for (size_t k = 0; k < vp.size(); k++) {
                variable v = m.vars[(size_t)vp[k]];
                v.name = fmt::format("v{}", k + 1);
                where[(size_t)vp[k]] = (int)k;
                out->vars.push_back(v);
            }
            out->cons.clear();
            for (size_t k = 0; k < cp.size(); k++) {
                constraint c = m.cons[(size_t)cp[k]];
                c.name = fmt::format("c{}", k + 1);
                for (auto& t : c.terms) t.var = where[(size_t)t.var];
                std::reverse(c.terms.begin(), c.terms.end());
                out->cons.push_back(c);
            }
            return true;
        }
        case oracle_mutation::structure: {
            if (m.cons.size() >= 2) {
                out->cons.erase(out->cons.begin() + (long)(m.cons.size() / 2));
                return true;
            }
            if (m.cons.size() == 1 && m.cons[0].terms.size() >= 2) {
                out->cons[0].terms.pop_back();
                return true;
            }
            return false;
        }
        case oracle_mutation::coef: {
            solve_options so;
            so.time_limit_s = 20;
            const solve_result base = solve_coin(m, so);
            if (base.status != solve_status::optimal) return change_a_coefficient(m, out);
            // objective coefficients of variables that are nonzero at the optimum first, then right-hand sides
            for (size_t j = 0; j < m.vars.size(); j++) {
                if (j >= base.x.size() || std::fabs(base.x[j]) < 1e-9 || m.vars[j].obj == 0.0) continue;
                *out = m;
                out->vars[j].obj = m.vars[j].obj * 1.5 + (m.vars[j].obj > 0 ? 1 : -1);
                if (optimum_moves(m, base.objective, *out)) return true;
            }
            for (size_t i = 0; i < m.cons.size(); i++) {
                *out = m;
                const double r = m.cons[i].rhs;
                out->cons[i].rhs = r == 0.0 ? (m.cons[i].sense == row_sense::ge ? 1.0 : -1.0) : r * 0.5;
                if (optimum_moves(m, base.objective, *out)) return true;
            }
            *out = m;
            return false;
        }
    }
    return false;
}

std::string oracle_completion(const model& m, oracle_form form) {
    std::string fence, body;
    switch (form) {
        case oracle_form::lp:
            fence = "lp";
            body = write_lp(m);
            break;
        case oracle_form::mps:
            fence = "mps";
            body = write_mps(m);
            break;
        case oracle_form::mathprog:
            fence = "mathprog";
            body = write_mathprog(m);
            break;
        case oracle_form::pulp:
            fence = "python";
            body = write_pulp(m);
            break;
        case oracle_form::gurobipy:
            fence = "python";
            body = write_gurobipy(m);
            break;
    }
    if (!body.empty() && body.back() != '\n') body += '\n';
    return fmt::format("<think>\nThe reference model, written as {}.\n</think>\n```{}\n{}```\n", oracle_form_name(form),
                       fence, body);
}

std::vector<oracle_line> make_oracle_completions(const std::vector<eval_item>& items, oracle_form form,
                                                 oracle_mutation mut, uint64_t seed, oracle_report* rep) {
    std::vector<oracle_line> out;
    for (const auto& it : items) {
        rep->items++;
        if (it.reference_lp_path.empty()) {
            rep->skipped.push_back(it.id + ": no reference_lp_path");
            continue;
        }
        model m, mutated;
        try {
            m = read_lp_file(it.reference_lp_path);
        } catch (const std::exception& e) {
            rep->skipped.push_back(it.id + ": " + e.what());
            continue;
        }
        if (!mutate_model(m, mut, seed ^ hash_name(it.id), &mutated)) {
            rep->skipped.push_back(it.id + ": the mutation cannot be made on this model");
            continue;
        }
        out.push_back({it.id, oracle_completion(mutated, form)});
        rep->written++;
    }
    return out;
}

}  // namespace trex::eval
