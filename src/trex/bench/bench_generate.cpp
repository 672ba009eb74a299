#include "trex/bench/bench_generate.hpp"

#include <unistd.h>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "trex/base/error.hpp"
#include "trex/bench/peer_process.hpp"
#include "trex/infer/generator.hpp"
#include "trex/io/safetensors.hpp"
#include "trex/kernels/cpu/peak.hpp"

namespace trex::bench {

namespace {

std::vector<std::vector<int32_t>> random_prompts(const model_config& cfg, const bench_generate_options& opt) {
    std::mt19937_64 rng(opt.seed * 7919 + 17);
    std::uniform_int_distribution<int32_t> tok(2, (int32_t)cfg.vocab_size - 1);
    std::vector<std::vector<int32_t>> p((size_t)opt.batch);
    for (auto& x : p) {
        x.resize((size_t)opt.prompt_len);
        for (int32_t& t : x) t = tok(rng);
    }
    return p;
}

// Greedy requests of the prompts that run to new_tokens (no stop id).
std::vector<infer::generation_request> greedy_requests(const std::vector<std::vector<int32_t>>& prompts,
                                                       int64_t new_tokens) {
    std::vector<infer::generation_request> q(prompts.size());
    for (size_t i = 0; i < q.size(); i++) {
        q[i].prompt = prompts[i];
        q[i].max_tokens = new_tokens;
    }
    return q;
}

infer::generator_options gen_options(const bench_generate_options& opt, int64_t batch) {
    infer::generator_options g;
    g.max_batch = batch;
    g.prefill_chunk = opt.prefill_chunk;
    g.max_context = opt.prompt_len + opt.new_tokens + 1;
    return g;
}

// Bytes a decoding step of B tokens reads (fp32): every weight of the main model except the routed experts, of
// which the distinct experts the B tokens select per MoE layer (K for one token; E·(1 − (1 − K/E)^B) expected under
// uniform routing), and B embedding rows.
double weight_bytes_per_step(const dsv4_model& model, int64_t B) {
    const model_config& cfg = model.config();
    const param_store& P = const_cast<dsv4_model&>(model).params();
    const double K = cfg.num_experts_per_tok, E = cfg.n_routed_experts;
    const double used = B == 1 ? K : E * (1.0 - std::pow(1.0 - K / E, (double)B));
    double w = 0;
    for (const tensor_spec& s : P.specs) {
        if (s.is_mtp) continue;
        double n = (double)s.numel();
        if (s.is_embedding) n = (double)B * cfg.hidden_size;
        if (s.expert >= 0) n *= used / E;
        w += n * 4;
    }
    return w;
}

// Bytes one decoded token reads at batch 1: weight_bytes_per_step(1) and the caches at context S (the window, every
// HCA entry, every indexer key and the selected CSA entries).
void bytes_per_token(bench_generate_result& r, const dsv4_model& model, int64_t S) {
    const model_config& cfg = model.config();
    const double w = weight_bytes_per_step(model, 1);
    double cache = 0;
    const double c = cfg.head_dim, cI = cfg.index_head_dim;
    for (int l = 0; l < cfg.n_layers(); l++) {
        const int m = cfg.ratio(l);
        cache += (double)std::min<int64_t>(S, cfg.sliding_window) * c;
        if (m == 4)
            cache += (double)(S / 4) * cI + (double)std::min<int64_t>(cfg.index_topk, S / 4) * c;
        else if (m > 0)
            cache += (double)(S / m) * c;
    }
    r.weight_bytes_per_token = w;
    r.cache_bytes_per_token = cache * 4;
}

// max over rows of max|a − b| / max|b|, rows of V
double max_row_error(const std::vector<float>& a, const std::vector<float>& b, int64_t V) {
    TREX_CHECK(a.size() == b.size(), "bench generate: {} decode logits against {} forward logits", a.size(), b.size());
    double worst = 0;
    for (size_t r = 0; r < a.size() / (size_t)V; r++) {
        double diff = 0, scale = 0;
        for (int64_t v = 0; v < V; v++) {
            diff = std::max(diff, (double)std::fabs(a[r * V + v] - b[r * V + v]));
            scale = std::max(scale, (double)std::fabs(b[r * V + v]));
        }
        worst = std::max(worst, scale > 0 ? diff / scale : diff);
    }
    return worst;
}

// The sequence's logits at every position twice: through the cache (the prompt in one chunk, then one token at a
// time) and by the training forward over the whole sequence.
double cache_parity(dsv4_model& model, const std::vector<int32_t>& seq, int64_t prompt_len) {
    const int64_t V = model.config().vocab_size, S = (int64_t)seq.size();
    sequence_cache cache = sequence_cache::for_model(model.config(), false);
    sequence_cache* seqs[] = {&cache};
    std::vector<float> decoded, part;
    const int64_t n0[] = {prompt_len};
    model.decode(seqs, std::span<const int32_t>(seq.data(), (size_t)prompt_len), n0, decoded, true);
    for (int64_t t = prompt_len; t < S; t++) {
        const int64_t one[] = {1};
        model.decode(seqs, std::span<const int32_t>(seq.data() + t, 1), one, part, true);
        decoded.insert(decoded.end(), part.begin(), part.end());
    }
    std::vector<int32_t> labels((size_t)S, -1), mtp((size_t)S, 0);
    batch_view b;
    b.B = 1;
    b.S = S;
    b.input_ids = seq.data();
    b.labels = labels.data();
    b.mtp_input_ids = mtp.data();
    step_options so;
    so.backward = false;
    so.keep_logits = true;
    model.step(b, so);
    return max_row_error(decoded, model.logits(), V);
}

std::string source_dir() {
    return TREX_SOURCE_DIR;
}

// HF transformers' generate on the same weights and prompt (batch 1, greedy, its cache).
void run_peer(bench_generate_result& r, dsv4_model& model, const std::vector<int32_t>& prompt,
              const bench_generate_options& opt) {
    const std::string python = opt.python.empty() ? source_dir() + "/.venv/bin/python" : opt.python;
    const std::string script =
        opt.peer_script.empty() ? source_dir() + "/tests/reference/peer_generate.py" : opt.peer_script;
    TREX_CHECK(std::filesystem::exists(python),
               "bench generate --peer: no Python at {} (run scripts/setup.sh --with-torch, or pass --python)", python);
    TREX_CHECK(std::filesystem::exists(script), "bench generate --peer: peer script {} not found", script);
    const std::string input = fmt::format("{}/trex-peer-generate-{}.safetensors",
                                          std::filesystem::temp_directory_path().string(), (long)getpid());
    struct guard {
        std::string path;
        ~guard() { std::filesystem::remove(path); }
    } g{input};
    safetensors_writer w;
    param_store& P = model.params();
    for (size_t i = 0; i < P.specs.size(); i++) {
        const tensor_spec& s = P.specs[i];
        if (s.role == tensor_role::hash_table)
            w.add_i32("w." + s.name, s.shape, P.tables.data() + P.offset[i]);
        else
            w.add_f32("w." + s.name, s.shape, P.w((int)i));
    }
    w.add_i32("in.prompt", {(int64_t)prompt.size()}, prompt.data());
    w.set_metadata("config", config_to_json(model.config()).dump());
    w.write(input);
    const std::string cmd = fmt::format(
        "env -u OPENBLAS_NUM_THREADS -u OPENBLAS_CORETYPE '{}' '{}' '{}' "
        "--new-tokens {} --threads {}",
        python, script, input, opt.new_tokens, opt.peer_threads);
    const peer_output p = run_peer_command(cmd, input + ".stderr", 600);
    TREX_CHECK(p.status == 0, "bench generate --peer: the HF peer failed (exit status {}): {}", p.status, p.err);
    try {
        const nlohmann::json j = nlohmann::json::parse(p.out);
        r.peer_decode_tokens_per_s = j.at("decode_tokens_per_s").get<double>();
        r.peer_prefill_tokens_per_s = j.at("prefill_tokens_per_s").get<double>();
        r.peer_version =
            j.at("transformers_version").get<std::string>() + " / torch " + j.at("torch_version").get<std::string>();
        r.peer_threads = j.at("threads").dump();
        const std::vector<int32_t> peer_tokens = j.at("tokens").get<std::vector<int32_t>>();
        int64_t same = 0;
        while (same < (int64_t)std::min(peer_tokens.size(), r.greedy_tokens.size()) &&
               peer_tokens[(size_t)same] == r.greedy_tokens[(size_t)same])
            same++;
        r.greedy_match = (double)same / (double)opt.new_tokens;
        r.greedy_first_mismatch = same < opt.new_tokens ? same : -1;
    } catch (const std::exception& e) {
        throw error(fmt::format("bench generate --peer: cannot parse the peer's output '{}': {}", p.out, e.what()));
    }
    TREX_CHECK(r.peer_decode_tokens_per_s > 0 && std::isfinite(r.peer_decode_tokens_per_s),
               "bench generate --peer: the peer reported decode_tokens_per_s = {}", r.peer_decode_tokens_per_s);
    r.has_peer = true;
    r.ratio_vs_peer = r.decode_tokens_per_s_batch1 / r.peer_decode_tokens_per_s;
}

double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Batch-1 greedy decoding with MTP drafts against plain, alternated (plain, speculative, plain, …) so that both see
// the same machine; medians of each.
void time_speculative(bench_generate_result& r, dsv4_model& model, const bench_generate_options& opt,
                      const std::vector<int32_t>& prompt) {
    constexpr int reps = 3;
    std::vector<double> plain_tps, spec_tps, plain_ms, spec_ms, draft_ms;
    r.has_speculative = true;
    r.speculative_identical = true;
    r.speculative_reps = reps;
    for (int k = 0; k < reps; k++) {
        infer::generator plain(model, gen_options(opt, 1));
        plain.run(greedy_requests({prompt}, opt.new_tokens));
        const infer::generation_stats& p = plain.stats();
        plain_tps.push_back((double)p.decode_tokens / p.decode_seconds);
        plain_ms.push_back(1e3 * p.decode_seconds / (double)p.decode_steps);
        infer::generator_options g = gen_options(opt, 1);
        g.speculative = true;
        infer::generator spec(model, g);
        const std::vector<int32_t> tokens = spec.run(greedy_requests({prompt}, opt.new_tokens))[0].tokens;
        const infer::generation_stats& s = spec.stats();
        r.speculative_identical = r.speculative_identical && tokens == r.greedy_tokens;
        r.mtp_acceptance = s.acceptance();
        spec_tps.push_back((double)s.decode_tokens / s.decode_seconds);
        spec_ms.push_back(1e3 * s.decode_seconds / (double)s.decode_steps);
        draft_ms.push_back(1e3 * s.draft_seconds / (double)s.decode_steps);
    }
    r.plain_decode_tokens_per_s = median_of(plain_tps);
    r.speculative_decode_tokens_per_s = median_of(spec_tps);
    r.speculative_speedup = r.speculative_decode_tokens_per_s / r.plain_decode_tokens_per_s;
    r.plain_step_ms = median_of(plain_ms);
    r.speculative_step_ms = median_of(spec_ms);
    r.mtp_draft_ms = median_of(draft_ms);
    r.speculative_ceiling = (1 + r.mtp_acceptance) * r.plain_step_ms / (r.plain_step_ms + r.mtp_draft_ms);
}

// The same greedy decoding as the measured runs, with the model's decode sections timed.
decode_profile profile_decode(dsv4_model& model, const bench_generate_options& opt,
                              const std::vector<std::vector<int32_t>>& prompts, int64_t batch) {
    step_profile prof;
    infer::generator gen(model, gen_options(opt, batch));
    const std::vector<std::vector<int32_t>> some(prompts.begin(), prompts.begin() + batch);
    auto requests = greedy_requests(some, opt.new_tokens);
    for (auto& q : requests) gen.submit(std::move(q));
    // prefill unprofiled: the steps until every sequence has its first token
    while (gen.stats().decode_steps == 0 && gen.step()) {
    }
    model.set_decode_profile(&prof);
    const infer::generation_stats before = gen.stats();
    while (gen.step()) {
    }
    model.set_decode_profile(nullptr);
    const infer::generation_stats& after = gen.stats();
    decode_profile p;
    p.batch = batch;
    p.steps = after.decode_steps - before.decode_steps;
    TREX_CHECK(p.steps > 0, "bench generate --profile: no decoding step to profile");
    p.step_ms = 1e3 * (after.decode_seconds - before.decode_seconds) / (double)p.steps;
    double sum = 0;
    for (const auto& [name, s] : prof.seconds) {
        p.section_ms[name] = 1e3 * s / (double)p.steps;
        sum += p.section_ms[name];
    }
    p.section_ms["other"] = std::max(0.0, p.step_ms - sum);
    return p;
}

}  // namespace

bench_generate_result run_bench_generate(dsv4_model& model, const std::string& model_name,
                                         const bench_generate_options& opt) {
    TREX_CHECK(opt.batch >= 1 && opt.prompt_len >= 1 && opt.new_tokens >= 2,
               "bench generate: --batch ≥ 1, --prompt-len ≥ 1 and --new-tokens ≥ 2 (got {}, {}, {})", opt.batch,
               opt.prompt_len, opt.new_tokens);
    bench_generate_result r;
    r.model_name = model_name;
    r.threads = omp_get_max_threads();
    r.batch = r.decode_batch = opt.batch;
    r.prompt_len = opt.prompt_len;
    r.new_tokens = opt.new_tokens;
    const std::vector<std::vector<int32_t>> prompts = random_prompts(model.config(), opt);
    {  // warm-up: the arenas, the workspace, the RoPE tables
        auto q = greedy_requests({prompts[0]}, 4);
        infer::generator(model, gen_options(opt, 1)).run(q);
    }
    // batch 1
    infer::generator one(model, gen_options(opt, 1));
    r.greedy_tokens = one.run(greedy_requests({prompts[0]}, opt.new_tokens))[0].tokens;
    r.decode_tokens_per_s_batch1 = (double)one.stats().decode_tokens / one.stats().decode_seconds;
    if (opt.speculative) time_speculative(r, model, opt, prompts[0]);
    // the batch
    infer::generator many(model, gen_options(opt, opt.batch));
    const auto outs = many.run(greedy_requests(prompts, opt.new_tokens));
    TREX_CHECK(outs[0].tokens == r.greedy_tokens, "bench generate: sequence 0 decoded differently in the batch of {}",
               opt.batch);
    r.prefill_tokens_per_s = (double)many.stats().prefill_tokens / many.stats().prefill_seconds;
    r.decode_tokens_per_s = (double)many.stats().decode_tokens / many.stats().decode_seconds;
    r.batch_speedup = r.decode_tokens_per_s / r.decode_tokens_per_s_batch1;
    // the bound
    bytes_per_token(r, model, opt.prompt_len + opt.new_tokens / 2);
    const bandwidth_measurement bw = measure_read_bandwidth();
    r.bandwidth_gbps = bw.gbps;
    r.llc_bytes = last_level_cache_bytes();
    r.bandwidth_bound_tokens_per_s = bw.gbps * 1e9 / (r.weight_bytes_per_token + r.cache_bytes_per_token);
    r.fraction_of_bound = r.decode_tokens_per_s_batch1 / r.bandwidth_bound_tokens_per_s;
    const double step_bytes = weight_bytes_per_step(model, opt.batch) + (double)opt.batch * r.cache_bytes_per_token;
    r.bandwidth_bound_tokens_per_s_batch = bw.gbps * 1e9 * (double)opt.batch / step_bytes;
    r.bound_batch_speedup = r.bandwidth_bound_tokens_per_s_batch / r.bandwidth_bound_tokens_per_s;
    // parity of the cache
    std::vector<int32_t> seq = prompts[0];
    seq.insert(seq.end(), r.greedy_tokens.begin(), r.greedy_tokens.end());
    r.cache_parity_max_rel = cache_parity(model, seq, opt.prompt_len);
    if (opt.peer) run_peer(r, model, prompts[0], opt);
    if (opt.profile) {
        r.profiles.push_back(profile_decode(model, opt, prompts, 1));
        if (opt.batch > 1) r.profiles.push_back(profile_decode(model, opt, prompts, opt.batch));
    }
    return r;
}

nlohmann::json bench_generate_json(const bench_generate_result& r) {
    nlohmann::ordered_json j;
    j["model"] = r.model_name;
    j["threads"] = r.threads;
    j["prompt_len"] = r.prompt_len;
    j["new_tokens"] = r.new_tokens;
    j["prefill_tokens_per_s"] = r.prefill_tokens_per_s;
    j["decode_tokens_per_s"] = r.decode_tokens_per_s;
    j["decode_batch"] = r.decode_batch;
    j["decode_tokens_per_s_batch1"] = r.decode_tokens_per_s_batch1;
    j["batch_speedup"] = r.batch_speedup;
    j["weight_bytes_per_token"] = r.weight_bytes_per_token;
    j["cache_bytes_per_token"] = r.cache_bytes_per_token;
    j["bandwidth_gbps"] = r.bandwidth_gbps;
    j["last_level_cache_bytes"] = r.llc_bytes;
    j["bandwidth_bound_tokens_per_s"] = r.bandwidth_bound_tokens_per_s;
    j["fraction_of_bound"] = r.fraction_of_bound;
    j["bandwidth_bound_tokens_per_s_batch"] = r.bandwidth_bound_tokens_per_s_batch;
    j["bound_batch_speedup"] = r.bound_batch_speedup;
    j["cache_parity_max_rel"] = r.cache_parity_max_rel;
    if (r.has_speculative) {
        j["speculative_decode_tokens_per_s"] = r.speculative_decode_tokens_per_s;
        j["speculative_speedup"] = r.speculative_speedup;
        j["mtp_acceptance"] = r.mtp_acceptance;
        j["speculative_identical"] = r.speculative_identical;
        j["speculative_reps"] = r.speculative_reps;
        j["plain_decode_tokens_per_s"] = r.plain_decode_tokens_per_s;
        j["plain_step_ms"] = r.plain_step_ms;
        j["speculative_step_ms"] = r.speculative_step_ms;
        j["mtp_draft_ms"] = r.mtp_draft_ms;
        j["speculative_ceiling"] = r.speculative_ceiling;
    }
    if (r.has_peer) {
        j["peer_decode_tokens_per_s"] = r.peer_decode_tokens_per_s;
        j["peer_prefill_tokens_per_s"] = r.peer_prefill_tokens_per_s;
        j["ratio_vs_peer"] = r.ratio_vs_peer;
        j["greedy_match"] = r.greedy_match;
        j["greedy_first_mismatch"] = r.greedy_first_mismatch;
        j["peer_version"] = r.peer_version;
        j["peer_threads"] = r.peer_threads;
    }
    for (const decode_profile& p : r.profiles)
        j["decode_profile"].push_back(
            {{"batch", p.batch}, {"steps", p.steps}, {"step_ms", p.step_ms}, {"section_ms", p.section_ms}});
    return j;
}

namespace {

// "section  ms/step (share) …" for each profiled batch, sections by their largest time
std::string format_decode_profiles(const std::vector<decode_profile>& ps) {
    std::vector<std::pair<double, std::string>> order;
    for (const auto& [name, ms] : ps.back().section_ms) order.emplace_back(-ms, name);
    std::sort(order.begin(), order.end());
    std::string s = "  decode profile   ms per step by section (share of the step)";
    for (const decode_profile& p : ps) s += fmt::format(" | batch {} ({} steps)", p.batch, p.steps);
    s += "\n";
    for (const auto& [neg, name] : order) {
        s += fmt::format("    {:<20}", name);
        for (const decode_profile& p : ps) {
            const auto it = p.section_ms.find(name);
            const double ms = it == p.section_ms.end() ? 0.0 : it->second;
            s += fmt::format(" {:9.3f} ({:4.1f}%)", ms, 100.0 * ms / p.step_ms);
        }
        s += "\n";
    }
    s += fmt::format("    {:<20}", "step");
    for (const decode_profile& p : ps) s += fmt::format(" {:9.3f}        ", p.step_ms);
    s += "\n";
    return s;
}

}  // namespace

std::string format_bench_generate(const bench_generate_result& r) {
    const double bytes = r.weight_bytes_per_token + r.cache_bytes_per_token;
    std::string s = fmt::format("bench generate: {} ({} threads), prompts of {} tokens, {} new tokens each\n",
                                r.model_name, r.threads, r.prompt_len, r.new_tokens);
    s += fmt::format("  prefill          {:10.1f} tokens/s ({} prompts, chunked)\n", r.prefill_tokens_per_s, r.batch);
    s += fmt::format("  decode batch 1   {:10.1f} tokens/s\n", r.decode_tokens_per_s_batch1);
    s += fmt::format("  decode batch {:<3} {:10.1f} tokens/s aggregate ({:.2f}x batch 1)\n", r.decode_batch,
                     r.decode_tokens_per_s, r.batch_speedup);
    s += fmt::format(
        "  bound            {:10.1f} tokens/s at batch 1: {:.2f} MB weights + {:.2f} MB cache per token at "
        "{:.1f} GB/s read bandwidth; measured {:.2f} of it{}\n",
        r.bandwidth_bound_tokens_per_s, r.weight_bytes_per_token / 1e6, r.cache_bytes_per_token / 1e6, r.bandwidth_gbps,
        r.fraction_of_bound,
        bytes < r.llc_bytes ? fmt::format(" (the {:.1f} MB per token fit the {:.1f} MB last-level cache: DRAM "
                                          "bandwidth does not bound this model)",
                                          bytes / 1e6, r.llc_bytes / 1e6)
                            : "");
    s += fmt::format(
        "  bound batch {:<3}  {:10.1f} tokens/s: {:.2f}x the batch-1 bound (expected distinct experts per "
        "MoE layer under uniform routing)\n",
        r.decode_batch, r.bandwidth_bound_tokens_per_s_batch, r.bound_batch_speedup);
    if (r.has_speculative)
        s += fmt::format(
            "  speculative      {:10.1f} tokens/s at batch 1 with MTP drafts ({:.2f}x plain at {:.1f}, medians of {} "
            "alternated runs), acceptance {:.3f}, output {} the plain greedy one\n"
            "  step             plain {:.3f} ms, speculative {:.3f} ms of which the MTP draft {:.3f} ms: {:.2f}x at "
            "most "
            "were verifying two tokens as cheap as one\n",
            r.speculative_decode_tokens_per_s, r.speculative_speedup, r.plain_decode_tokens_per_s, r.speculative_reps,
            r.mtp_acceptance, r.speculative_identical ? "identical to" : "DIFFERENT from", r.plain_step_ms,
            r.speculative_step_ms, r.mtp_draft_ms, r.speculative_ceiling);
    s += fmt::format("  cache parity     decode logits vs the full forward: max rel {:.2e}\n", r.cache_parity_max_rel);
    if (r.has_peer)
        s += fmt::format(
            "  peer             HF transformers generate ({}, threads {}): decode {:.1f} tokens/s, prefill {:.1f} "
            "tokens/s\n  ratio            {:.2f}x the peer at batch 1; greedy tokens identical for {:.0f}% of {}{}\n",
            r.peer_version, r.peer_threads, r.peer_decode_tokens_per_s, r.peer_prefill_tokens_per_s, r.ratio_vs_peer,
            100 * r.greedy_match, r.new_tokens,
            r.greedy_first_mismatch >= 0 ? fmt::format(" (first difference at token {})", r.greedy_first_mismatch)
                                         : "");
    if (!r.profiles.empty()) s += format_decode_profiles(r.profiles);
    return s;
}

}  // namespace trex::bench
