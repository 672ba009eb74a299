#include "trex/optmodel/data_build/data_build.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <thread>
#include <unordered_set>

#include "trex/base/error.hpp"
#include "trex/base/files.hpp"
#include "trex/base/progress.hpp"
#include "trex/base/rng.hpp"
#include "trex/base/timer.hpp"
#include "trex/optmodel/data_build/resources.hpp"
#include "trex/optmodel/families/family.hpp"
#include "trex/optmodel/ir/writers.hpp"
#include "trex/optmodel/render/render.hpp"
#include "trex/optmodel/solvers/python_runner.hpp"

namespace fs = std::filesystem;

namespace trex::optmodel {

using ojson = nlohmann::ordered_json;

// ---------------------------------------------------------------------------------------------------------------
// config

namespace {

[[noreturn]] void cfg_fail(const std::string& src, const std::string& key, const std::string& what) {
    throw_error(fmt::format("{}: key '{}': {}", src, key, what));
}

std::vector<std::pair<std::string, double>> weights(const std::string& src, const ojson& j, const std::string& key,
                                                    const std::vector<std::string>& allowed,
                                                    const std::string& prefix = "sft.") {
    std::vector<std::pair<std::string, double>> out;
    if (!j.contains(key) || (j.at(key).is_string() && j.at(key).get<std::string>() == "all")) {
        for (const auto& a : allowed) out.push_back({a, 1.0});
        return out;
    }
    const ojson& v = j.at(key);
    if (v.is_array()) {
        for (const auto& e : v) {
            if (!e.is_string()) cfg_fail(src, prefix + key, "list entries must be names");
            out.push_back({e.get<std::string>(), 1.0});
        }
    } else if (v.is_object()) {
        for (auto it = v.begin(); it != v.end(); ++it) {
            if (!it.value().is_number() || it.value().get<double>() < 0)
                cfg_fail(src, prefix + key + "." + it.key(), "weight must be a number >= 0");
            out.push_back({it.key(), it.value().get<double>()});
        }
    } else {
        cfg_fail(src, prefix + key, "expected \"all\", a list of names or an object of weights");
    }
    double total = 0;
    for (const auto& [n, w] : out) {
        if (std::find(allowed.begin(), allowed.end(), n) == allowed.end()) {
            std::string list;
            for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
            cfg_fail(src, prefix + key, fmt::format("unknown name '{}' (known: {})", n, list));
        }
        total += w;
    }
    if (out.empty() || total <= 0) cfg_fail(src, prefix + key, "needs at least one positive weight");
    return out;
}

long get_count(const std::string& src, const ojson& j, const std::string& key, const std::string& path, long dflt) {
    if (!j.contains(key)) return dflt;
    const ojson& v = j.at(key);
    if (!v.is_number_integer() || v.get<long>() < 0 || v.get<long>() > 10'000'000)
        cfg_fail(src, path, "expected an integer in 0..10000000");
    return v.get<long>();
}

double get_number(const std::string& src, const ojson& j, const std::string& key, const std::string& path, double dflt,
                  double lo, double hi) {
    if (!j.contains(key)) return dflt;
    const ojson& v = j.at(key);
    if (!v.is_number() || v.get<double>() < lo || v.get<double>() > hi)
        cfg_fail(src, path, fmt::format("expected a number in [{}, {}]", lo, hi));
    return v.get<double>();
}

void check_keys(const std::string& src, const ojson& j, const std::string& prefix, const std::set<std::string>& ok) {
    for (auto it = j.begin(); it != j.end(); ++it)
        if (!ok.count(it.key())) cfg_fail(src, prefix + it.key(), "unknown key");
}

}  // namespace

build_config parse_build_config(const std::string& path) {
    build_config c;
    c.source = path;
    std::ifstream in(path);
    TREX_CHECK(in.good(), "{}: cannot read config", path);
    ojson j;
    try {
        j = ojson::parse(in);
    } catch (const std::exception& e) {
        std::string w = e.what();
        if (auto p = w.find("] "); p != std::string::npos) w = w.substr(p + 2);
        throw_error(fmt::format("{}: malformed JSON: {}", path, w));
    }
    TREX_CHECK(j.is_object(), "{}: the config must be a JSON object", path);
    check_keys(path, j, "", {"seed", "output_dir", "sft", "test", "cpt", "verify", "workers", "python"});
    if (j.contains("seed") && !j["seed"].is_number_unsigned() && !j["seed"].is_number_integer())
        cfg_fail(path, "seed", "expected a non-negative integer");
    if (j.contains("seed")) {
        if (j["seed"].is_number_integer() && j["seed"].get<int64_t>() < 0) cfg_fail(path, "seed", "must be >= 0");
        c.seed = j["seed"].get<uint64_t>();
    }
    if (!j.contains("output_dir") || !j["output_dir"].is_string() || j["output_dir"].get<std::string>().empty())
        cfg_fail(path, "output_dir", "required, a non-empty path");
    c.output_dir = j["output_dir"].get<std::string>();
    std::vector<std::string> fam_names;
    for (const family* f : all_families()) fam_names.push_back(f->name);
    const ojson sft = j.value("sft", ojson::object());
    if (!sft.is_object()) cfg_fail(path, "sft", "expected an object");
    check_keys(path, sft, "sft.",
               {"count", "families", "representations", "categories", "dialects", "difficulty", "answer",
                "infeasible_share", "unbounded_share"});
    c.sft_count = get_count(path, sft, "count", "sft.count", 0);
    c.families = weights(path, sft, "families", fam_names);
    c.representations = weights(path, sft, "representations", {"DP", "DT", "DPS"});
    c.categories = weights(path, sft, "categories", {"formulation", "formulation_code", "code", "lp_file"});
    if (!sft.contains("dialects"))
        c.dialects = {{"pulp", 1.0}};
    else
        c.dialects = weights(path, sft, "dialects", {"pulp", "gurobipy", "coptpy", "pyomo"});
    if (sft.contains("difficulty")) {
        const ojson& d = sft["difficulty"];
        if (!d.is_array() || d.size() != 2 || !d[0].is_number_integer() || !d[1].is_number_integer() ||
            d[0].get<int>() < 1 || d[1].get<int>() > 5 || d[0].get<int>() > d[1].get<int>())
            cfg_fail(path, "sft.difficulty", "expected [lo, hi] with 1 <= lo <= hi <= 5");
        c.difficulty_lo = d[0].get<int>();
        c.difficulty_hi = d[1].get<int>();
    }
    if (sft.contains("answer")) {
        const ojson& a = sft["answer"];
        if (!a.is_string() || (a != "reasoned" && a != "direct"))
            cfg_fail(path, "sft.answer", "expected \"reasoned\" or \"direct\"");
        c.reasoned = a == "reasoned";
    }
    c.infeasible_share = get_number(path, sft, "infeasible_share", "sft.infeasible_share", 0.04, 0, 0.5);
    c.unbounded_share = get_number(path, sft, "unbounded_share", "sft.unbounded_share", 0.02, 0, 0.5);
    const ojson test = j.value("test", ojson::object());
    if (!test.is_object()) cfg_fail(path, "test", "expected an object");
    check_keys(path, test, "test.", {"count"});
    c.test_count = get_count(path, test, "count", "test.count", 0);
    const ojson cpt = j.value("cpt", ojson::object());
    if (!cpt.is_object()) cfg_fail(path, "cpt", "expected an object");
    check_keys(path, cpt, "cpt.", {"documents", "resources"});
    c.cpt_count = get_count(path, cpt, "documents", "cpt.documents", 0);
    if (cpt.contains("resources")) {
        if (!cpt["resources"].is_boolean()) cfg_fail(path, "cpt.resources", "expected true or false");
        c.cpt_resources = cpt["resources"].get<bool>();
    }
    const ojson ver = j.value("verify", ojson::object());
    if (!ver.is_object()) cfg_fail(path, "verify", "expected an object");
    check_keys(path, ver, "verify.", {"time_limit_s", "rel_tol", "min_binding"});
    c.verify.time_limit_s = get_number(path, ver, "time_limit_s", "verify.time_limit_s", 10, 0.1, 3600);
    c.verify.rel_tol = get_number(path, ver, "rel_tol", "verify.rel_tol", 1e-6, 1e-12, 0.1);
    c.verify.min_binding = (int)get_count(path, ver, "min_binding", "verify.min_binding", 2);
    c.workers = (int)get_count(path, j, "workers", "workers", 0);
    if (j.contains("python")) {
        if (!j["python"].is_string()) cfg_fail(path, "python", "expected \"auto\", \"off\" or a path");
        c.python = j["python"].get<std::string>();
    }
    if (c.sft_count + c.test_count + c.cpt_count == 0 && !c.cpt_resources)
        throw_error(fmt::format("{}: nothing to build (sft.count, test.count and cpt.documents are 0)", path));
    c.echo = j;
    return c;
}

// ---------------------------------------------------------------------------------------------------------------
// slots

namespace {

enum class slot_kind { test, sft, cpt };

struct slot {
    slot_kind kind;
    int fam;
    representation rep = representation::dp;
    task cat = task::formulation;
    dialect dia = dialect::pulp;
    design want = design::feasible;
};

// Largest-remainder split of n over weights.
std::vector<long> split(long n, const std::vector<double>& w) {
    double total = 0;
    for (double x : w) total += x;
    std::vector<long> out(w.size());
    std::vector<std::pair<double, size_t>> rem;
    long used = 0;
    for (size_t i = 0; i < w.size(); i++) {
        const double exact = n * w[i] / total;
        out[i] = (long)std::floor(exact);
        used += out[i];
        rem.push_back({exact - out[i], i});
    }
    std::stable_sort(rem.begin(), rem.end(), [](auto& a, auto& b) { return a.first > b.first; });
    for (long k = 0; k < n - used; k++) out[rem[(size_t)k % rem.size()].second]++;
    return out;
}

// n values drawn from a weighted list, exact proportions, shuffled by r.
template <typename T>
std::vector<T> spread(long n, const std::vector<T>& values, const std::vector<double>& w, rng& r) {
    std::vector<long> counts = split(n, w);
    std::vector<T> out;
    for (size_t i = 0; i < values.size(); i++) out.insert(out.end(), (size_t)counts[i], values[i]);
    std::vector<int> perm = r.permutation((int)out.size());
    std::vector<T> shuffled(out.size());
    for (size_t i = 0; i < out.size(); i++) shuffled[i] = out[(size_t)perm[i]];
    return shuffled;
}

// Exactly round(n * share) of the slots [first, end) get the infeasible design and round(n * share) the unbounded
// one, drawn among the slots whose family has such a design. When those are too few, slots of families without the
// design are handed to configured families that have it (drawn by their weights), so the shares hold whatever the
// family mix; `fam_idx`/`fam_w` are the configured families and weights. Where no configured family has the design,
// the shortfall is a warning.
void assign_designs(std::vector<slot>& slots, size_t first, double infeasible_share, double unbounded_share,
                    const std::vector<int>& fam_idx, const std::vector<double>& fam_w, rng& r,
                    std::vector<std::string>* warnings) {
    const long n = (long)(slots.size() - first);
    const std::vector<int> order = r.permutation((int)n);
    auto assign = [&](design d, double share, bool family::*can) {
        long left = std::lround((double)n * share);
        for (int k : order) {
            if (left == 0) break;
            slot& s = slots[first + (size_t)k];
            if (s.want != design::feasible || !(all_families()[(size_t)s.fam]->*can)) continue;
            s.want = d;
            left--;
        }
        if (left == 0) return;
        std::vector<int> able;
        std::vector<double> able_w;
        for (size_t i = 0; i < fam_idx.size(); i++)
            if (all_families()[(size_t)fam_idx[i]]->*can && fam_w[i] > 0) {
                able.push_back(fam_idx[i]);
                able_w.push_back(fam_w[i]);
            }
        if (able.empty()) {
            warnings->push_back(fmt::format("{} of {} {} slots have no {} design: no configured family has one", left,
                                            std::lround((double)n * share), design_name(d), design_name(d)));
            return;
        }
        const std::vector<int> given = spread(left, able, able_w, r);
        for (int k : order) {
            if (left == 0) break;
            slot& s = slots[first + (size_t)k];
            if (s.want != design::feasible) continue;
            s.fam = given[(size_t)(left - 1)];
            s.want = d;
            left--;
        }
    };
    assign(design::infeasible, infeasible_share, &family::can_infeasible);
    assign(design::unbounded, unbounded_share, &family::can_unbounded);
}

std::vector<slot> make_slots(const build_config& c, std::vector<std::string>* warnings) {
    rng r(c.seed, hash_name("slots"));
    std::vector<int> fam_idx;
    std::vector<double> fam_w;
    for (const auto& [name, w] : c.families) {
        for (size_t i = 0; i < all_families().size(); i++)
            if (all_families()[i]->name == name) fam_idx.push_back((int)i);
        fam_w.push_back(w);
    }
    std::vector<slot> slots;
    auto add = [&](slot_kind kind, long n, std::vector<representation> reps, std::vector<double> rep_w,
                   std::vector<task> cats, std::vector<double> cat_w) {
        // cells (representation x category) with exact counts, then families spread over them
        std::vector<std::pair<representation, task>> cells;
        std::vector<double> cell_w;
        for (size_t a = 0; a < reps.size(); a++)
            for (size_t b = 0; b < cats.size(); b++) {
                cells.push_back({reps[a], cats[b]});
                cell_w.push_back(rep_w[a] * cat_w[b]);
            }
        auto cell_of = spread(n, cells, cell_w, r);
        auto fam_of = spread(n, fam_idx, fam_w, r);
        std::vector<dialect> dias = {dialect::pulp, dialect::gurobipy, dialect::coptpy, dialect::pyomo};
        std::vector<double> dia_w(dias.size(), 0.0);
        for (const auto& [name, w] : c.dialects) {
            dialect d = dialect::pulp;
            parse_dialect(name, &d);  // names were checked when the config was read
            dia_w[(size_t)d] = w;
        }
        auto dia_of = spread(n, dias, dia_w, r);
        const size_t first = slots.size();
        for (long k = 0; k < n; k++)
            slots.push_back(
                {kind, fam_of[(size_t)k], cell_of[(size_t)k].first, cell_of[(size_t)k].second, dia_of[(size_t)k]});
        assign_designs(slots, first, c.infeasible_share, c.unbounded_share, fam_idx, fam_w, r, warnings);
    };
    if (c.test_count > 0)
        add(slot_kind::test, c.test_count, {representation::dp, representation::dt, representation::dps}, {1, 1, 1},
            {task::benchmark}, {1});
    if (c.sft_count > 0) {
        std::vector<representation> reps;
        std::vector<double> rw;
        for (const auto& [n, w] : c.representations) {
            representation x{};
            parse_representation(n, &x);
            reps.push_back(x);
            rw.push_back(w);
        }
        std::vector<task> cats;
        std::vector<double> cw;
        for (const auto& [n, w] : c.categories) {
            task x;
            parse_task(n, &x);
            cats.push_back(x);
            cw.push_back(w);
        }
        add(slot_kind::sft, c.sft_count, reps, rw, cats, cw);
    }
    if (c.cpt_count > 0) add(slot_kind::cpt, c.cpt_count, {representation::dp}, {1}, {task::formulation}, {1});
    return slots;
}

const char* kind_name(slot_kind k) {
    return k == slot_kind::test ? "test" : k == slot_kind::sft ? "sft" : "cpt";
}

// ---------------------------------------------------------------------------------------------------------------
// worker side: one slot, attempts from a0 until an instance passes every local gate

constexpr int attempts_per_dispatch = 40;

struct worker_env {
    const build_config& cfg;
    std::unique_ptr<python_runner> py;
    std::string python_path;
    std::string scratch;
};

ojson process_slot(worker_env& env, const std::vector<slot>& slots, long k, long a0) {
    const build_config& c = env.cfg;
    const slot& s = slots[(size_t)k];
    const family& f = *all_families()[(size_t)s.fam];
    ojson res = {{"k", k}};
    ojson gates = ojson::object();
    auto drop = [&](gate g) { gates[gate_name(g)] = gates.value(gate_name(g), 0) + 1; };
    for (long a = a0; a < a0 + attempts_per_dispatch; a++) {
        const uint64_t seed = mix64(c.seed ^ mix64((uint64_t)k * 0x9e3779b97f4a7c15ull + (uint64_t)a + 1));
        gen_request rq;
        rq.seed = seed;
        rq.difficulty =
            c.difficulty_lo + (int)(mix64(seed ^ 0xd1ffull) % (uint64_t)(c.difficulty_hi - c.difficulty_lo + 1));
        rq.want = s.want;
        instance in = generate(f, rq);
        verification v = verify(in.m, c.verify);
        if (v.verdict != gate::kept) {
            drop(v.verdict);
            continue;
        }
        const solve_status expect = s.want == design::feasible     ? solve_status::optimal
                                    : s.want == design::infeasible ? solve_status::infeasible
                                                                   : solve_status::unbounded;
        if (v.status != expect) {
            drop(gate::design_status);
            continue;
        }
        const std::string domain = f.scenarios[(size_t)in.scenario].domain;
        ojson meta = {{"family", f.name},
                      {"domain", domain},
                      {"difficulty", in.difficulty},
                      {"status", solve_status_name(v.status)},
                      {"objective", v.status == solve_status::optimal ? ojson(v.objective) : ojson(nullptr)},
                      {"variables", in.m.vars.size()},
                      {"constraints", in.m.cons.size()},
                      {"mip", in.m.is_mip()},
                      {"hash", fmt::format("{:016x}", canonical_hash(in.m))}};
        if (s.kind == slot_kind::sft) {
            const std::string q = render_question(f, in, s.rep, s.cat, s.dia, seed);
            const std::string ans = render_answer(f, in, s.rep, s.cat, s.dia, v, seed, c.reasoned);
            const bool code_task = s.cat == task::code || s.cat == task::formulation_code;
            std::string reexec = "in_process";
            if (code_task && !env.py && c.python != "off") {
                env.py = std::make_unique<python_runner>(env.python_path);
            }
            if (code_task && c.python == "off") {
                reexec = "skipped";
            } else {
                std::string twin;
                // gurobipy and COPT cannot run here: their PuLP twin (same template, same instance) does
                const bool licensed = s.dia == dialect::gurobipy || s.dia == dialect::coptpy;
                if (code_task && licensed) twin = render_code(f, in, dialect::pulp, s.rep == representation::dps);
                reexec_result rr = reexec_answer(ans, s.cat, s.rep, in.data, v, env.py.get(), env.scratch,
                                                 twin.empty() ? nullptr : &twin);
                if (!rr.ok) {
                    drop(gate::reexec_failed);
                    continue;
                }
                if (code_task) reexec = licensed ? "pulp_twin" : "python";
            }
            meta["representation"] = representation_name(s.rep);
            meta["category"] = task_name(s.cat);
            meta["seed"] = seed;  // with family, difficulty and status: the instance again (`trex data rewrite`)
            if (code_task) meta["dialect"] = dialect_name(s.dia);
            meta["reexec"] = reexec;
            ojson rec = {{"messages", ojson::array({ojson{{"role", "user"}, {"content", q}},
                                                    ojson{{"role", "assistant"}, {"content", ans}}})}};
            if (s.rep == representation::dps) rec["data"] = in.data;
            rec["meta"] = meta;
            res["record"] = rec;
            res["meta"] = meta;
        } else if (s.kind == slot_kind::test) {
            meta["representation"] = representation_name(s.rep);
            res["question"] = render_question(f, in, s.rep, task::benchmark, dialect::pulp, seed);
            // the label at full precision (a JSON number round-trips the double): a judge with an absolute
            // tolerance of 1e-6 must not fail a perfect answer because the label was rounded
            res["answer"] = v.status == solve_status::optimal ? ojson(v.objective) : ojson(label_text(v));
            if (s.rep == representation::dps) res["data"] = in.data;
            res["lp"] = write_lp(in.m);
            res["meta"] = meta;
        } else {
            res["doc"] = render_cpt_document(f, in, v, seed);
            res["meta"] = meta;
        }
        res["a"] = a;
        res["hash"] = meta["hash"];
        res["gates"] = gates;
        return res;
    }
    res["a"] = a0 + attempts_per_dispatch - 1;
    res["gates"] = gates;
    res["gave_up"] = true;
    return res;
}

[[noreturn]] void worker_main(worker_env& env, const std::vector<slot>& slots, int in_fd, int out_fd) {
    FILE* in = fdopen(in_fd, "r");
    char* line = nullptr;
    size_t cap = 0;
    while (getline(&line, &cap, in) > 0) {
        long k = 0, a0 = 0;
        if (std::sscanf(line, "%ld %ld", &k, &a0) != 2) break;
        std::string out;
        try {
            out = process_slot(env, slots, k, a0).dump() + "\n";
        } catch (const std::exception& e) {
            out = ojson{{"k", k}, {"error", e.what()}}.dump() + "\n";
        }
        size_t off = 0;
        while (off < out.size()) {
            ssize_t w = ::write(out_fd, out.data() + off, out.size() - off);
            if (w <= 0) _exit(3);
            off += (size_t)w;
        }
    }
    env.py.reset();
    std::error_code ec;
    fs::remove_all(env.scratch, ec);
    _exit(0);
}

struct worker {
    pid_t pid = -1;
    int to = -1, from = -1;
    std::string buf;
    long busy = -1;    // slot in progress
    long busy_a0 = 0;  // its first attempt
};

void write_file(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    out.close();
    TREX_CHECK(out.good(), "{}: cannot write", path);
}

void add_count(ojson& o, const std::string& key) {
    if (o.is_null()) o = ojson::object();
    o[key] = o.value(key, 0) + 1;
}

ojson sorted(const ojson& o) {
    std::vector<std::string> keys;
    for (auto it = o.begin(); it != o.end(); ++it) keys.push_back(it.key());
    std::sort(keys.begin(), keys.end());
    ojson out = ojson::object();
    for (const auto& key : keys) out[key] = o.at(key);
    return out;
}

// The Python that re-executes code answers: none when no slot has one or python is "off".
std::string python_for_code_answers(const build_config& c, const std::vector<slot>& slots) {
    std::error_code ec;
    bool needs_python = false;
    for (const auto& s : slots)
        if (s.kind == slot_kind::sft && (s.cat == task::code || s.cat == task::formulation_code)) needs_python = true;
    std::string python;
    if (needs_python && c.python != "off") {
        if (c.python == "auto") {
            python = find_python_with_pulp();
            TREX_CHECK(!python.empty(),
                       "{}: code answers must be re-executed but no Python with PuLP was found (run "
                       "scripts/setup.sh, set TREX_PYTHON, or set \"python\": \"off\")",
                       c.source);
        } else {
            python = c.python;
            TREX_CHECK(fs::exists(python, ec), "{}: key 'python': {} does not exist", c.source, python);
        }
    }
    return python;
}

// The staged output directory and its files, written in slot order, with the counts of what they hold.
struct build_outputs {
    staged_dir staged;
    const fs::path tmp;
    std::ofstream sft_out;
    std::map<std::string, std::unique_ptr<std::ofstream>> test_out;
    std::ofstream cpt_index;
    ojson by = ojson::object();  // per kind: counts by family, domain, status, ...
    long sft_n = 0, cpt_n = 0;
    std::map<std::string, long> test_n;

