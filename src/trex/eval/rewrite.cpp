#include "trex/eval/rewrite.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "trex/base/error.hpp"
#include "trex/base/json_text.hpp"
#include "trex/eval/extract.hpp"
#include "trex/eval/judge.hpp"
#include "trex/optmodel/families/family.hpp"
#include "trex/optmodel/ir/format.hpp"
#include "trex/optmodel/render/render.hpp"

// Drop reasons (report.json "drops"):
//   no_seed / regenerate_mismatch   the sample cannot be generated again as built (another version of the families)
//   backend_error                   the endpoint gave no completion (after its retries)
//   empty                           the back-translation had no statement
//   numbers_missing                 a number of the data is not in the statement
//   numbers_extra                   the statement writes a number the data lacks (not a set size)
//   leaks_optimum                   the statement writes the optimal objective value
//   formalisation_<failure>         the last formalisation failed (judge.hpp's failure names: wrong_objective,
//                                   no_artefact, parse_error, infeasible, runtime_error, ...)

namespace trex::eval {

namespace rewrite_detail {  // named: the eval folder compiles as one unity translation unit

using namespace trex::optmodel;
namespace fs = std::filesystem;

struct job {
    long line = 0;  // 1-based line of sft.jsonl
    ojson record;
};

struct outcome {
    bool kept = false;
    int round = 0;  // formalisation try that was right (1 = first)
    ojson record;   // kept: the rewritten sample
    std::string stage, reason, detail;
    long requests = 0, prompt_tokens = 0, completion_tokens = 0;
};

// The text after the reasoning: what follows the last </think>, else everything.
std::string after_think(const std::string& s) {
    const size_t p = s.rfind("</think>");
    return p == std::string::npos ? s : s.substr(p + 8);
}

std::string trim(const std::string& s) {
    const size_t a = s.find_first_not_of(" \t\r\n");
    if (a == std::string::npos) return "";
    return s.substr(a, s.find_last_not_of(" \t\r\n") - a + 1);
}

void string_leaves(const ojson& j, std::vector<std::string>& out) {
    if (j.is_string()) out.push_back(j.get<std::string>());
    if (j.is_array() || j.is_object())
        for (const auto& v : j) string_leaves(v, out);
    if (j.is_object())
        for (auto it = j.begin(); it != j.end(); ++it) out.push_back(it.key());
}

void collection_sizes(const ojson& j, std::vector<double>& out) {
    if (j.is_array() || j.is_object()) {
        out.push_back((double)j.size());
        for (const auto& v : j) collection_sizes(v, out);
    }
}

bool parse_written(std::string w, double* v) {
    w.erase(std::remove(w.begin(), w.end(), ','), w.end());
    try {
        size_t used = 0;
        *v = std::stod(w, &used);
        return used > 0;
    } catch (const std::exception&) {
        return false;
    }
}

bool same_value(double a, double b) {
    return std::fabs(a - b) <= 1e-9 * std::max({1.0, std::fabs(a), std::fabs(b)});
}

std::string back_translation_prompt(const family& f, const instance& in) {
    const vocab v = instance_words(f, in);
    rng r(1, 1);
    std::string symbols;
    for (const auto& s : f.latex_symbols) symbols += "- " + expand(s, v, r) + "\n";
    return "You are given an optimization model and the data of one instance of it. Write the word problem a person "
           "would pose for it: a realistic story in the setting the data's names suggest, in plain prose, as in an "
           "operations research textbook exercise.\n\n"
           "Rules:\n"
           "- Tell every number of the data exactly as given (with its units in words), so that the model can be "
           "rebuilt from your text alone.\n"
           "- Write no other number, except how many things there are (\"3 products\").\n"
           "- Do not name variables, write formulas or mention the model; do not solve the problem or hint at its "
           "optimal value.\n"
           "- Answer with the problem statement only, ending with what is to be minimised or maximised.\n\n"
           "Problem type: " +
           f.title + "\n\nFormulation:\n$$\n" + f.latex + "\n$$\nwhere\n" + symbols + "\nData (JSON):\n```json\n" +
           in.data.dump(1) + "\n```\n";
}

std::string forward_prompt(const std::string& statement) {
    return "Formulate the following optimization problem as a linear or mixed-integer program and write it as a "
           "complete LP file (CPLEX LP format) in a ```lp code block. Use only the numbers the text gives.\n\n" +
           statement + "\n";
}

// What running a formalisation gave, for the repair message (never the label).
std::string describe_run(const exec_outcome& ex) {
    if (ex.status == "no_artefact") return "no LP file was found in your answer";
    if (ex.status == "optimal" && ex.has_objective)
        return fmt::format("the solver found an optimum with objective value {}", format_value(ex.objective));
    if (ex.status == "infeasible" || ex.status == "unbounded" || ex.status == "inf_or_unbd")
        return "the solver reported the model " + ex.status;
    return ex.status + (ex.detail.empty() ? "" : ": " + ex.detail.substr(0, 300));
}

class rewriter {
   public:
    rewriter(const rewrite_options& opt, backend& b) : opt_(opt), b_(b) {}

