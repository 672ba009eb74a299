#include "trex/optmodel/families/family.hpp"

#include <cctype>
#include <cmath>

#include "trex/base/error.hpp"
#include "trex/base/rng.hpp"

namespace trex::optmodel {

const char* design_name(design d) {
    switch (d) {
        case design::feasible: return "feasible";
        case design::infeasible: return "infeasible";
        case design::unbounded: return "unbounded";
    }
    return "?";
}

std::vector<std::string> gen_context::names(const std::string& role, int n) {
    auto it = sc.words.find(role + "_pool");
    TREX_CHECK(it != sc.words.end(), "family '{}': scenario has no '{}_pool'", fam.name, role);
    return pool_names(it->second, n, r);
}

const family& find_family(const std::string& name) {
    std::string known;
    for (const family* f : all_families()) {
        if (f->name == name) return *f;
        known += (known.empty() ? "" : ", ") + f->name;
    }
    throw_error(fmt::format("unknown problem family '{}' (known: {})", name, known));
}

instance generate(const family& f, const gen_request& req) {
    TREX_CHECK(req.difficulty >= 1 && req.difficulty <= 5, "difficulty must be in 1..5 (got {})", req.difficulty);
    TREX_CHECK(req.want != design::infeasible || f.can_infeasible, "family '{}' has no infeasible design", f.name);
    TREX_CHECK(req.want != design::unbounded || f.can_unbounded, "family '{}' has no unbounded design", f.name);
    const uint64_t stream = hash_name(f.name);
    rng pick(req.seed, stream ^ 0x5ce7a410ull);
    const int sc = req.scenario >= 0 ? req.scenario % (int)f.scenarios.size()
                                     : pick.int_in(0, (int)f.scenarios.size() - 1);
    gen_context g{f, req, f.scenarios[sc], rng(req.seed, stream), {}};
    g.inst.family = f.name;
    g.inst.difficulty = req.difficulty;
    g.inst.designed = req.want;
    g.inst.scenario = sc;
    g.inst.m.name = f.name;
    f.generate(g);
    validate(g.inst.m);
    return std::move(g.inst);
}

ojson num(double v) {
    if (std::fabs(v) < 1e15 && v == std::floor(v)) return ojson((int64_t)v);
    return ojson(v);
}

double as_double(const ojson& v) { return v.get<double>(); }

std::vector<std::string> members_of(const std::string& ir_name, const std::vector<name_doc>& docs, const ojson& data,
                                    const name_doc** doc) {
    for (const name_doc& d : docs) {
        if (ir_name.rfind(d.prefix, 0) != 0) continue;
        std::string rest = ir_name.substr(d.prefix.size());
        std::vector<int> idx;
        size_t p = 0;
        bool ok = true;
        while (p < rest.size()) {
            if (rest[p] != '_' || p + 1 >= rest.size() || !std::isdigit((unsigned char)rest[p + 1])) {
                ok = false;
                break;
            }
            p++;
            int v = 0;
            while (p < rest.size() && std::isdigit((unsigned char)rest[p])) v = v * 10 + (rest[p++] - '0');
            idx.push_back(v);
        }
        if (!ok || idx.size() != d.sets.size()) continue;
        std::vector<std::string> out;
        for (size_t k = 0; k < idx.size(); k++) {
            const ojson& s = data.at(d.sets[k]);
            if (idx[k] < 1 || idx[k] > (int)s.size()) {
                ok = false;
                break;
            }
            out.push_back(s[(size_t)idx[k] - 1].get<std::string>());
        }
        if (!ok) continue;
        if (doc) *doc = &d;
        return out;
    }
    return {};
}

}  // namespace trex::optmodel
