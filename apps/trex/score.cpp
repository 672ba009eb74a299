// trex score: log-probabilities, mean NLL and perplexity of token or text files through the engine.
//
//   trex score --checkpoint DIR [--config F] [--qat none|release] [--indexer-ties stable|torch]
//              (--tokens F | --text F... --tokenizer T [--no-bos])
//              [--chunk N] [--per-token] [--dump-logits F.safetensors] [--json] [--allow-nonfinite]
//
// DIR: a `trex train` checkpoint or run directory, or an HF release-layout directory (io/model_loader.hpp). --tokens:
// one sequence per line, ids separated by spaces or commas (eval/score.hpp); --text: each file is one sequence,
// encoded with the tokenizer and preceded by the config's BOS id unless --no-bos. Sequences are scored in forwards of
// at most --chunk tokens (no context across chunks). --dump-logits writes every forward's [S, V] fp32 logits.
//
// --json prints one object: checkpoint, chunk, tokens, mean_nll, perplexity, sequences [{tokens, chunks, mean_nll,
// perplexity, and with --per-token: predicted (ids), logprobs}].
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "trex/base/error.hpp"
#include "trex/eval/score.hpp"
#include "trex/io/model_loader.hpp"
#include "trex/tokenizer/tokenizer.hpp"

namespace trex::cli {

namespace {

struct score_cli_options {
    std::string checkpoint, config, tokens, tokenizer, dump_logits, qat, indexer_ties;
    std::vector<std::string> texts;
    int64_t chunk = 4096;
    bool no_bos = false, per_token = false, json = false, allow_nonfinite = false;
};

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    TREX_CHECK(in.good(), "{}: cannot open the text file", path);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// The sequences to score: the token file, or the text files encoded (tokenizer first: a bad one fails before the
// weights are read).
std::vector<std::vector<int32_t>> read_sequences(const score_cli_options& o, int32_t bos) {
    TREX_CHECK(o.tokens.empty() != o.texts.empty(), "score: give either --tokens F or --text F... (one of them)");
    if (!o.tokens.empty()) return eval::read_token_file(o.tokens);
    TREX_CHECK(!o.tokenizer.empty(), "score: --text needs --tokenizer tokenizer.json");
    const tok::tokenizer tk = tok::tokenizer::from_file(o.tokenizer);
    std::vector<std::vector<int32_t>> out;
    for (const std::string& path : o.texts) {
        std::vector<int32_t> ids;
        if (!o.no_bos) ids.push_back(bos);
        const std::vector<int32_t> body = tk.encode(read_text(path));
        ids.insert(ids.end(), body.begin(), body.end());
        TREX_CHECK(ids.size() >= 2, "{}: encodes to {} token(s); at least 2 are needed", path, ids.size());
        out.push_back(std::move(ids));
    }
    return out;
}

void print_result(const score_cli_options& o, const std::string& dir, const eval::score_result& r) {
    if (o.json) {
        nlohmann::ordered_json j;
        j["checkpoint"] = dir;
        j["chunk"] = o.chunk;
        j["tokens"] = r.tokens;
        j["mean_nll"] = r.mean_nll();
        j["perplexity"] = r.perplexity();
        nlohmann::ordered_json seqs = nlohmann::ordered_json::array();
        for (const eval::sequence_score& s : r.sequences) {
            const double mean = s.nll / (double)s.tokens;
            nlohmann::ordered_json x = {
                {"tokens", s.tokens}, {"chunks", s.chunks}, {"mean_nll", mean}, {"perplexity", std::exp(mean)}};
            if (o.per_token) x["predicted"] = s.predicted, x["logprobs"] = s.logprobs;
            seqs.push_back(x);
        }
        j["sequences"] = seqs;
        std::printf("%s\n", j.dump(2).c_str());
        return;
    }
    for (size_t k = 0; k < r.sequences.size(); k++) {
        const eval::sequence_score& s = r.sequences[k];
        const double mean = s.nll / (double)s.tokens;
        std::printf("sequence %zu: %lld tokens predicted in %lld forward(s), mean NLL %.6f nats, perplexity %.4f\n", k,
                    (long long)s.tokens, (long long)s.chunks, mean, std::exp(mean));
        for (size_t t = 0; t < s.logprobs.size(); t++)
            std::printf("  %zu\ttoken %d\tlogprob %.6f\n", t + 1, s.predicted[t], s.logprobs[t]);
    }
    std::printf("total: %lld tokens, mean NLL %.6f nats, perplexity %.4f (%s)\n", (long long)r.tokens, r.mean_nll(),
                r.perplexity(), dir.c_str());
}

void run_score(const score_cli_options& o) {
    TREX_CHECK(o.chunk >= 2, "--chunk must be at least 2 (got {})", o.chunk);
    TREX_CHECK(!o.checkpoint.empty(), "score: --checkpoint DIR is required");
    // the inputs first: a bad token file or tokenizer fails before the weights are read (BOS from the config)
    model_load_options lo;
    lo.config = o.config;
    lo.allow_nonfinite = o.allow_nonfinite;
    lo.qat = o.qat;
    lo.indexer_ties = o.indexer_ties;
    std::vector<std::vector<int32_t>> seqs;
    if (!o.tokens.empty()) seqs = read_sequences(o, 0);
    loaded_model m = load_model_for_inference(o.checkpoint, lo);
    if (seqs.empty()) seqs = read_sequences(o, m.model->config().bos_token_id);
    eval::score_options so;
    so.chunk = o.chunk;
    so.per_token = o.per_token;
    so.dump_logits = o.dump_logits;
    print_result(o, m.dir, eval::score_sequences(*m.model, seqs, so));
}

}  // namespace

void register_score(CLI::App& app) {
    auto o = std::make_shared<score_cli_options>();
    CLI::App* cmd = app.add_subcommand("score", "log-probabilities, mean NLL and perplexity of tokens or text");
    cmd->add_option("--checkpoint", o->checkpoint, "a trex checkpoint or run directory, or an HF release-layout one")
        ->required();
    cmd->add_option("--config", o->config, "config.json to use instead of the checkpoint's");
    add_numerics_options(cmd, o->qat, o->indexer_ties);
    cmd->add_option("--tokens", o->tokens, "token file: one sequence per line, ids separated by spaces or commas");
    cmd->add_option("--text", o->texts, "text file(s), one sequence each (needs --tokenizer)");
    cmd->add_option("--tokenizer", o->tokenizer, "tokenizer.json for --text");
    cmd->add_flag("--no-bos", o->no_bos, "do not put the config's BOS id before each text");
    cmd->add_option("--chunk", o->chunk, "tokens per forward (no context across chunks)")->capture_default_str();
    cmd->add_flag("--per-token", o->per_token, "print every predicted token's log-probability");
    cmd->add_option("--dump-logits", o->dump_logits, "write every forward's logits [S, V] to this safetensors file");
    cmd->add_flag("--json", o->json, "print one JSON object");
    cmd->add_flag("--allow-nonfinite", o->allow_nonfinite, "HF layout: accept NaN/Inf weights");
    cmd->callback([o]() { run_score(*o); });
}

}  // namespace trex::cli