    build_outputs(const fs::path& out_dir, const build_config& c) : staged(out_dir.string()), tmp(staged.path()) {
        fs::create_directories(tmp / "cpt" / "synthetic");
        fs::create_directories(tmp / "cpt" / "resources");
        if (c.test_count > 0) {
            fs::create_directories(tmp / "test" / "data");
            fs::create_directories(tmp / "test" / "lp");
        }
        sft_out.open(tmp / "sft.jsonl", std::ios::binary);
        TREX_CHECK(sft_out.good(), "{}: cannot write sft.jsonl", tmp.string());
        cpt_index.open(tmp / "cpt" / "index.jsonl", std::ios::binary);
    }

    // One accepted slot's result: counted, then written where its kind goes.
    void write(const slot& s, ojson& r) {
        const ojson& meta = r["meta"];
        ojson& cnt = by[kind_name(s.kind)];
        for (const char* key : {"family", "domain", "status", "representation", "category", "dialect", "reexec"})
            if (meta.contains(key)) add_count(cnt["by_" + std::string(key)], meta[key].get<std::string>());
        add_count(cnt["by_difficulty"], std::to_string(meta["difficulty"].get<int>()));
        if (s.kind == slot_kind::sft)
            write_sft(r);
        else if (s.kind == slot_kind::test)
            write_test(r, meta);
        else
            write_cpt(r, meta);
    }

