#include "trex/train/trainer.hpp"

#include <omp.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <xxhash.h>
#include <nlohmann/json.hpp>

#include "trex/base/error.hpp"
#include "trex/base/files.hpp"
#include "trex/base/progress.hpp"
#include "trex/base/resources.hpp"
#include "trex/base/timer.hpp"
#include "trex/data/packer.hpp"
#include "trex/data/sources.hpp"
#include "trex/data/synthetic.hpp"
#include "trex/data/tokenize.hpp"
#include "trex/io/checkpoint.hpp"
#include "trex/io/hf_checkpoint.hpp"
#include "trex/kernels/cpu/peak.hpp"
#include "trex/model/counts.hpp"
#include "trex/model/embedded_config.hpp"
#include "trex/model/model.hpp"
#include "trex/parallel/context.hpp"
#include "trex/parallel/expert_parallel.hpp"
#include "trex/parallel/pipeline.hpp"
#include "trex/parallel/tensor_parallel.hpp"
#include "trex/train/pipeline_step.hpp"
#include "trex/train/report.hpp"
#include "trex/train/step_reducer.hpp"

namespace fs = std::filesystem;

namespace trex {

namespace {

model_config resolve_model_config(const std::string& spec, const std::string& init_from) {
    if (spec.empty() && !init_from.empty() && fs::exists(fs::path(init_from) / "config.json"))
        return load_config((fs::path(init_from) / "config.json").string());
    if (spec.empty() || spec == "embedded:v4-tiny")
        return config_from_json(nlohmann::json::parse(embedded_tiny_config_json()), "<embedded v4-tiny>");
    return load_config(spec);
}

std::unique_ptr<document_source> make_one_source(const data_source_config& s, const train_config& cfg,
                                                 const model_config& mc, uint64_t id) {
    if (s.kind == "synthetic-chain") return std::make_unique<synthetic_chain_source>(mc.vocab_size, cfg.seed + id);
    if (s.kind == "shards") {
        TREX_CHECK(!s.path.empty(), "data: a 'shards' source needs a path (a .tshard file or a directory of them)");
        return std::make_unique<shard_source>(std::vector<std::string>{s.path}, cfg.seed, id, (uint32_t)mc.vocab_size);
    }
    // text / jsonl / messages / documents: tokenized once into the run directory, then read as shards
    tokenize_options t;
    t.inputs = {s.path};
    t.format = s.kind == "documents" ? "auto" : s.kind;
    t.tokenizer = cfg.tokenizer;
    t.out_dir = (fs::path(cfg.out_dir) / "data" / fmt::format("source-{}", id)).string();
    t.max_vocab = (uint32_t)mc.vocab_size;
    t.chat.train_last_only = cfg.train_on == "last";
    t.chat.thinking = cfg.chat_thinking;
    t.force = true;
    t.show_progress = true;
    const std::string fp = tokenize_fingerprint(t);
    bool fresh = false;
    try {
        const std::string manifest = (fs::path(t.out_dir) / "manifest.json").string();
        fresh = fs::exists(manifest) && nlohmann::json::parse(read_file(manifest)).value("fingerprint", "") == fp;
    } catch (const std::exception&) {
        fresh = false;  // unreadable manifest: tokenize again
    }
    if (!fresh) {
        const tokenize_summary ts = tokenize_to_shards(t);
        std::fprintf(stderr, "data: source %llu (%s %s): %lld documents, %lld tokens (%lld trained on) -> %s\n",
                     (unsigned long long)id, s.kind.c_str(), s.path.c_str(), (long long)ts.documents,
                     (long long)ts.tokens, (long long)ts.target_tokens, t.out_dir.c_str());
    }
    return std::make_unique<shard_source>(std::vector<std::string>{t.out_dir}, cfg.seed, id, (uint32_t)mc.vocab_size);
}

std::unique_ptr<document_source> make_source(const train_config& cfg, const model_config& mc) {
    if (cfg.sources.size() == 1) return make_one_source(cfg.sources[0], cfg, mc, 0);
    std::vector<std::unique_ptr<document_source>> srcs;
    std::vector<double> weights;
    for (size_t i = 0; i < cfg.sources.size(); i++) {
        srcs.push_back(make_one_source(cfg.sources[i], cfg, mc, i));
        weights.push_back(cfg.sources[i].weight);
    }
    return std::make_unique<mixture_source>(std::move(srcs), weights, cfg.seed);
}

// Keeps the lines of metrics.jsonl with "step" ≤ last_step (a resumed run rewrites what came after its checkpoint).
void truncate_metrics(const std::string& path, int64_t last_step) {
    if (!fs::exists(path)) return;
    std::istringstream in(read_file(path));
    std::string line, kept;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        try {
            if (nlohmann::json::parse(line).value("step", (int64_t)0) <= last_step) kept += line + "\n";
        } catch (const std::exception&) {
            // a torn last line from a killed process or a full disk: dropped (and whatever follows it)
            fmt::print(stderr, "resume: {}: dropped an unreadable line (an interrupted append): {:.60}\n", path, line);
            break;
        }
    }
    write_file_atomic(path, kept);
}

bool finite(double x) {
    return std::isfinite(x);
}

// Every rank must run the same resolved config and data plan: each entry is hashed, the hashes gathered, and the first
// entry in which some rank differs from rank 0 named. Every rank reaches the same verdict, so all stop together.
void check_same_on_every_rank(parallel::communicator& world, const std::vector<std::pair<std::string, std::string>>& e,
                              const char* what) {
    if (world.size() == 1) return;
    int64_t n[2] = {(int64_t)e.size(), -(int64_t)e.size()};
    world.all_reduce(n, 2, parallel::dtype::i64, parallel::reduce_op::max);
    const int64_t width = n[0];  // entries differ in number when the data sources do: pad with zeros
    std::vector<int64_t> mine(width, 0), all(width * world.size());
    for (size_t i = 0; i < e.size(); i++) {
        const std::string kv = e[i].first + '\0' + e[i].second;
        mine[i] = (int64_t)XXH64(kv.data(), kv.size(), 0);
    }
    world.all_gather(mine.data(), all.data(), std::vector<int64_t>(world.size(), width), parallel::dtype::i64);
    for (int64_t i = 0; i < width; i++)
        for (int r = 1; r < world.size(); r++) {
            if (all[r * width + i] == all[i]) continue;
            const int me = world.rank();
            const std::string key = i < (int64_t)e.size() ? e[i].first : "(an entry rank 0 does not have)";
            const std::string mine_value = i < (int64_t)e.size() ? e[i].second : "(none)";
            throw error(
                fmt::format("dist: the ranks' {} differ: rank {} differs from rank 0 at '{}' (here, on rank "
                            "{}: '{}'); every rank must start with the same run config and data",
                            what, r, key, me, mine_value));
        }
}

// Logs and removes what writers killed in an earlier run left in the run directory (checkpoints and tokenized
// sources being written).
void remove_stale_temps(const std::string& out_dir) {
    for (const char* sub : {"checkpoints", "data"})
        remove_stale_temp_entries((fs::path(out_dir) / sub).string(), "train");
}

}  // namespace

