#include "trex/train/train_config.hpp"

#include <toml++/toml.h>

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "trex/base/error.hpp"

namespace trex {

namespace {

// The keys each section accepts (typos are errors, not silently ignored).
const std::map<std::string, std::set<std::string>>& known_keys() {
    static const std::map<std::string, std::set<std::string>> k = {
        {"run", {"name", "out_dir", "mode", "seed", "steps", "resume"}},
        {"model", {"config", "init_from", "init_std", "recompute", "qat", "indexer_ties", "precision"}},
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
        std::ostringstream given;
        if (const auto* n = node(sec, key)) n->visit([&given](const auto& v) { given << v; });
        std::string g = given.str();
        if (g.size() > 60) g = g.substr(0, 57) + "...";
        throw error(fmt::format("{}: key '{}.{}' = {}: expected {}", source, sec, key, g, want));
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
        if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
            throw error(fmt::format("{}: key '{}.{}' = {}: out of range (at most {})", source, sec, key, v,
                                    std::numeric_limits<int>::max()));
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
                const int64_t v = e.as_integer()->get();
                if (v < 1 || v > std::numeric_limits<int>::max())
                    throw error(fmt::format("{}: key '{}.{}': entry {} is out of range (1 to {})", source, sec, key, v,
                                            std::numeric_limits<int>::max()));
                out.push_back((int)v);
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

// Every value of a resolved config against its range, before any work: one line naming the key and the value.
struct range_checker {
    const std::string& source;

    template <typename T>
    void require(bool ok, const char* key, const T& value, const char* rule) const {
        if (!ok) throw error(fmt::format("{}: key '{}' = {}: {}", source, key, value, rule));
    }
    void positive(const char* key, int64_t v) const { require(v > 0, key, v, "must be positive"); }
    void non_negative(const char* key, int64_t v) const { require(v >= 0, key, v, "must be 0 or more"); }
    void finite_positive(const char* key, double v) const {
        require(std::isfinite(v) && v > 0, key, v, "must be a finite number > 0");
    }
    void finite_non_negative(const char* key, double v) const {
        require(std::isfinite(v) && v >= 0, key, v, "must be a finite number >= 0");
    }
    void unit_interval(const char* key, double v) const {  // a momentum / decay rate: [0, 1)
        require(std::isfinite(v) && v >= 0 && v < 1, key, v, "must be in [0, 1)");
    }
    void one_of(const char* key, const std::string& v, std::initializer_list<const char*> allowed) const {
        for (const char* a : allowed)
            if (v == a) return;
        std::string list;
        for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        throw error(fmt::format("{}: key '{}' = \"{}\": must be one of {}", source, key, v, list));
    }
};

// Bounds that keep every derived count (tokens per step, positions) far inside int64 and the kernels' int32 indexing.
constexpr int64_t max_steps = int64_t(1) << 40;
constexpr int64_t max_tokens_per_micro_batch = int64_t(1) << 31;

void check_ranges(const train_config& c, const std::string& source) {
    const range_checker r{source};
    r.one_of("run.mode", c.mode, {"cpt", "sft"});
    r.one_of("model.qat", c.qat, {"auto", "none", "release"});
    r.one_of("model.indexer_ties", c.indexer_ties, {"auto", "stable", "torch"});
    r.one_of("model.precision", c.precision, {"fp32", "bf16"});
    r.positive("run.steps", c.steps);
    r.require(c.steps <= max_steps, "run.steps", c.steps, "too large (at most 2^40)");
    r.finite_positive("model.init_std", c.init_std);
    r.positive("data.batch", c.batch);
    r.positive("data.seq", c.seq);
    r.positive("data.grad_accum", c.grad_accum);
    r.require(c.batch <= max_tokens_per_micro_batch / c.seq, "data.batch", c.batch,
              fmt::format("batch x seq (x {}) exceeds 2^31 tokens per micro-batch", c.seq).c_str());
    r.require(c.grad_accum <= max_steps, "data.grad_accum", c.grad_accum, "too large (at most 2^40)");
    r.require(c.pad_id >= 0, "data.pad_id", c.pad_id, "must be a token id (0 or more)");
    r.one_of("data.train_on", c.train_on, {"all", "last"});
    for (size_t i = 0; i < c.sources.size(); i++) {
        const std::string key = fmt::format("data.sources[{}]", i);
        r.one_of((key + ".kind").c_str(), c.sources[i].kind,
                 {"synthetic-chain", "shards", "text", "jsonl", "messages", "documents"});
        r.require(c.sources[i].kind == "synthetic-chain" || !c.sources[i].path.empty(), (key + ".path").c_str(), "\"\"",
                  "required for this kind of source");
        r.finite_positive((key + ".weight").c_str(), c.sources[i].weight);
    }
    r.one_of("optim.kind", c.optim.kind, {"muon", "adamw"});
    r.finite_positive("optim.lr", c.schedule.peak);
    r.finite_non_negative("optim.min_lr", c.schedule.min_lr);
    r.require(c.schedule.min_lr <= c.schedule.peak, "optim.min_lr", c.schedule.min_lr,
              fmt::format("must not exceed optim.lr ({})", c.schedule.peak).c_str());
    r.non_negative("optim.warmup", c.schedule.warmup);
    r.non_negative("optim.decay_start", c.schedule.decay_start);
    r.non_negative("optim.total", c.schedule.total);
    r.finite_non_negative("optim.weight_decay", c.optim.weight_decay);
    r.finite_non_negative("optim.clip_grad_norm", c.optim.clip_grad_norm);
    r.unit_interval("optim.beta1", c.optim.beta1);
    r.unit_interval("optim.beta2", c.optim.beta2);
    r.finite_positive("optim.eps", c.optim.eps);
    r.unit_interval("optim.muon_momentum", c.optim.muon_momentum);
    r.finite_positive("optim.muon_update_rms", c.optim.muon_update_rms);
    r.require(c.optim.ns_fast_steps >= 0 && c.optim.ns_fast_steps <= 100, "optim.ns_fast_steps", c.optim.ns_fast_steps,
              "must be in [0, 100]");
    r.require(c.optim.ns_stable_steps >= 0 && c.optim.ns_stable_steps <= 100, "optim.ns_stable_steps",
              c.optim.ns_stable_steps, "must be in [0, 100]");
    r.require(c.optim.ns_fast_steps + c.optim.ns_stable_steps > 0, "optim.ns_fast_steps", c.optim.ns_fast_steps,
              "Newton-Schulz needs at least one iteration (with optim.ns_stable_steps)");
    r.finite_non_negative("loss.mtp_weight", c.mtp_weight);
    r.finite_non_negative("loss.mtp_weight_after_decay", c.mtp_weight_after_decay);
    r.finite_non_negative("loss.balance_alpha", c.balance_alpha);
    r.finite_non_negative("loss.bias_update_speed", c.bias_update_speed);
    r.finite_non_negative("loss.indexer_weight", c.indexer_weight);
    r.non_negative("loss.indexer_dense_steps", c.indexer_dense_steps);
    r.non_negative("checkpoint.every", c.checkpoint_every);
    r.positive("checkpoint.keep_last", c.keep_last);
    r.positive("log.every", c.log_every);
    r.positive("guards.max_consecutive_skips", c.max_consecutive_skips);
    r.require(std::isfinite(c.spike_factor) && c.spike_factor > 1, "guards.spike_factor", c.spike_factor,
              "must be a finite number > 1");
    r.positive("dist.tp", c.tp);
    r.positive("dist.pp", c.pp);
    r.positive("dist.ep", c.ep);
    r.finite_positive("dist.timeout", c.dist_timeout);
    r.require(c.dist_timeout <= 7 * 24 * 3600.0, "dist.timeout", c.dist_timeout, "at most a week (604800 s)");
    r.one_of("dist.pp_schedule", c.pp_schedule, {"1f1b", "interleaved"});
    r.positive("dist.pp_virtual", c.pp_virtual);
    r.require(c.pp_schedule == "interleaved" || c.pp_virtual == 1, "dist.pp_virtual", c.pp_virtual,
              "needs dist.pp_schedule = \"interleaved\"");
}

}  // namespace

train_config load_train_config(const std::string& path, const std::vector<std::string>& overrides) {
    toml::table root;
    const std::string source = path.empty() ? "<defaults>" : path;
    if (!path.empty()) {
        try {
            root = toml::parse_file(path);
        } catch (const toml::parse_error& e) {
            throw error(
                fmt::format("{}:{}:{}: {}", path, e.source().begin.line, e.source().begin.column, e.description()));
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
    r.get("model", "qat", c.qat);
    r.get("model", "indexer_ties", c.indexer_ties);
    r.get("model", "precision", c.precision);
    r.get("data", "batch", c.batch);
    r.get("data", "seq", c.seq);
    r.get("data", "grad_accum", c.grad_accum);
    r.get("data", "pad_id", c.pad_id);
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
                TREX_CHECK(k == "kind" || k == "path" || k == "weight", "{}: unknown key 'data.sources[{}].{}'", source,
                           i, k);
            }
            TREX_CHECK(t["kind"].is_string(), "{}: key 'data.sources[{}].kind': expected a string", source, i);
            s.kind = t["kind"].as_string()->get();
            if (t["path"]) {
                TREX_CHECK(t["path"].is_string(), "{}: key 'data.sources[{}].path': expected a string", source, i);
                s.path = t["path"].as_string()->get();
            }
            if (t["weight"]) {
                TREX_CHECK(t["weight"].is_number(), "{}: key 'data.sources[{}].weight': expected a number", source, i);
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

    check_ranges(c, source);
    return c;
}

std::vector<std::pair<std::string, std::string>> config_entries(const train_config& c) {
    std::vector<std::pair<std::string, std::string>> e;
    auto add = [&e](const std::string& key, const auto& value) { e.emplace_back(key, fmt::format("{}", value)); };
    add("run.name", c.name);
    add("run.out_dir", c.out_dir);
    add("run.mode", c.mode);
    add("run.seed", c.seed);
    add("run.steps", c.steps);
    add("run.resume", c.resume);
    add("model.config", c.model_config);
    add("model.init_from", c.init_from);
    add("model.init_std", c.init_std);
    add("model.recompute", c.recompute);
    add("model.qat", c.qat);
    add("model.indexer_ties", c.indexer_ties);
    add("model.precision", c.precision);
    add("data.batch", c.batch);
    add("data.seq", c.seq);
    add("data.grad_accum", c.grad_accum);
    add("data.pad_id", c.pad_id);
    add("data.tokenizer", c.tokenizer);
    add("data.train_on", c.train_on);
    add("data.chat_thinking", c.chat_thinking);
    add("data.sources", c.sources.size());
    for (size_t i = 0; i < c.sources.size(); i++) {
        add(fmt::format("data.sources[{}].kind", i), c.sources[i].kind);
        add(fmt::format("data.sources[{}].path", i), c.sources[i].path);
        add(fmt::format("data.sources[{}].weight", i), c.sources[i].weight);
    }
    add("optim.kind", c.optim.kind);
    add("optim.lr", c.schedule.peak);
    add("optim.min_lr", c.schedule.min_lr);
    add("optim.warmup", c.schedule.warmup);
    add("optim.decay_start", c.schedule.decay_start);
    add("optim.total", c.schedule.total);
    add("optim.weight_decay", c.optim.weight_decay);
    add("optim.clip_grad_norm", c.optim.clip_grad_norm);
    add("optim.beta1", c.optim.beta1);
    add("optim.beta2", c.optim.beta2);
    add("optim.eps", c.optim.eps);
    add("optim.muon_momentum", c.optim.muon_momentum);
    add("optim.muon_nesterov", c.optim.muon_nesterov);
    add("optim.muon_update_rms", c.optim.muon_update_rms);
    add("optim.ns_fast_steps", c.optim.ns_fast_steps);
    add("optim.ns_stable_steps", c.optim.ns_stable_steps);
    add("loss.mtp_weight", c.mtp_weight);
    add("loss.mtp_weight_after_decay", c.mtp_weight_after_decay);
    add("loss.balance_alpha", c.balance_alpha);
    add("loss.bias_update_speed", c.bias_update_speed);
    add("loss.indexer_weight", c.indexer_weight);
    add("loss.indexer_dense_steps", c.indexer_dense_steps);
    add("checkpoint.every", c.checkpoint_every);
    add("checkpoint.keep_last", c.keep_last);
    add("log.every", c.log_every);
    add("log.report", c.report);
    add("guards.max_consecutive_skips", c.max_consecutive_skips);
    add("guards.spike_factor", c.spike_factor);
    add("dist.tp", c.tp);
    add("dist.pp", c.pp);
    add("dist.ep", c.ep);
    add("dist.timeout", c.dist_timeout);
    add("dist.overlap", c.dist_overlap);
    add("dist.pp_schedule", c.pp_schedule);
    add("dist.pp_virtual", c.pp_virtual);
    add("dist.pp_layers", fmt::format("{}", fmt::join(c.pp_layers, ",")));
    return e;
}

}  // namespace trex