    void write_sft(ojson& r) {
        ojson rec = r["record"];
        ojson out = {{"id", fmt::format("sft-{:06d}", ++sft_n)}};
        for (auto it = rec.begin(); it != rec.end(); ++it) out[it.key()] = it.value();
        sft_out << out.dump() << "\n";
    }

    // A test item: a line of test/<representation>.jsonl, its data file and its reference LP.
    void write_test(ojson& r, const ojson& meta) {
        const std::string rn = meta["representation"].get<std::string>();
        std::string lower = rn;
        for (char& ch : lower) ch = (char)std::tolower((unsigned char)ch);
        const long idx = ++test_n[lower];
        const std::string id = fmt::format("test-{}-{:05d}", lower, idx);
        if (!test_out.count(lower))
            test_out[lower] = std::make_unique<std::ofstream>(tmp / "test" / (lower + ".jsonl"), std::ios::binary);
        ojson rec = {{"id", id}, {"en_question", r["question"]}, {"en_answer", r["answer"]}};
        if (r.contains("data")) {
            rec["data_path"] = "data/" + id + ".json";
            write_file((tmp / "test" / "data" / (id + ".json")).string(), r["data"].dump(2) + "\n");
        }
        rec["reference_lp_path"] = "lp/" + id + ".lp";
        write_file((tmp / "test" / "lp" / (id + ".lp")).string(), r["lp"].get<std::string>());
        rec["family"] = meta["family"];
        rec["domain"] = meta["domain"];
        rec["status"] = meta["status"];
        *test_out[lower] << rec.dump() << "\n";
    }