train_summary run_training(const train_config& cfg) {
    std::unique_ptr<parallel::communicator> world = parallel::make_world_communicator();
    return run_training(cfg, *world);
}

train_summary run_training(const train_config& cfg, parallel::communicator& world) {
    train_summary sum;
    world.timeout_seconds = cfg.dist_timeout;
    check_same_on_every_rank(world, config_entries(cfg), "run configs");
    const bool root = world.rank() == 0;
    const model_config mc = resolve_model_config(cfg.model_config, cfg.init_from);
    parallel::dist_context dc(world, {cfg.tp, cfg.pp, cfg.ep}, mc);
    // pipeline parallelism: this rank's model chunks and the schedule (docs/distributed.md §9)
    const bool pipelined = dc.mesh.pp > 1;
    TREX_CHECK(pipelined || (cfg.pp_virtual == 1 && cfg.pp_layers.empty()),
               "dist.pp_virtual and dist.pp_layers need --pp above 1 (got --pp {})", dc.mesh.pp);
    parallel::pipeline_layout pl;
    if (pipelined) {
        pl = parallel::make_pipeline_layout(mc, parallel::parse_pp_schedule(cfg.pp_schedule), dc.mesh.pp,
                                            cfg.pp_virtual, dc.mesh.pp_rank, cfg.pp_layers);
        TREX_CHECK(pl.kind != parallel::pp_schedule_kind::interleaved || cfg.grad_accum % dc.mesh.pp == 0,
                   "--pp {} with dist.pp_schedule = \"interleaved\" needs data.grad_accum divisible by {}", dc.mesh.pp,
                   dc.mesh.pp);
    }
    const int dp = dc.mesh.dp, dp_rank = dc.mesh.dp_rank;
    // the ranks that split the global batch (under TP the tp ranks of a DP index share its micro-batches)
    parallel::communicator& dpc = dc.mesh.tp > 1 ? *dc.dp_comm : world;
    // The model first: a model that cannot fit is an error from param_store (check_fits_in_memory) before the run
    // directory exists, so nothing is left behind.
    dsv4_model model(mc);
    if (root) {
        std::error_code ec;
        fs::create_directories(cfg.out_dir, ec);
        TREX_CHECK(!ec, "{}: cannot create the run directory: {}", cfg.out_dir, ec.message());
        write_file_atomic((fs::path(cfg.out_dir) / "config.json").string(), config_to_json(mc).dump(2));
        remove_stale_temps(cfg.out_dir);
    }
    param_store& P = model.params();
    std::unique_ptr<parallel::expert_parallel> ep;
    if (dc.mesh.ep > 1) {
        ep = std::make_unique<parallel::expert_parallel>(*dc.ep_comm, mc, cfg.dist_overlap);
        model.set_expert_dispatcher(ep.get());
    }
    std::unique_ptr<parallel::tp_group> tp;
    if (dc.mesh.tp > 1) {
        tp = std::make_unique<parallel::tp_group>(*dc.tp_comm);
        model.set_tensor_parallel(tp.get());
    }
    std::function<bool(const tensor_spec&)> held;
    if (pipelined) held = [&pl](const tensor_spec& s) { return pl.holds(s); };
    parallel::zero_optimizer opt(P, cfg.optim, world, dc.replica_groups(P, held));
    // rank 0 first: a text / JSONL source is tokenized into the run directory once; the others then find it fresh
    std::unique_ptr<document_source> source;
    if (root) source = make_source(cfg, mc);
    // tokenizing may take hours: the others wait as long as rank 0 keeps writing into the run's data directory
    const std::string data_dir = (fs::path(cfg.out_dir) / "data").string();
    world.barrier_async()->wait_while_progressing([&data_dir] { return tree_signature(data_dir); });
    if (!root) source = make_source(cfg, mc);
    packer data(std::move(source), cfg.mode, cfg.pad_id);
    check_same_on_every_rank(world, {{"data plan", data.source().describe()}}, "data plans");
    if (world.size() > 1) {
        if (root) fmt::print(stderr, "{}", dc.mesh.describe(mc));
        if (root && pipelined) fmt::print(stderr, "{}", pl.describe((int)cfg.grad_accum));
        world.barrier();
        fmt::print(stderr, "dist: rank {} pid {}: {} tensors, {} optimizer floats owned\n", world.rank(),
                   (long)getpid(), opt.owned_tensors(), opt.owned_floats());
        if (root) fmt::print(stderr, "{}", opt.describe_plan());
    }
    // full-size optimizer state for checkpoints (rank 0 writes; every rank reads)
    auto full_state = [&](std::vector<float>& m, std::vector<float>& v) {
        m.assign(P.n_floats, 0.0f);
        v.assign(P.n_floats, 0.0f);
        return optim_state_ref{cfg.optim.kind, m.data(), v.data()};
    };

    // start: resume > init_from > fresh (every rank reads the same files)
    checkpoint_state resumed;
    bool have_resume = false;
    if (!cfg.resume.empty()) {
        std::string dir = cfg.resume;
        if (cfg.resume == "auto") {
            std::vector<std::string> skipped;
            dir = find_latest_checkpoint(cfg.out_dir, &skipped);
            if (root) {
                for (const auto& s : skipped) fmt::print(stderr, "resume: {}\n", s);
                if (dir.empty())
                    fmt::print(stderr, "resume: no valid checkpoint under {}, starting fresh\n", cfg.out_dir);
            }
        }
        if (!dir.empty()) {
            std::vector<float> m, v;
            const optim_state_ref ref = full_state(m, v);
            resumed = load_checkpoint_state(dir, P, &ref);
            opt.load_full(m.data(), v.data());
            opt.set_adam_steps(resumed.adam_steps);
            data.restore(resumed.data);
            have_resume = true;
            if (root) fmt::print(stderr, "resume: {} (step {})\n", dir, resumed.step);
        }
        int64_t steps[2] = {have_resume ? resumed.step : -1, -(have_resume ? resumed.step : -1)};
        world.all_reduce(steps, 2, parallel::dtype::i64, parallel::reduce_op::max);
        TREX_CHECK(steps[0] == -steps[1], "resume: the ranks found different checkpoints (steps {} and {})", steps[0],
                   -steps[1]);
    }
    if (!have_resume) {
        if (!cfg.init_from.empty()) {
            // ours (a manifest.json) or the official HF release layout (config.json + safetensors shards)
            if (fs::exists(fs::path(cfg.init_from) / "manifest.json")) {
                load_checkpoint_state(cfg.init_from, P, nullptr);
            } else {
                const hf_io_report rep = load_hf_checkpoint(P, cfg.init_from);
                if (root)
                    fmt::print(stderr, "init: {} tensors from {} shard(s) of the HF release layout\n", rep.tensors,
                               rep.files);
            }
            if (root) fmt::print(stderr, "init: weights from {}\n", cfg.init_from);
        } else {
            P.init(cfg.seed, cfg.init_std);
        }
    }
    const int64_t start = have_resume ? resumed.step : 0;
    int64_t skipped_total = have_resume ? resumed.run.value("skipped", (int64_t)0) : 0;
    int64_t tokens_seen = have_resume ? resumed.run.value("tokens", (int64_t)0) : 0;
    double loss_ema = have_resume ? resumed.run.value("loss_ema", 0.0) : 0.0;
    sum.start_step = start;
    const std::string metrics_path = (fs::path(cfg.out_dir) / "metrics.jsonl").string();
    if (root) {
        if (have_resume)
            truncate_metrics(metrics_path, start);
        else
            write_file_atomic(metrics_path, "");
    }

    // MFU basis, printed once
    flops_options fo;
    fo.seq_len = cfg.seq;
    fo.include_mtp = mc.has_mtp();
    fo.indexer_loss = cfg.indexer_weight != 0.0;
    const flops_breakdown fb = training_flops_per_token(mc, fo);
    // the indexer warm-up steps (loss.indexer_dense_steps) attend to every visible compressed entry of a CSA layer
    fo.dense_csa = true;
    const double flops_dense = training_flops_per_token(mc, fo).total;
    // Measured once before the first step and once after it (outside the step's timing); the higher is kept: on a
    // shared machine a busy neighbour can only lower a measurement, and a low peak would inflate every MFU logged.
    peak_measurement peak = root ? measure_fma_peak(0.2) : peak_measurement{};
    const int64_t micro_total = cfg.grad_accum * dp;  // micro-batches of one optimizer step, over all DP ranks
    if (root) {
        fmt::print(stderr, "train: {} | {} | {} steps x {} micro-batches x {}x{} tokens | {} rank(s) x {} threads\n",
                   cfg.name, cfg.mode, cfg.steps, micro_total, cfg.batch, cfg.seq, world.size(), omp_get_max_threads());
        fmt::print(stderr, "train: data: {}\n", data.source().describe());
        fmt::print(stderr,
                   "train: MFU = {:.4g} FLOPs/token x tokens/s / {:.1f} GFLOP/s (measured fp32 FMA peak, {}){}\n",
                   fb.total, peak.gflops * world.size(), peak.isa,
                   cfg.indexer_dense_steps > 0 ? fmt::format("; {:.4g} FLOPs/token in the {} dense-CSA warm-up steps",
                                                             flops_dense, cfg.indexer_dense_steps)
                                               : std::string());
    }

    std::unique_ptr<line_appender> metrics;  // a failed append (full disk) stops the run, leaving no torn line
    if (root) metrics = std::make_unique<line_appender>(metrics_path);
    std::unique_ptr<progress> bar;
    if (root) bar = std::make_unique<progress>(cfg.steps, "steps");
    train_batch batch;
    int consecutive_skips = 0;
    std::string last_ckpt;
    auto checkpoint = [&](int64_t step_done) {
        std::vector<float> m, v;
        if (root) full_state(m, v);
        opt.gather_full(0, P.weights.data(), m.data(), v.data());
        if (root) {
            checkpoint_state cs;
            cs.step = step_done;
            cs.adam_steps = opt.adam_steps();
            cs.data = data.state();
            cs.run = {{"skipped", skipped_total}, {"tokens", tokens_seen}, {"loss_ema", loss_ema}, {"name", cfg.name}};
            const optim_state_ref ref{cfg.optim.kind, m.data(), v.data()};
            last_ckpt = save_checkpoint_state(cfg.out_dir, P, &ref, cs, cfg.keep_last);
        }
        // a large checkpoint may take rank 0 a while: wait as long as it keeps writing (dist.timeout after its last
        // progress, not after the start of the write)
        const std::string ckpt_dir = (fs::path(cfg.out_dir) / "checkpoints").string();
        world.barrier_async()->wait_while_progressing([&ckpt_dir] { return tree_signature(ckpt_dir); });
    };

    step_reducer reducer(cfg.grad_accum, dp);
    // Each micro-batch's gradients are computed from zero and added to the step's sum in micro-batch order
    // (acc = ((G_0 + G_1) + G_2) + ...): the order the DP reduction uses across ranks, so that one process running
    // the ranks' micro-batches gives bitwise the same sum (docs/distributed.md).
    std::vector<float> grad_acc(cfg.grad_accum > 1 ? P.n_floats : 0);
    std::unique_ptr<pipeline_step> pipe;
    std::vector<train_batch> pipe_batches;  // this DP rank's micro-batches of the step (pipelined)
    if (pipelined) pipe = std::make_unique<pipeline_step>(model, world, dc, pl, ep.get(), cfg.grad_accum, grad_acc);
    auto accumulate = [&](int64_t k) {
        if (cfg.grad_accum == 1) return;
        const float* g = P.grads.data();
        float* a = grad_acc.data();
        const int64_t n = P.n_floats;
        if (k == 0) {
            std::memcpy(a, g, sizeof(float) * n);
            return;
        }
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; i++) a[i] += g[i];
    };
    for (int64_t step = start; step < cfg.steps; step++) {
        const double t0 = now_seconds();
        const bool decaying = cfg.schedule.total > 0 && step >= std::max(cfg.schedule.decay_start, cfg.schedule.warmup);
        step_options so;
        so.lambda_mtp = decaying ? cfg.mtp_weight_after_decay : cfg.mtp_weight;
        so.alpha_bal = cfg.balance_alpha;
        so.lambda_idx = cfg.indexer_weight;
        so.dense_csa = step < cfg.indexer_dense_steps;
        so.recompute = cfg.recompute;
        so.loss_scale = 1.0 / (double)micro_total;
        P.zero_grads();
        // micro-batch m of the step goes to DP rank m % dp; every rank packs them all (the data cursor stays the
        // same everywhere) and computes its own
        reducer.begin_step();
        int64_t step_tokens = 0, step_targets = 0;
        int64_t own = 0;
        for (int64_t m = 0; m < micro_total; m++) {
            data.next(batch, cfg.batch, cfg.seq);
            step_tokens += batch.B * batch.S;
            step_targets += batch.target_tokens;
            if (m % dp != dp_rank) continue;
            if (pipe) {
                pipe_batches.resize(own + 1);
                pipe_batches[own++] = batch;
                continue;
            }
            if (own > 0) P.zero_grads();
            const step_result r = model.step(batch.view(), so);
            accumulate(own++);
            reducer.add(m, r);
        }
        // pipelined: every rank of a pipeline gets the whole model's losses of its micro-batches (the all-gather below
        // reads them from the first stage's ranks) and its own blocks' expert loads (summed over the world below)
        if (pipe) pipe->run(pipe_batches, so, reducer.losses(), reducer.loads());
        if (cfg.grad_accum > 1) std::memcpy(P.grads.data(), grad_acc.data(), sizeof(float) * P.n_floats);
        // losses summed in micro-batch order (as one process running all micro-batches would); loads summed over the
        // world, the tensor-parallel copies of a micro-batch counted once (tp rank 0)
        const step_result acc = reducer.reduce(dpc, world, dc.mesh.tp_rank == 0);

        if (tp) tp->drop_replicated_gradients(P);  // ZeRO-1 then sums over TP and DP ranks alike
        opt.reduce_gradients();
        const double lr = cfg.schedule.at(step);
        const double gnorm = opt.grad_norm();
        const bool bad = !finite(acc.loss) || !finite(gnorm);
        optim_step_stats os;
        os.lr = lr;
        os.grad_norm = gnorm;
        if (bad) {
            skipped_total++;
            consecutive_skips++;
        } else {
            consecutive_skips = 0;
            os = opt.step(lr, gnorm);
            if (pipe) pipe->sync_embedding();
            model.update_expert_biases(acc, cfg.bias_update_speed);
        }
        tokens_seen += step_tokens;
        const double dt = now_seconds() - t0;
        const bool spike = !bad && loss_ema > 0 && acc.loss > cfg.spike_factor * loss_ema;
        if (!bad) loss_ema = loss_ema == 0 ? acc.loss : 0.9 * loss_ema + 0.1 * acc.loss;
        const double tps = step_tokens / dt;
        if (root && step == start) {
            const peak_measurement again = measure_fma_peak(0.2);
            if (again.gflops > 1.15 * peak.gflops)
                fmt::print(stderr,
                           "train: peak re-measured after the first step: {:.1f} GFLOP/s (the first measurement, "
                           "{:.1f}, was taken on a busy machine); MFU uses the higher\n",
                           again.gflops * world.size(), peak.gflops * world.size());
            peak.gflops = std::max(peak.gflops, again.gflops);
            // the peak must cover what real GEMMs reach here (one process: ranks sharing cores would skew both)
            if (world.size() == 1) check_peak_against_gemm(peak, measure_sgemm_peak(1024, 3).gflops, "oneDNN sgemm");
            constexpr double MiB = 1024.0 * 1024.0;
            // (pipelined, the other micro-batches in flight hold their own activations: only the resident set then)
            const std::string acts = pipelined ? std::string()
                                               : describe_activation_memory((double)model.activation_bytes(),
                                                                            cfg.batch * cfg.seq, cfg.recompute) +
                                                     ", ";
            fmt::print(stderr, "train: memory after the first step (rank 0): {}peak resident {:.1f} MiB\n", acts,
                       peak_resident_bytes() / MiB);
        }
        if (step == start) sum.first_loss = acc.loss;
        sum.last_loss = acc.loss;

        if (root && cfg.log_every > 0 && ((step + 1) % cfg.log_every == 0 || step + 1 == cfg.steps || bad || spike)) {
            nlohmann::json j;
            j["step"] = step + 1;
            j["loss"] = acc.loss;
            j["lm"] = acc.lm;
            j["mtp"] = acc.mtp;
            j["bal"] = acc.bal;
            j["idx"] = acc.idx;
            j["grad_norm"] = os.grad_norm;
            j["clip_scale"] = os.clip_scale;
            j["lr"] = lr;
            j["tokens"] = tokens_seen;
            j["target_tokens"] = step_targets;  // labels the LM loss averages over (SFT: assistant tokens)
            j["step_seconds"] = dt;
            j["tokens_per_s"] = tps;
            const double flops = step < cfg.indexer_dense_steps ? flops_dense : fb.total;
            j["mfu"] = flops * tps / (peak.gflops * world.size() * 1e9);
            check_mfu(j["mfu"].get<double>(), fmt::format("train: step {}", step + 1).c_str());
            j["peak_rss_mib"] = peak_resident_bytes() / (1024.0 * 1024.0);  // rank 0's process so far
            nlohmann::json jl = nlohmann::json::array();
            for (const auto& l : acc.expert_load) {
                int64_t mx = 0, total = 0;
                for (int64_t v : l) {
                    mx = std::max(mx, v);
                    total += v;
                }
                jl.push_back(l.empty() ? 0.0 : (double)mx * l.size() / std::max<int64_t>(total, 1));
            }
            j["expert_load_max_over_mean"] = jl;
            j["expert_load"] = acc.expert_load;  // tokens per expert, per MoE layer (blocks, then MTP)
            j["skipped"] = bad;
            j["spike"] = spike;
            metrics->append(j.dump());
        }
        if (root && spike)
            fmt::print(stderr, "\ntrain: loss spike at step {}: {:.4f} (running mean {:.4f})\n", step + 1, acc.loss,
                       loss_ema);
        if (root && bad)
            fmt::print(stderr, "\ntrain: non-finite loss or gradient at step {}: update skipped ({} in a row)\n",
                       step + 1, consecutive_skips);
        if (bar) bar->update(step + 1, fmt::format("loss {:.4f} | {:.0f} tok/s | lr {:.3g}", acc.loss, tps, lr));
        if (consecutive_skips >= cfg.max_consecutive_skips) {
            checkpoint(step + 1);
            throw error(fmt::format(
                "train: {} consecutive steps with non-finite loss or gradients (limit guards.max_consecutive_skips = "
                "{}); stopped after writing {}",
                consecutive_skips, cfg.max_consecutive_skips, last_ckpt));
        }
        if (cfg.checkpoint_every > 0 && (step + 1) % cfg.checkpoint_every == 0 && step + 1 < cfg.steps)
            checkpoint(step + 1);
    }
    checkpoint(cfg.steps);
    sum.end_step = cfg.steps;
    sum.skipped = skipped_total;
    sum.checkpoint = last_ckpt;
    if (!root) return sum;
    bar->finish(fmt::format("loss {:.4f}", sum.last_loss));
    metrics->close();
    if (cfg.report) {
        sum.report = write_run_report(cfg.out_dir, cfg.name, fb.formula, peak.gflops * world.size());
        fmt::print(stderr, "train: report {}\n", sum.report);
    }
    fmt::print(stderr, "train: checkpoint {}\n", last_ckpt);
    return sum;
}

}  // namespace trex