    outcome process(const job& jb, executor& ex) const {
        outcome o;
        const ojson& meta = jb.record["meta"];
        const std::string id = jb.record.value("id", fmt::format("line-{}", jb.line));
        if (!meta.contains("seed")) return drop(o, "generate", "no_seed", "meta has no seed (a build before seeds)");
        const family* fp = nullptr;
        for (const family* f : all_families())
            if (f->name == meta.value("family", "")) fp = f;
        if (!fp) return drop(o, "generate", "regenerate_mismatch", "unknown family " + meta.value("family", ""));
        const family& f = *fp;
        optmodel::gen_request rq;
        rq.seed = meta["seed"].get<uint64_t>();
        rq.difficulty = meta.value("difficulty", 1);
        const std::string status = meta.value("status", "");
        rq.want = status == "infeasible"  ? design::infeasible
                  : status == "unbounded" ? design::unbounded
                                          : design::feasible;
        if ((rq.want == design::infeasible && !f.can_infeasible) ||
            (rq.want == design::unbounded && !f.can_unbounded) || rq.difficulty < 1 || rq.difficulty > 5)
            return drop(o, "generate", "regenerate_mismatch", "meta does not describe an instance of " + f.name);
        const instance in = generate(f, rq);
        if (fmt::format("{:016x}", canonical_hash(in.m)) != meta.value("hash", ""))
            return drop(o, "generate", "regenerate_mismatch", "canonical hash differs");
        const std::string question = jb.record["messages"][0]["content"].get<std::string>();
        const std::string problem = render_problem(f, in, representation::dp, false, rq.seed);
        if (question.rfind(problem, 0) != 0)
            return drop(o, "generate", "regenerate_mismatch", "the question is not this instance's statement");
        const std::string request = question.substr(problem.size());
        const bool has_opt = status == "optimal";
        const double opt = has_opt ? meta["objective"].get<double>() : 0.0;

        // 1. back-translation
        std::string text;
        if (!ask({{"user", back_translation_prompt(f, in)}}, o, &text)) return drop(o, "back", "backend_error", text);
        const std::string statement = trim(after_think(text));
        // 2. gates
        std::string detail;
        const std::string why = gate_statement(statement, in.data, has_opt, opt, &detail);
        if (!why.empty()) return drop(o, "gate", why, detail);
        // 3. forward formalisation with repair rounds
        ground_truth truth;
        truth.kind = has_opt ? truth_kind::objective : truth_kind::no_solution;
        truth.value = opt;
        objective_judge judge;
        judge.kind = tolerance_kind::rel;
        judge.tol = 1e-6;
        std::vector<chat_message> conv = {{"user", forward_prompt(statement)}};
        verdict last;
        for (int round = 1; round <= 1 + opt_.repair_rounds; round++) {
            std::string answer;
            if (!ask(conv, o, &answer)) return drop(o, "forward", "backend_error", answer);
            const exec_outcome run = execute(answer, ex);
            last = judge_outcome(truth, run, judge);
            if (last.correct) {
                o.kept = true;
                o.round = round;
                o.record = jb.record;
                o.record["id"] = id + "-rw";
                o.record["messages"][0]["content"] = statement + "\n" + request;
                o.record["meta"]["rewrite"] = {{"source", id}, {"round", round}};
                return o;
            }
            conv.push_back({"assistant", answer});
            conv.push_back({"user", "Running your LP file gave: " + describe_run(run) +
                                        ". That is not a correct model of the problem. Check every number, every "
                                        "constraint and the objective against the text, and write the complete "
                                        "corrected LP file in a ```lp block."});
        }
        return drop(o, "forward", std::string("formalisation_") + failure_name(last.why), last.detail);
    }