    void write_cpt(ojson& r, const ojson& meta) {
        const std::string id = fmt::format("cpt-{:06d}", ++cpt_n);
        write_file((tmp / "cpt" / "synthetic" / (id + ".md")).string(), r["doc"].get<std::string>());
        cpt_index << ojson{{"id", id},
                           {"path", "synthetic/" + id + ".md"},
                           {"source", "synthetic"},
                           {"family", meta["family"]},
                           {"status", meta["status"]}}
                         .dump()
                  << "\n";
    }

    // collected resources; returns how many
    long write_resources(const build_config& c) {
        long nres = 0;
        if (c.cpt_resources) {
            for (const auto& [name, text] : collected_resources()) {
                write_file((tmp / "cpt" / "resources" / (name + ".md")).string(), text);
                cpt_index << ojson{{"id", "res-" + name},
                                   {"path", "resources/" + name + ".md"},
                                   {"source", "collected"}}
                                 .dump()
                          << "\n";
                nres++;
            }
        }
        return nres;
    }

    void close() {
        sft_out.close();
        cpt_index.close();
        for (auto& [k, f] : test_out) f->close();
        TREX_CHECK(sft_out.good() && cpt_index.good(), "{}: write error", tmp.string());
    }

    // manifest.json: format, seed, config echo, counts, per-kind counts and the gates (also per family); returns the
    // drops per gate.
    ojson write_manifest(const build_config& c, long nres, const ojson& gates, const ojson& family_drops, long attempts,
                         long kept) {
        ojson manifest = {{"format", "trex-ordata-1"}, {"seed", c.seed}, {"config", c.echo}};
        ojson counts = {{"sft", sft_n}, {"test", ojson::object()}, {"cpt_synthetic", cpt_n}, {"cpt_resources", nres}};
        for (const auto& [k, n] : test_n) counts["test"][k] = n;
        manifest["counts"] = counts;
        for (const char* kind : {"sft", "test", "cpt"}) {
            ojson o = ojson::object();
            if (by.contains(kind))
                for (auto it = by[kind].begin(); it != by[kind].end(); ++it) o[it.key()] = sorted(it.value());
            manifest[kind] = o;
        }
        ojson drops = ojson::object();
        for (int g = 1; g < gate_count; g++) drops[gate_name((gate)g)] = gates.value(gate_name((gate)g), 0);
        manifest["gates"] = {{"attempts", attempts}, {"kept", kept}, {"drops", drops}, {"by_family", family_drops}};
        write_file((tmp / "manifest.json").string(), manifest.dump(2) + "\n");
        return drops;
    }
};

// The worker processes and the queue of (slot, first attempt) sent to them. All workers start with the pool; once
// it stands, leaving its scope (an error) stops them.
struct worker_pool {
    const build_config& c;
    const std::vector<slot>& slots;
    const std::string& python;
    const fs::path tmp;
    int nw = 0;
    std::vector<worker> workers;
    std::vector<std::pair<long, long>> queue;

