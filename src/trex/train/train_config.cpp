#include "trex/train/train_config.hpp"

#include <toml++/toml.h>

#include <map>
#include <set>

#include <fmt/format.h>

#include "trex/base/error.hpp"

namespace trex {

namespace {

// The keys each section accepts (typos are errors, not silently ignored).
const std::map<std::string, std::set<std::string>>& known_keys() {
    static const std::map<std::string, std::set<std::string>> k = {
        {"run", {"name", "out_dir", "mode", "seed", "steps", "resume"}},
        {"model", {"config", "init_from", "init_std", "recompute"}},
        {"data", {"batch", "seq", "grad_accum", "pad_id", "sources", "tokenizer", "train_on", "chat_thinking"}},
        {"optim",
         {"kind", "lr", "min_lr", "warmup", "decay_start", "total", "weight_decay", "clip_grad_norm", "beta1", "beta2",
          "eps", "muon_momentum", "muon_nesterov", "muon_update_rms", "ns_fast_steps", "ns_stable_steps"}},
        {"loss",
         {"mtp_weight", "mtp_weight_after_decay", "balance_alpha", "bias_update_speed", "indexer_weight",
          "indexer_dense_steps"}},
        {"checkpoint", {"every", "keep_last"}},
        {"log", {"every", "report"}},
        {"guards", {"max_consecutive_skips", "spike_factor"}},
        {"dist", {"tp", "pp", "ep", "timeout", "overlap", "pp_schedule", "pp_virtual", "pp_layers"}},
    };
    return k;
}

struct reader {
    const toml::table& root;
    std::string source;