   private:
    static outcome& drop(outcome& o, const std::string& stage, const std::string& reason, const std::string& detail) {
        o.stage = stage;
        o.reason = reason;
        o.detail = detail.substr(0, 500);
        return o;
    }

    // One completion; false (with the error in *out) when the endpoint gave none.
    bool ask(const std::vector<chat_message>& messages, outcome& o, std::string* out) const {
        eval::gen_request req;
        req.item_id = "rewrite";
        req.messages = messages;
        req.params = opt_.params;
        gen_result g = b_.generate(req);
        o.requests++;
        o.prompt_tokens += g.prompt_tokens;
        o.completion_tokens += g.completion_tokens;
        if (!g.ok || g.completions.empty()) {
            *out = g.error.empty() ? "no completion" : g.error;
            return false;
        }
        *out = g.completions[0];
        return true;
    }

    static exec_outcome execute(const std::string& answer, executor& ex) {
        const artefact a = extract_artefact(answer, "lp");
        if (a.kind.empty()) {
            exec_outcome o;
            o.status = "no_artefact";
            return o;
        }
        if (a.kind == "python") return ex.run_python(a.text, "");
        return ex.run_model(a.kind, a.text);
    }

    const rewrite_options& opt_;
    backend& b_;
};

std::vector<job> read_dp_samples(const std::string& path, long limit) {
    std::vector<job> jobs;
    for_each_jsonl(
        path,
        [&](long n, const std::string&, ojson& r) {
            TREX_CHECK(r.contains("messages") && r["messages"].is_array() && r["messages"].size() >= 2 &&
                           r["messages"][0].contains("content") && r.contains("meta") && r["meta"].is_object(),
                       "{}: line {}: not a trex SFT sample (messages, meta)", path, n);
            if (r["meta"].value("representation", "") == "DP") jobs.push_back({n, std::move(r)});
            return limit <= 0 || (long)jobs.size() < limit;
        },
        " (not a trex data build directory?)");
    return jobs;
}

void write_lines(const std::string& path, const std::vector<ojson>& lines) {
    std::ofstream out(path);
    for (const auto& l : lines) out << l.dump() << "\n";
    TREX_CHECK(out.good(), "{}: write failed", path);
}

}  // namespace rewrite_detail

using namespace rewrite_detail;

std::string gate_statement(const std::string& text, const ojson& data, bool has_optimum, double optimum,
                           std::string* detail) {
    if (trim(text).empty()) return "empty";
    // numbers inside member names ("Site 9", "Week 3") are names, not data
    std::vector<std::string> names;
    string_leaves(data, names);
    std::sort(names.begin(), names.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
    names.erase(std::remove_if(names.begin(), names.end(),
                               [](const auto& n) { return n.find_first_of("0123456789") == std::string::npos; }),
                names.end());
    std::string plain;
    for (size_t p = 0; p < text.size();) {
        const auto hit =
            std::find_if(names.begin(), names.end(), [&](const auto& n) { return text.compare(p, n.size(), n) == 0; });
        if (hit == names.end()) {
            plain += text[p++];
        } else {
            plain += ' ';
            p += hit->size();
        }
    }
    const number_coverage c = check_numbers(plain, data);
    if (!c.missing.empty()) {
        *detail = "not told: " + join_and(c.missing);
        return "numbers_missing";
    }
    std::vector<double> sizes;
    collection_sizes(data, sizes);
    std::vector<std::string> extra;
    for (const auto& w : c.unused) {
        double v = 0;
        const bool parsed = parse_written(w, &v);
        if (parsed && has_optimum && same_value(v, optimum)) {
            *detail = "writes the optimum " + w;
            return "leaks_optimum";
        }
        if (parsed && std::any_of(sizes.begin(), sizes.end(), [&](double s) { return same_value(s, v); })) continue;
        extra.push_back(w);
    }
    if (!extra.empty()) {
        *detail = "not in the data: " + join_and(extra);
        return "numbers_extra";
    }
    return "";
}

rewrite_report run_rewrite(const rewrite_options& opt, backend& b, const exec_config& exec) {
    TREX_CHECK(opt.repair_rounds >= 0 && opt.repair_rounds <= 5, "--repair-rounds must be in 0..5 (got {})",
               opt.repair_rounds);
    TREX_CHECK(opt.concurrency >= 1 && opt.concurrency <= 64, "--concurrency must be in 1..64 (got {})",
               opt.concurrency);
    TREX_CHECK(!opt.output_dir.empty(), "an output directory is needed");
    TREX_CHECK(opt.force || !fs::exists(opt.output_dir), "{}: exists (use --force to replace it)", opt.output_dir);
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<job> jobs = read_dp_samples(opt.build_dir + "/sft.jsonl", opt.limit);

    std::vector<outcome> results(jobs.size());
    std::atomic<size_t> next{0}, done{0};
    std::mutex err_mu;
    std::string first_error;
    rewriter rw(opt, b);
    auto worker = [&](int slot) {
        try {
            executor ex(exec, slot);
            for (size_t i = next++; i < jobs.size(); i = next++) {
                results[i] = rw.process(jobs[i], ex);
                const size_t d = ++done;
                if (opt.show_progress && (d % 10 == 0 || d == jobs.size()))
                    std::fprintf(stderr, "\rtrex data rewrite: %zu / %zu samples", d, jobs.size());
            }
        } catch (const std::exception& e) {
            std::lock_guard<std::mutex> lk(err_mu);
            if (first_error.empty()) first_error = e.what();
            next = jobs.size();
        }
    };
    std::vector<std::thread> threads;
    const int n = std::max(1, std::min<int>(opt.concurrency, (int)jobs.size()));
    for (int t = 0; t < n; t++) threads.emplace_back(worker, t);
    for (auto& t : threads) t.join();
    if (opt.show_progress && !jobs.empty()) std::fprintf(stderr, "\n");
    TREX_CHECK(first_error.empty(), "trex data rewrite: {}", first_error);

    rewrite_report rep;
    rep.samples = (long)jobs.size();
    std::vector<ojson> kept, drops;
    for (size_t i = 0; i < jobs.size(); i++) {
        const outcome& o = results[i];
        rep.requests += o.requests;
        rep.prompt_tokens += o.prompt_tokens;
        rep.completion_tokens += o.completion_tokens;
        if (o.kept) {
            rep.kept++;
            (o.round == 1 ? rep.kept_first : rep.kept_repair)++;
            kept.push_back(o.record);
        } else {
            rep.drops[o.reason]++;
            drops.push_back({{"id", jobs[i].record.value("id", "")},
                             {"line", jobs[i].line},
                             {"stage", o.stage},
                             {"reason", o.reason},
                             {"detail", o.detail}});
        }
    }
    rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    // written next to the destination, renamed into place (nothing half-written)
    const std::string tmp = opt.output_dir + fmt::format(".tmp-{}", (long)getpid());
    fs::remove_all(tmp);
    fs::create_directories(tmp);
    try {
        write_lines(tmp + "/sft.jsonl", kept);
        write_lines(tmp + "/drops.jsonl", drops);
        ojson report = {{"build", opt.build_dir},
                        {"backend", b.identity()},
                        {"repair_rounds", opt.repair_rounds},
                        {"temperature", opt.params.temperature},
                        {"max_tokens", opt.params.max_tokens},
                        {"samples", rep.samples},
                        {"kept", rep.kept},
                        {"kept_first_try", rep.kept_first},
                        {"kept_after_repair", rep.kept_repair},
                        {"drops", rep.drops},
                        {"requests", rep.requests},
                        {"prompt_tokens", rep.prompt_tokens},
                        {"completion_tokens", rep.completion_tokens},
                        {"seconds", rep.seconds}};
        std::ofstream(tmp + "/report.json") << report.dump(2) << "\n";
        if (fs::exists(opt.output_dir)) fs::remove_all(opt.output_dir);
        fs::rename(tmp, opt.output_dir);
    } catch (...) {
        fs::remove_all(tmp);
        throw;
    }
    return rep;
}

}  // namespace trex::eval