    worker_pool(const build_config& c_, const std::vector<slot>& slots_, const std::string& python_,
                const fs::path& tmp_)
        : c(c_), slots(slots_), python(python_), tmp(tmp_) {
        nw = c.workers > 0 ? c.workers : (int)std::max(1u, std::thread::hardware_concurrency());
        nw = (int)std::min<long>(nw, std::max<long>(1, (long)slots.size()));
        workers.resize((size_t)nw);
        for (int w = 0; w < nw; w++) spawn(w);
    }
    ~worker_pool() { stop(); }
    worker_pool(const worker_pool&) = delete;
    worker_pool& operator=(const worker_pool&) = delete;

    // Forks worker w, connected by two pipes; the child runs worker_main and never returns.
    void spawn(int w) {
        std::fflush(nullptr);
        int a[2], b[2];
        TREX_CHECK(::pipe(a) == 0 && ::pipe(b) == 0, "cannot create pipes");
        pid_t pid = ::fork();
        TREX_CHECK(pid >= 0, "cannot fork a worker");
        if (pid == 0) {
            ::close(a[1]);
            ::close(b[0]);
            for (int v = 0; v < nw; v++)
                if (v != w && workers[(size_t)v].pid > 0) {
                    ::close(workers[(size_t)v].to);
                    ::close(workers[(size_t)v].from);
                }
            const int devnull = ::open("/dev/null", O_WRONLY);  // solver libraries may print; stdout is the report's
            if (devnull >= 0) ::dup2(devnull, 1);
            worker_env env{c, nullptr, python, (tmp / (".scratch-" + std::to_string(w))).string()};
            worker_main(env, slots, a[0], b[1]);
        }
        ::close(a[0]);
        ::close(b[1]);
        workers[(size_t)w] = {pid, a[1], b[0], "", -1, 0};
    }