    const toml::node* node(const std::string& sec, const std::string& key) const {
        const toml::node* s = root.get(sec);
        if (!s || !s->is_table()) return nullptr;
        return s->as_table()->get(key);
    }
    [[noreturn]] void type_error(const std::string& sec, const std::string& key, const char* want) const {
        throw error(fmt::format("{}: key '{}.{}': expected {}", source, sec, key, want));
    }
    void get(const std::string& sec, const std::string& key, std::string& out) const {
        if (const auto* n = node(sec, key)) {
            if (!n->is_string()) type_error(sec, key, "a string");
            out = n->as_string()->get();
        }
    }
    void get(const std::string& sec, const std::string& key, int64_t& out) const {
        if (const auto* n = node(sec, key)) {
            if (!n->is_integer()) type_error(sec, key, "an integer");
            out = n->as_integer()->get();
        }
    }
    void get(const std::string& sec, const std::string& key, int& out) const {
        int64_t v = out;
        get(sec, key, v);
        out = (int)v;
    }
    void get(const std::string& sec, const std::string& key, uint64_t& out) const {
        int64_t v = (int64_t)out;
        get(sec, key, v);
        if (v < 0) type_error(sec, key, "a non-negative integer");
        out = (uint64_t)v;
    }
    void get(const std::string& sec, const std::string& key, std::vector<int>& out) const {
        if (const auto* n = node(sec, key)) {
            if (!n->is_array()) type_error(sec, key, "an array of integers");
            out.clear();
            for (const auto& e : *n->as_array()) {
                if (!e.is_integer()) type_error(sec, key, "an array of integers");
                out.push_back((int)e.as_integer()->get());
            }
        }
    }
    void get(const std::string& sec, const std::string& key, double& out) const {
        if (const auto* n = node(sec, key)) {
            if (n->is_floating_point())
                out = n->as_floating_point()->get();
            else if (n->is_integer())
                out = (double)n->as_integer()->get();
            else
                type_error(sec, key, "a number");
        }
    }
    void get(const std::string& sec, const std::string& key, bool& out) const {
        if (const auto* n = node(sec, key)) {
            if (!n->is_boolean()) type_error(sec, key, "true or false");
            out = n->as_boolean()->get();
        }
    }
};

// "a.b.c=value" → sets root[a][b][c] = value (value parsed as TOML).
void apply_override(toml::table& root, const std::string& ov) {
    const size_t eq = ov.find('=');
    TREX_CHECK(eq != std::string::npos && eq > 0, "--set '{}': expected section.key=value", ov);
    const std::string path = ov.substr(0, eq), value = ov.substr(eq + 1);
    toml::table parsed;
    try {
        parsed = toml::parse("v = " + value);
    } catch (const toml::parse_error& e) {
        try {  // a bare word is taken as a string
            parsed = toml::parse("v = \"" + value + "\"");
        } catch (const toml::parse_error&) {
            throw error(fmt::format("--set '{}': cannot parse the value: {}", ov, e.description()));
        }
    }
    std::vector<std::string> parts;
    for (size_t a = 0;;) {
        const size_t b = path.find('.', a);
        parts.push_back(path.substr(a, b == std::string::npos ? std::string::npos : b - a));
        if (b == std::string::npos) break;
        a = b + 1;
    }
    TREX_CHECK(parts.size() == 2, "--set '{}': expected section.key=value", ov);
    toml::table* sec = root[parts[0]].as_table();
    if (!sec) {
        root.insert_or_assign(parts[0], toml::table{});
        sec = root[parts[0]].as_table();
    }
    sec->insert_or_assign(parts[1], *parsed.get("v"));
}

}  // namespace

train_config load_train_config(const std::string& path, const std::vector<std::string>& overrides) {
    toml::table root;
    const std::string source = path.empty() ? "<defaults>" : path;
    if (!path.empty()) {
        try {
            root = toml::parse_file(path);
        } catch (const toml::parse_error& e) {
            throw error(fmt::format("{}:{}:{}: {}", path, e.source().begin.line, e.source().begin.column,
                                    e.description()));
        }
    }
    for (const auto& ov : overrides) apply_override(root, ov);
    for (const auto& [sec, node] : root) {
        const std::string s(sec.str());
        auto it = known_keys().find(s);
        TREX_CHECK(it != known_keys().end(), "{}: unknown section '[{}]'", source, s);
        TREX_CHECK(node.is_table(), "{}: '{}' must be a table", source, s);
        for (const auto& [key, v] : *node.as_table())
            TREX_CHECK(it->second.count(std::string(key.str())), "{}: unknown key '{}.{}'", source, s, key.str());
    }

    train_config c;
    const reader r{root, source};
    r.get("run", "name", c.name);
    c.out_dir = "runs/" + c.name;
    r.get("run", "out_dir", c.out_dir);
    r.get("run", "mode", c.mode);
    r.get("run", "seed", c.seed);
    r.get("run", "steps", c.steps);
    r.get("run", "resume", c.resume);
    r.get("model", "config", c.model_config);
    r.get("model", "init_from", c.init_from);
    r.get("model", "init_std", c.init_std);
    r.get("model", "recompute", c.recompute);
    r.get("data", "batch", c.batch);
    r.get("data", "seq", c.seq);
    r.get("data", "grad_accum", c.grad_accum);
    int64_t pad = c.pad_id;
    r.get("data", "pad_id", pad);
    c.pad_id = (int32_t)pad;
    r.get("data", "tokenizer", c.tokenizer);
    r.get("data", "train_on", c.train_on);
    r.get("data", "chat_thinking", c.chat_thinking);
    if (const auto* n = r.node("data", "sources")) {
        TREX_CHECK(n->is_array_of_tables(), "{}: key 'data.sources': expected an array of tables", source);
        int i = 0;
        for (const auto& e : *n->as_array()) {
            const toml::table& t = *e.as_table();
            data_source_config s;
            for (const auto& [key, v] : t) {
                const std::string k(key.str());
                TREX_CHECK(k == "kind" || k == "path" || k == "weight", "{}: unknown key 'data.sources[{}].{}'",
                           source, i, k);
            }
            TREX_CHECK(t["kind"].is_string(), "{}: key 'data.sources[{}].kind': expected a string", source, i);
            s.kind = t["kind"].as_string()->get();
            if (t["path"]) {
                TREX_CHECK(t["path"].is_string(), "{}: key 'data.sources[{}].path': expected a string", source, i);
                s.path = t["path"].as_string()->get();
            }
            if (t["weight"]) {
                TREX_CHECK(t["weight"].is_number(), "{}: key 'data.sources[{}].weight': expected a number", source,
                           i);
                s.weight = t["weight"].value<double>().value();
            }
            c.sources.push_back(s);
            i++;
        }
    }
    if (c.sources.empty()) c.sources.push_back({"synthetic-chain", "", 1.0});
    r.get("optim", "kind", c.optim.kind);
    r.get("optim", "lr", c.schedule.peak);
    c.schedule.min_lr = c.schedule.peak * 0.1;
    r.get("optim", "min_lr", c.schedule.min_lr);
    r.get("optim", "warmup", c.schedule.warmup);
    r.get("optim", "decay_start", c.schedule.decay_start);
    c.schedule.total = c.steps;
    r.get("optim", "total", c.schedule.total);
    r.get("optim", "weight_decay", c.optim.weight_decay);
    r.get("optim", "clip_grad_norm", c.optim.clip_grad_norm);
    r.get("optim", "beta1", c.optim.beta1);
    r.get("optim", "beta2", c.optim.beta2);
    r.get("optim", "eps", c.optim.eps);
    r.get("optim", "muon_momentum", c.optim.muon_momentum);
    r.get("optim", "muon_nesterov", c.optim.muon_nesterov);
    r.get("optim", "muon_update_rms", c.optim.muon_update_rms);
    r.get("optim", "ns_fast_steps", c.optim.ns_fast_steps);
    r.get("optim", "ns_stable_steps", c.optim.ns_stable_steps);
    r.get("loss", "mtp_weight", c.mtp_weight);
    c.mtp_weight_after_decay = c.mtp_weight;
    r.get("loss", "mtp_weight_after_decay", c.mtp_weight_after_decay);
    r.get("loss", "balance_alpha", c.balance_alpha);
    r.get("loss", "bias_update_speed", c.bias_update_speed);
    r.get("loss", "indexer_weight", c.indexer_weight);
    r.get("loss", "indexer_dense_steps", c.indexer_dense_steps);
    r.get("checkpoint", "every", c.checkpoint_every);
    r.get("checkpoint", "keep_last", c.keep_last);
    r.get("log", "every", c.log_every);
    r.get("log", "report", c.report);
    r.get("guards", "max_consecutive_skips", c.max_consecutive_skips);
    r.get("guards", "spike_factor", c.spike_factor);
    r.get("dist", "tp", c.tp);
    r.get("dist", "pp", c.pp);
    r.get("dist", "ep", c.ep);
    r.get("dist", "timeout", c.dist_timeout);
    r.get("dist", "overlap", c.dist_overlap);
    r.get("dist", "pp_schedule", c.pp_schedule);
    r.get("dist", "pp_virtual", c.pp_virtual);
    r.get("dist", "pp_layers", c.pp_layers);

    TREX_CHECK(c.mode == "cpt" || c.mode == "sft", "{}: key 'run.mode': must be 'cpt' or 'sft', got '{}'", source,
               c.mode);
    TREX_CHECK(c.steps > 0, "{}: key 'run.steps': must be positive", source);
    TREX_CHECK(c.batch > 0 && c.seq > 0 && c.grad_accum > 0, "{}: keys 'data.batch/seq/grad_accum': must be positive",
               source);
    TREX_CHECK(c.schedule.peak > 0, "{}: key 'optim.lr': must be positive", source);
    TREX_CHECK(c.train_on == "all" || c.train_on == "last", "{}: key 'data.train_on': 'all' or 'last', got '{}'",
               source, c.train_on);
    for (size_t i = 0; i < c.sources.size(); i++) {
        const std::string& k = c.sources[i].kind;
        TREX_CHECK(k == "synthetic-chain" || k == "shards" || k == "text" || k == "jsonl" || k == "messages" ||
                       k == "documents",
                   "{}: key 'data.sources[{}].kind': one of synthetic-chain, shards, text, jsonl, messages, documents; "
                   "got '{}'",
                   source, i, k);
        TREX_CHECK(k == "synthetic-chain" || !c.sources[i].path.empty(), "{}: key 'data.sources[{}].path': required "
                   "for a '{}' source", source, i, k);
        TREX_CHECK(c.sources[i].weight > 0, "{}: key 'data.sources[{}].weight': must be positive", source, i);
    }
    TREX_CHECK(c.optim.kind == "muon" || c.optim.kind == "adamw", "{}: key 'optim.kind': 'muon' or 'adamw', got '{}'",
               source, c.optim.kind);
    TREX_CHECK(c.checkpoint_every >= 0 && c.keep_last >= 1, "{}: keys 'checkpoint.every/keep_last' out of range",
               source);
    TREX_CHECK(c.max_consecutive_skips >= 1, "{}: key 'guards.max_consecutive_skips': must be ≥ 1", source);
    TREX_CHECK(c.dist_timeout > 0, "{}: key 'dist.timeout': must be positive (seconds)", source);
    TREX_CHECK(c.pp_schedule == "1f1b" || c.pp_schedule == "interleaved",
               "{}: key 'dist.pp_schedule': \"1f1b\" or \"interleaved\", got \"{}\"", source, c.pp_schedule);
    TREX_CHECK(c.pp_virtual >= 1, "{}: key 'dist.pp_virtual': must be at least 1", source);
    TREX_CHECK(c.pp_schedule == "interleaved" || c.pp_virtual == 1,
               "{}: key 'dist.pp_virtual' = {} needs dist.pp_schedule = \"interleaved\"", source, c.pp_virtual);
    for (size_t i = 0; i < c.sources.size(); i++)
        TREX_CHECK(c.sources[i].weight > 0, "{}: key 'data.sources[{}].weight': must be positive", source, i);
    return c;
}

}  // namespace trex
