#include "trex/eval/score.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "trex/base/error.hpp"
#include "trex/io/safetensors.hpp"

namespace trex::eval {

namespace {

// log_softmax(row)[label] in double.
double log_prob(const float* row, int64_t V, int32_t label) {
    double mx = row[0];
    for (int64_t v = 1; v < V; v++) mx = std::max(mx, (double)row[v]);
    double sum = 0;
    for (int64_t v = 0; v < V; v++) sum += std::exp((double)row[v] - mx);
    return (double)row[label] - mx - std::log(sum);
}

void check_sequence(const std::vector<int32_t>& ids, size_t k, int64_t V) {
    TREX_CHECK(ids.size() >= 2, "score: sequence {} has {} token(s); at least 2 are needed (one to predict)", k,
               ids.size());
    for (size_t t = 0; t < ids.size(); t++)
        TREX_CHECK(ids[t] >= 0 && ids[t] < V, "score: sequence {}, token {}: id {} is outside the vocabulary [0, {})",
                   k, t, ids[t], V);
}

// Scores tokens [a, b) of ids as one forward; adds to s; the logits go to the dump when one is asked for.
void score_chunk(dsv4_model& model, const std::vector<int32_t>& ids, int64_t a, int64_t b, sequence_score& s,
                 const score_options& opt, safetensors_writer* dump, const std::string& name) {
    const int64_t S = b - a, V = model.config().vocab_size, n = (int64_t)ids.size();
    std::vector<int32_t> labels((size_t)S, -1);
    for (int64_t t = 0; t < S; t++)
        if (a + t + 1 < n) labels[(size_t)t] = ids[(size_t)(a + t + 1)];
    batch_view batch;
    batch.B = 1;
    batch.S = S;
    batch.input_ids = ids.data() + a;
    batch.labels = labels.data();
    step_options so;
    so.backward = false;
    so.keep_logits = true;
    so.lambda_mtp = 0.0;
    model.step(batch, so);
    const float* logits = model.logits().data();
    for (int64_t t = 0; t < S; t++) {
        if (labels[(size_t)t] < 0) continue;
        const double lp = log_prob(logits + t * V, V, labels[(size_t)t]);
        s.nll -= lp;
        s.tokens++;
        if (opt.per_token) {
            s.logprobs.push_back(lp);
            s.predicted.push_back(labels[(size_t)t]);
        }
    }
    s.chunks++;
    if (dump) {
        dump->add_f32("logits." + name, {S, V}, logits);
        dump->add_i32("input_ids." + name, {S}, ids.data() + a);
    }
}

}  // namespace

double score_result::perplexity() const {
    return std::exp(mean_nll());
}

score_result score_sequences(dsv4_model& model, const std::vector<std::vector<int32_t>>& sequences,
                             const score_options& opt) {
    TREX_CHECK(opt.chunk >= 2, "score: --chunk must be at least 2 tokens (got {})", opt.chunk);
    TREX_CHECK(!sequences.empty(), "score: no sequences to score");
    const int64_t V = model.config().vocab_size;
    for (size_t k = 0; k < sequences.size(); k++) check_sequence(sequences[k], k, V);
    safetensors_writer dump;
    score_result r;
    for (size_t k = 0; k < sequences.size(); k++) {
        const std::vector<int32_t>& ids = sequences[k];
        sequence_score s;
        const int64_t n = (int64_t)ids.size();
        for (int64_t a = 0, c = 0; a + 1 < n; a += opt.chunk, c++)
            score_chunk(model, ids, a, std::min(n, a + opt.chunk), s, opt, opt.dump_logits.empty() ? nullptr : &dump,
                        fmt::format("{}.{}", k, c));
        r.tokens += s.tokens;
        r.nll += s.nll;
        r.sequences.push_back(std::move(s));
    }
    if (!opt.dump_logits.empty()) {
        dump.set_metadata("format", "trex score: logits.<sequence>.<chunk> [S, V] fp32, input_ids.<sequence>.<chunk>");
        dump.set_metadata("chunk", std::to_string(opt.chunk));
        dump.write(opt.dump_logits);
    }
    return r;
}

std::vector<int32_t> parse_token_line(const std::string& line, const std::string& where) {
    std::vector<int32_t> ids;
    std::string s = line;
    for (char& ch : s)
        if (ch == ',' || ch == '\t' || ch == '\r') ch = ' ';
    const size_t first = s.find_first_not_of(' '), last = s.find_last_not_of(' ');
    if (first == std::string::npos) return ids;
    if (s[first] == '[') {
        TREX_CHECK(s[last] == ']', "{}: a '[' without its ']'", where);
        s = s.substr(first + 1, last - first - 1);
    }
    const char* p = s.c_str();
    while (true) {
        while (*p == ' ') p++;
        if (!*p) break;
        char* end = nullptr;
        errno = 0;
        const long long v = std::strtoll(p, &end, 10);
        TREX_CHECK(end != p && (*end == ' ' || *end == 0), "{}: '{}' is not a token id", where,
                   std::string(p, std::min<size_t>(std::strcspn(p, " "), 20)));
        TREX_CHECK(errno == 0 && v >= 0 && v <= INT32_MAX, "{}: token id {} is out of range", where,
                   std::string(p, (size_t)(end - p)));
        ids.push_back((int32_t)v);
        p = end;
    }
    return ids;
}

std::vector<std::vector<int32_t>> read_token_file(const std::string& path) {
    std::ifstream in(path);
    TREX_CHECK(in.good(), "{}: cannot open the token file", path);
    std::vector<std::vector<int32_t>> out;
    std::string line;
    for (int64_t no = 1; std::getline(in, line); no++) {
        if (line.find_first_not_of(" \t\r,") == std::string::npos) continue;
        out.push_back(parse_token_line(line, fmt::format("{}:{}", path, no)));
    }
    TREX_CHECK(!out.empty(), "{}: no token ids (one sequence per line, ids separated by spaces or commas)", path);
    return out;
}

}  // namespace trex::eval