    void stop() {
        for (auto& w : workers) {
            if (w.pid <= 0) continue;
            ::close(w.to);
            ::close(w.from);
            int st;
            ::kill(w.pid, SIGTERM);
            ::waitpid(w.pid, &st, 0);
            w.pid = -1;
        }
    }

    // Every slot from its first attempt, then one to each worker.
    void start() {
        for (long k = (long)slots.size() - 1; k >= 0; k--) queue.push_back({k, 0});
        for (auto& w : workers) dispatch(w);
    }

    // Sends the next queued (slot, first attempt) to worker w, if any.
    void dispatch(worker& w) {
        if (queue.empty()) return;
        auto [k, a0] = queue.back();
        queue.pop_back();
        const std::string msg = fmt::format("{} {}\n", k, a0);
        TREX_CHECK(::write(w.to, msg.data(), msg.size()) == (ssize_t)msg.size(), "lost a worker");
        w.busy = k;
        w.busy_a0 = a0;
    }

    void dispatch_idle() {
        for (auto& w : workers)
            if (w.busy < 0) dispatch(w);
    }
};

// The parent's loop: reads the workers' results, takes them in slot order into the outputs, and sends duplicates,
// crashed batches and exhausted batches back to the queue.
struct build_loop {
    const std::vector<slot>& slots;
    worker_pool& pool;
    build_outputs& out;
    std::map<long, ojson> done;  // finished results waiting for their turn (slot order)
    long next = 0;
    std::unordered_set<std::string> hashes;
    ojson gates = ojson::object();
    ojson family_drops = ojson::object();  // family -> gate -> drops
    long attempts = 0;
    progress bar;

