#include "trex/recipe/recipe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "trex/base/error.hpp"
#include "trex/base/files.hpp"
#include "trex/io/checkpoint.hpp"
#include "trex/model/embedded_config.hpp"
#include "trex/optmodel/families/family.hpp"
#include "trex/recipe/cluster.hpp"
#include "trex/recipe/corpus.hpp"
#include "trex/recipe/profile.hpp"
#include "trex/recipe/report.hpp"
#include "trex/recipe/stages.hpp"
#include "trex/tokenizer/paths.hpp"
#include "trex/tokenizer/train.hpp"

namespace trex::recipe {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {

// The three models the paper's table compares, and the training runs behind them.
const std::vector<std::string> kEvalModels = {"base", "sft-only", "cpt-sft"};
const std::vector<std::string> kAllModels = {"base", "cpt", "sft-only", "cpt-sft"};

struct paths {
    std::string out;  // absolute
    std::string at(const std::string& rel) const { return out + "/" + rel; }
};

std::string toml_string(const std::string& s) {
    return ojson(s).dump();
}  // JSON string syntax is valid TOML

void write_config(const paths& p, const std::string& rel, const std::string& text) {
    fs::create_directories(fs::path(p.at(rel)).parent_path());
    write_file_atomic(p.at(rel), text);
}

// ---- configs the stages read

std::vector<std::string> training_families(const profile& pr) {
    if (!pr.families.empty()) return pr.families;
    std::vector<std::string> names;
    for (const auto* f : optmodel::all_families())
        if (std::find(pr.transfer_families.begin(), pr.transfer_families.end(), f->name) == pr.transfer_families.end())
            names.push_back(f->name);
    return names;
}

ojson data_build_config(const paths& p, const profile& pr) {
    ojson cats = ojson::object();
    for (const auto& [k, w] : pr.categories) cats[k] = w;
    return {{"seed", 2026},
            {"output_dir", p.at("data/or")},
            {"sft",
             {{"count", pr.sft_count},
              {"families", training_families(pr)},
              {"representations", {{"DP", 1}, {"DT", 1}, {"DPS", 1}}},
              {"categories", cats},
              {"dialects", {{"pulp", 3}, {"gurobipy", 1}}},
              {"difficulty", {1, pr.difficulty_hi}},
              {"answer", pr.sft_answer}}},
            {"test", {{"count", pr.test_count}}},
            {"cpt", {{"documents", pr.cpt_documents}, {"resources", true}}}};
}

ojson transfer_build_config(const paths& p, const profile& pr) {
    return {{"seed", 2027},
            {"output_dir", p.at("data/transfer")},
            {"sft", {{"count", 0}, {"families", pr.transfer_families}, {"difficulty", {1, pr.difficulty_hi}}}},
            {"test", {{"count", pr.transfer_count}}}};
}

// The profile's model config with the vocabulary of the recipe's tokenizer.
std::string model_config(const profile& pr, const std::string& source_dir) {
    const std::string text = pr.model == "embedded:v4-tiny" ? std::string(embedded_tiny_config_json())
                                                            : read_file(source_dir + "/" + pr.model);
    ojson m = ojson::parse(text);
    m["vocab_size"] = pr.vocab_size;
    m["max_position_embeddings"] = pr.max_position;
    if (pr.sliding_window > 0) m["sliding_window"] = pr.sliding_window;
    return m.dump(2) + "\n";
}

struct train_stage_spec {
    std::string name, mode, init_from;  // init_from: a run name ("" = fresh)
    train_sizes sizes;
    std::vector<std::pair<std::string, std::string>> sources;  // kind=path, weight encoded by the caller
    std::vector<double> weights;
};

std::string train_toml(const paths& p, const train_stage_spec& t, const std::string& init_checkpoint) {
    const auto& z = t.sizes;
    std::string s = fmt::format("[run]\nname = {}\nout_dir = {}\nmode = \"{}\"\nseed = 1234\nsteps = {}\n\n",
                                toml_string(t.name), toml_string(p.at("runs/" + t.name)), t.mode, z.steps);
    s += fmt::format("[model]\nconfig = {}\n", toml_string(p.at("configs/model.json")));
    if (!init_checkpoint.empty()) s += fmt::format("init_from = {}\n", toml_string(init_checkpoint));
    s += fmt::format("\n[data]\nbatch = {}\nseq = {}\ntokenizer = {}\n", z.batch, z.seq,
                     toml_string(p.at("tokenizer/tokenizer.json")));
    if (t.mode == "sft") s += "pad_id = 2\n";
    for (size_t i = 0; i < t.sources.size(); i++)
        s += fmt::format("\n[[data.sources]]\nkind = \"{}\"\npath = {}\nweight = {}\n", t.sources[i].first,
                         toml_string(t.sources[i].second), t.weights[i]);
    const int decay = std::max(z.warmup, z.steps * 6 / 10);
    s += fmt::format("\n[optim]\nkind = \"muon\"\nlr = {}\nwarmup = {}\ndecay_start = {}\n", z.lr, z.warmup, decay);
    s += "\n[loss]\nmtp_weight = 0.3\nmtp_weight_after_decay = 0.1\n";
    s += fmt::format("\n[checkpoint]\nevery = {}\nkeep_last = 1\n", std::max(1, z.steps / 4));
    return s;
}

std::string lp_prompt() {
    return "=== config ===\n# trex recipe: the LP-file task in the words of the SFT set (the answer is a CPLEX LP "
           "file).\nartefact: lp\n=== user ===\n{{question}}\n{{data}}\nWrite the complete model as a CPLEX LP file "
           "(.lp) that a solver can read. Do not solve it.\n=== data ===\nThe problem data (data.json):\n```json\n"
           "{{data_json}}\n```\n";
}

std::string pulp_prompt() {
    return "=== config ===\n# trex recipe: the code task in the words of the SFT set (a PuLP program).\nartefact: "
           "python\n=== user ===\n{{question}}\n{{data}}\nWrite a Python program using PuLP that solves this "
           "problem and prints the optimal objective value.\n=== data ===\nThe program must read its data from "
           "`data.json`.\n";
}

// ---- the benchmark sets of the evaluation

struct bench_set {
    std::string name, path;
};

std::vector<bench_set> eval_sets(const paths& p, const recipe_options& o) {
    std::vector<bench_set> sets;
    for (const char* rep : {"dp", "dt", "dps"}) {
        sets.push_back({fmt::format("heldout-{}", rep), p.at(fmt::format("data/or/test/{}.jsonl", rep))});
        sets.push_back({fmt::format("transfer-{}", rep), p.at(fmt::format("data/transfer/test/{}.jsonl", rep))});
    }
    for (const auto& b : o.benches) {
        const auto eq = b.find('=');
        const std::string path = eq == std::string::npos ? b : b.substr(eq + 1);
        const std::string name = eq == std::string::npos ? fs::path(b).stem().string() : b.substr(0, eq);
        TREX_CHECK(fs::is_regular_file(path), "--bench {}: no such file", b);
        sets.push_back({name, fs::absolute(path).string()});
    }
    return sets;
}

// ---- stages

std::string latest_checkpoint(const paths& p, const std::string& run) {
    std::vector<std::string> skipped;
    const std::string c = find_latest_checkpoint(p.at("runs/" + run), &skipped);
    TREX_CHECK(!c.empty(), "runs/{}: no valid checkpoint (the stage did not finish)", run);
    return c;
}

stage data_stage(const paths& p, const std::string& name, const std::string& cfg_rel, const std::string& out_rel) {
    stage s;
    s.name = name;
    s.outputs = {out_rel};
    s.definition = read_file(p.at(cfg_rel));
    s.run = [p, name, cfg_rel](const stage_context& c) {
        run_trex(c, name, {"data", "build", "--config", p.at(cfg_rel), "--force", "--no-progress"},
                 p.at("logs/" + name + ".log"));
    };
    return s;
}

stage corpus_stage(const paths& p, const profile& pr, const recipe_options& o) {
    corpus_options c;
    c.roots = o.corpus_roots.empty() ? default_corpus_roots() : o.corpus_roots;
    c.max_bytes = pr.general_bytes;
    c.heldout_share = pr.heldout_share;
    for (const auto& b : eval_sets(p, o)) c.against.push_back(b.path);
    stage s;
    s.name = "corpus";
    s.deps = {"data", "transfer-data"};
    s.outputs = {"corpus"};
    s.definition =
        ojson{{"roots", c.roots}, {"max_bytes", c.max_bytes}, {"heldout", c.heldout_share}, {"against", c.against}}
            .dump();
    s.run = [p, c](const stage_context&) {
        const corpus_stats st = build_general_corpus(c, p.at("corpus"));
        std::fprintf(stderr, "  corpus: %zu training documents (%.1f MB), %zu held out, %zu paragraphs dropped\n",
                     st.train_docs, st.train_bytes / 1e6, st.heldout_docs, st.paragraphs_dropped);
    };
    return s;
}

// The tokenizer's training text: the general corpus, the SFT conversations and the CPT documents.
std::vector<std::string> tokenizer_documents(const paths& p) {
    std::vector<std::string> docs;
    std::ifstream corpus(p.at("corpus/train.jsonl"));
    for (std::string line; std::getline(corpus, line);) docs.push_back(ojson::parse(line)["text"].get<std::string>());
    std::ifstream sft(p.at("data/or/sft.jsonl"));
    for (std::string line; std::getline(sft, line);) {
        std::string text;
        for (const auto& m : ojson::parse(line)["messages"]) text += m["content"].get<std::string>() + "\n";
        docs.push_back(text);
    }
    std::vector<std::string> cpt;
    for (const auto& e : fs::recursive_directory_iterator(p.at("data/or/cpt")))
        if (e.is_regular_file() && e.path().extension() == ".md") cpt.push_back(e.path().string());
    std::sort(cpt.begin(), cpt.end());
    for (const auto& f : cpt) docs.push_back(read_file(f));
    return docs;
}

stage tokenizer_stage(const paths& p, const profile& pr) {
    stage s;
    s.name = "tokenizer";
    s.deps = {"data", "corpus"};
    s.outputs = {"tokenizer"};
    s.definition = fmt::format("vocab {}\n", pr.vocab_size) + tok::trained_pre_tokenizer(false).dump();
    const size_t vocab = (size_t)pr.vocab_size;
    s.run = [p, vocab](const stage_context&) {
        const auto docs = tokenizer_documents(p);
        std::vector<std::string_view> views(docs.begin(), docs.end());
        tok::train_options t;
        t.vocab_size = vocab;
        tok::train_stats st;
        const auto j = tok::train_bpe(views, t, &st);
        fs::create_directories(p.at("tokenizer"));
        tok::write_json_atomic(p.at("tokenizer/tokenizer.json"), j);
        std::fprintf(stderr, "  tokenizer: %zu ids (%zu merges) from %.1f MB\n", st.vocab_size, st.merges,
                     st.bytes / 1e6);
    };
    return s;
}

stage train_stage(const paths& p, const train_stage_spec& t, std::vector<std::string> deps) {
    stage s;
    s.name = t.name;
    s.deps = std::move(deps);
    s.outputs = {"runs/" + t.name + "/checkpoints"};
    // the TOML names the model config by path: its text is part of what defines the stage
    s.definition =
        train_toml(p, t, t.init_from.empty() ? "" : "<" + t.init_from + ">") + read_file(p.at("configs/model.json"));
    s.run = [p, t](const stage_context& c) {
        const std::string init = t.init_from.empty() ? "" : latest_checkpoint(p, t.init_from);
        const std::string cfg = "configs/train-" + t.name + ".toml";
        write_config(p, cfg, train_toml(p, t, init));
        std::vector<std::string> args = {"train", "--config", p.at(cfg)};
        if (c.interrupted) args.insert(args.end(), {"--resume", "auto"});
        run_trex(c, t.name, args, p.at("logs/" + t.name + ".log"));
    };
    return s;
}

std::vector<stage> training_stages(const paths& p, const profile& pr) {
    const std::string corpus = p.at("corpus/train.jsonl");
    const std::string sft = p.at("data/or/sft.jsonl");
    std::vector<stage> out;
    out.push_back(train_stage(p, {"base", "cpt", "", pr.base, {{"jsonl", corpus}}, {1.0}}, {"corpus", "tokenizer"}));
    out.push_back(train_stage(p,
                              {"cpt",
                               "cpt",
                               "base",
                               pr.cpt,
                               {{"documents", p.at("data/or/cpt")}, {"jsonl", corpus}},
                               {1.0 - pr.cpt_replay, pr.cpt_replay}},
                              {"base", "data", "corpus", "tokenizer"}));
    out.push_back(
        train_stage(p, {"sft-only", "sft", "base", pr.sft, {{"messages", sft}}, {1.0}}, {"base", "data", "tokenizer"}));
    out.push_back(
        train_stage(p, {"cpt-sft", "sft", "cpt", pr.sft, {{"messages", sft}}, {1.0}}, {"cpt", "data", "tokenizer"}));
    return out;
}

stage eval_stage(const paths& p, const profile& pr, const std::vector<bench_set>& sets, const std::string& model,
                 const std::string& form) {
    std::vector<std::string> args = {"eval",
                                     "run",
                                     "--out",
                                     p.at("eval/" + model + "-" + form),
                                     "--backend",
                                     "local",
                                     "--checkpoint",
                                     p.at("runs/" + model),
                                     "--tokenizer",
                                     p.at("tokenizer/tokenizer.json"),
                                     "--prompt",
                                     p.at("configs/prompt-" + form + ".txt"),
                                     "--chat-mode",
                                     "--temperature",
                                     "0",
                                     "--max-tokens",
                                     std::to_string(pr.max_tokens),
                                     "--max-context",
                                     std::to_string(pr.max_position),
                                     "--local-batch",
                                     std::to_string(pr.local_batch),
                                     "--no-progress"};
    if (pr.eval_limit > 0) args.insert(args.end(), {"--limit", std::to_string(pr.eval_limit)});
    for (const auto& b : sets) args.insert(args.end(), {"--bench", b.name + "=" + b.path});
    stage s;
    s.name = "eval-" + model + "-" + form;
    s.deps = {model, "data", "transfer-data", "tokenizer"};
    s.outputs = {"eval/" + model + "-" + form};
    for (const auto& a : args) s.definition += a + "\n";
    s.definition += read_file(p.at("configs/prompt-" + form + ".txt"));
    s.run = [p, args, name = s.name, model_form = model + "-" + form](const stage_context& c) {
        std::vector<std::string> a = args;
        if (!c.interrupted) a.push_back("--fresh");
        // exit 2: every item judged, some without a completion (for the local backend a prompt longer than the
        // model's context): those count as failed (outcome backend_error in the report), as the harness scores them
        const int rc = run_trex(c, name, a, p.at("logs/" + name + ".log"), "", {0, 2});
        TREX_CHECK(rc == 0 || fs::exists(p.at("eval/" + model_form + "/summary.json")),
                   "{}: trex eval wrote no summary (see logs/{}.log)", name, name);
    };
    return s;
}

stage perplexity_stage(const paths& p, const profile& pr) {
    stage s;
    s.name = "perplexity";
    s.deps = {"corpus", "tokenizer", "base", "cpt", "sft-only", "cpt-sft"};
    s.outputs = {"perplexity"};
    s.definition = fmt::format("chunk {}", pr.base.seq);
    const int chunk = pr.base.seq;
    s.run = [p, chunk](const stage_context& c) {
        fs::create_directories(p.at("perplexity"));
        for (const auto& m : kAllModels) {
            const std::string out = p.at("perplexity/" + m + ".json");
            const std::string log = p.at("logs/perplexity.log");
            run_trex(c, "perplexity of " + m,
                     {"score", "--checkpoint", p.at("runs/" + m), "--text", p.at("corpus/heldout.txt"), "--tokenizer",
                      p.at("tokenizer/tokenizer.json"), "--chunk", std::to_string(chunk), "--json"},
                     log, out);
        }
    };
    return s;
}

std::vector<stage> all_stages(const paths& p, const profile& pr, const recipe_options& o) {
    std::vector<stage> st;
    st.push_back(data_stage(p, "data", "configs/data.json", "data/or"));
    st.push_back(data_stage(p, "transfer-data", "configs/transfer-data.json", "data/transfer"));
    st.push_back(corpus_stage(p, pr, o));
    st.push_back(tokenizer_stage(p, pr));
    for (auto& t : training_stages(p, pr)) st.push_back(std::move(t));
    const auto sets = eval_sets(p, o);
    for (const auto& form : pr.eval_forms)
        for (const auto& m : kEvalModels) st.push_back(eval_stage(p, pr, sets, m, form));
    st.push_back(perplexity_stage(p, pr));
    return st;
}

void write_configs(const paths& p, const profile& pr, const std::string& source_dir) {
    write_config(p, "configs/data.json", data_build_config(p, pr).dump(2) + "\n");
    write_config(p, "configs/transfer-data.json", transfer_build_config(p, pr).dump(2) + "\n");
    write_config(p, "configs/model.json", model_config(pr, source_dir));
    write_config(p, "configs/prompt-lp.txt", lp_prompt());
    write_config(p, "configs/prompt-pulp.txt", pulp_prompt());
}

}  // namespace

recipe_outcome run_recipe(const recipe_options& opt) {
    if (opt.profile == "cluster") {
        const std::string out = opt.out_dir.empty() ? "runs/recipe-cluster" : opt.out_dir;
        recipe_outcome o;
        o.summary = run_cluster_profile({opt.cluster_run, out, opt.trex_binary});
        o.report_md = o.summary["report"].get<std::string>();
        return o;
    }
    const profile& pr = profile_named(opt.profile);
    const std::string out = opt.out_dir.empty() ? "runs/recipe-" + pr.name : opt.out_dir;
    fs::create_directories(out);
    const paths p{fs::absolute(out).lexically_normal().string()};
    const std::string source_dir = opt.source_dir.empty() ? tok::source_dir() : opt.source_dir;
    write_configs(p, pr, source_dir);
    const auto stages = all_stages(p, pr, opt);
    std::fprintf(stderr, "trex recipe --profile %s: %zu stages in %s\n", pr.name.c_str(), stages.size(), p.out.c_str());
    size_t k = 0;
    stage_context ctx{p.out, opt.resume, false};
    if (!opt.trex_binary.empty()) ctx.trex = opt.trex_binary;
    const auto results = run_stages(stages, ctx, [&](const stage& s, bool skipped) {
        std::fprintf(stderr, "[%zu/%zu] %s%s\n", ++k, stages.size(), s.name.c_str(),
                     skipped ? ": done before, unchanged (skipped)" : "");
    });
    report_inputs in;
    in.profile = pr.name;
    in.profile_summary = pr.summary;
    in.out_dir = p.out;
    in.models = kEvalModels;
    in.training_runs = kAllModels;
    in.forms = pr.eval_forms;
    for (const auto& b : eval_sets(p, opt)) in.sets.push_back(b.name);
    for (const auto& r : results) in.stages.push_back({r.name, r.skipped, r.wall_s});
    recipe_outcome o;
    o.summary = write_recipe_report(in, &o.report_md);
    return o;
}

}  // namespace trex::recipe