    build_loop(const std::vector<slot>& slots_, worker_pool& pool_, build_outputs& out_)
        : slots(slots_), pool(pool_), out(out_), bar((int64_t)slots.size(), "slots") {}

    void run(bool show_progress) {
        while (next < (long)slots.size()) {
            take_finished(show_progress);
            if (next >= (long)slots.size()) break;
            poll_workers();
        }
    }

    void count_drops(long k, const std::string& gate, long n) {
        gates[gate] = gates.value(gate, 0) + n;
        attempts += n;
        if (n == 0) return;
        ojson& f = family_drops[all_families()[(size_t)slots[(size_t)k].fam]->name];
        f[gate] = (f.is_object() ? f.value(gate, 0L) : 0L) + n;
    }

    void merge_gates(long k, const ojson& g) {
        for (auto it = g.begin(); it != g.end(); ++it) count_drops(k, it.key(), it.value().get<long>());
    }

    // consume finished results in slot order; a duplicate of an earlier slot stops here and is queued again
    void take_finished(bool show_progress) {
        while (done.count(next)) {
            ojson r = std::move(done[next]);
            done.erase(next);
            const slot& s = slots[(size_t)next];
            if (r.contains("gave_up")) {
                throw_error(
                    fmt::format("slot {} ({} {}, {} design): no instance passed the gates in {} attempts "
                                "(drops of the last {}: {})",
                                next, kind_name(s.kind), all_families()[(size_t)s.fam]->name, design_name(s.want),
                                r["a"].get<long>() + 1, attempts_per_dispatch, r["gates"].dump()));
            }
            const std::string h = r["hash"].get<std::string>();
            if (hashes.count(h)) {  // duplicate of an earlier slot: try again from the next attempt
                count_drops(next, "duplicate", 1);
                pool.queue.push_back({next, r["a"].get<long>() + 1});
                pool.dispatch_idle();
                return;
            }
            hashes.insert(h);
            attempts++;
            out.write(s, r);
            next++;
            if (show_progress) bar.update(next, fmt::format("attempts {}", attempts));
        }
    }

    // wait for any worker (a second at most), read what the ready ones sent, then keep every worker busy
    void poll_workers() {
        std::vector<pollfd> fds;
        for (auto& w : pool.workers) fds.push_back({w.from, POLLIN, 0});
        int pr = ::poll(fds.data(), fds.size(), 1000);
        if (pr < 0 && errno == EINTR) return;
        for (size_t i = 0; i < pool.workers.size(); i++) {
            if (!(fds[i].revents & (POLLIN | POLLHUP))) continue;
            read_worker(i);
        }
        pool.dispatch_idle();
    }

    void read_worker(size_t i) {
        worker& w = pool.workers[i];
        char buf[65536];
        ssize_t n = ::read(w.from, buf, sizeof buf);
        if (n <= 0) {
            restart_dead_worker(i);
            return;
        }
        w.buf.append(buf, (size_t)n);
        take_lines(w);
    }

    // the worker died: a solver library aborted on one of its instances (Clp/Cbc assert on some inputs). The crash
    // is deterministic, so skip that slot's whole batch of attempts, count it as a solver error and start a new
    // worker.
    void restart_dead_worker(size_t i) {
        worker& w = pool.workers[i];
        int st;
        ::close(w.to);
        ::close(w.from);
        ::waitpid(w.pid, &st, 0);
        w.pid = -1;
        if (w.busy >= 0) {
            count_drops(w.busy, "solver_error", 1);
            TREX_CHECK(w.busy_a0 + attempts_per_dispatch < 8 * attempts_per_dispatch,
                       "slot {}: data workers keep crashing on its instances", w.busy);
            pool.queue.push_back({w.busy, w.busy_a0 + attempts_per_dispatch});
        }
        pool.spawn((int)i);
        pool.dispatch(pool.workers[i]);
    }

    // every complete line the worker sent: one slot's result, kept until its turn (or its slot queued again)
    void take_lines(worker& w) {
        size_t nl;
        while ((nl = w.buf.find('\n')) != std::string::npos) {
            ojson r = ojson::parse(w.buf.substr(0, nl));
            w.buf.erase(0, nl + 1);
            if (r.contains("error"))
                throw_error(fmt::format("slot {}: {}", r["k"].get<long>(), r["error"].get<std::string>()));
            merge_gates(r["k"].get<long>(), r["gates"]);
            if (r.contains("gave_up") && r["a"].get<long>() + 1 < 4 * attempts_per_dispatch) {
                pool.queue.push_back({r["k"].get<long>(), r["a"].get<long>() + 1});  // keep trying a while
                r = ojson();
            } else {
                const long k = r["k"].get<long>();
                done[k] = std::move(r);
            }
            w.busy = -1;
            pool.dispatch(w);
        }
    }
};

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// parent

build_report run_build(const build_config& c, bool force, bool show_progress) {
    build_report rep;
    const double t0 = now_seconds();
    const fs::path out_dir = fs::absolute(c.output_dir).lexically_normal();
    std::error_code ec;
    if (fs::exists(out_dir, ec) && !force)
        throw_error(fmt::format("{}: output directory exists (use --force to replace it)", out_dir.string()));
    const std::vector<slot> slots = make_slots(c, &rep.warnings);
    const std::string python = python_for_code_answers(c, slots);
    // the temporary output directory: created now, so an unwritable location fails before any work
    remove_stale_temp_entries(out_dir.has_parent_path() ? out_dir.parent_path().string() : ".", "data build");
    build_outputs out(out_dir, c);
    const fs::path& tmp = out.tmp;

    worker_pool pool(c, slots, python, tmp);
    pool.start();
    build_loop loop(slots, pool, out);
    loop.run(show_progress);
    if (show_progress) loop.bar.finish(fmt::format("attempts {}", loop.attempts));
    pool.stop();
    for (int w = 0; w < pool.nw; w++) fs::remove_all(tmp / (".scratch-" + std::to_string(w)), ec);

    const long nres = out.write_resources(c);
    out.close();
    const ojson drops = out.write_manifest(c, nres, loop.gates, loop.family_drops, loop.attempts, (long)slots.size());

    out.staged.publish();

    rep.seconds = now_seconds() - t0;
    rep.sft = out.sft_n;
    rep.cpt = out.cpt_n;
    rep.resources = nres;
    for (const auto& [k, n] : out.test_n) rep.test += n;
    rep.attempts = loop.attempts;
    for (auto it = drops.begin(); it != drops.end(); ++it) rep.drops[it.key()] = it.value().get<long>();
    for (auto f = loop.family_drops.begin(); f != loop.family_drops.end(); ++f)
        for (const char* g : {"solver_error", "status_disagree", "objective_disagree", "reexec_failed"})
            if (f.value().contains(g)) rep.faults[f.key() + " " + g] = f.value()[g].get<long>();
    return rep;
}

}  // namespace trex::optmodel
