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
#include "trex/kernels/precision.hpp"
#include "trex/model/counts.hpp"
#include "trex/model/embedded_config.hpp"
#include "trex/model/model.hpp"
#include "trex/parallel/context.hpp"
#include "trex/parallel/expert_parallel.hpp"
#include "trex/parallel/parallelize.hpp"
#include "trex/parallel/pipeline.hpp"
#include "trex/parallel/tensor_parallel.hpp"
#include "trex/train/pipeline_step.hpp"
#include "trex/train/report.hpp"
#include "trex/train/step_reducer.hpp"

namespace fs = std::filesystem;

namespace trex {

namespace {

model_config config_of(const std::string& spec, const std::string& init_from) {
    if (spec.empty() && !init_from.empty() && fs::exists(fs::path(init_from) / "config.json"))
        return load_config((fs::path(init_from) / "config.json").string());
    if (spec.empty() || spec == "embedded:v4-tiny")
        return config_from_json(nlohmann::json::parse(embedded_tiny_config_json()), "<embedded v4-tiny>");
    return load_config(spec);
}

// The model config with the run's numerics (train_config::qat, indexer_ties): "auto" keeps the config's, except from
// a release checkpoint, whose numerics the run takes (its weights were trained against them).
model_config resolve_model_config(const train_config& tc) {
    model_config cfg = config_of(tc.model_config, tc.init_from);
    const fs::path init_cfg = tc.init_from.empty() ? fs::path() : fs::path(tc.init_from) / "config.json";
    if (!init_cfg.empty() && fs::exists(init_cfg)) {
        const model_config init = load_config(init_cfg.string());
        if (init.has_fp8_quantization) {
            if (tc.qat == "auto") cfg.qat = init.qat;
            if (tc.indexer_ties == "auto") cfg.indexer_ties = init.indexer_ties;
        }
    }
    if (tc.qat != "auto") cfg.qat = tc.qat;
    if (tc.indexer_ties != "auto") cfg.indexer_ties = tc.indexer_ties;
    validate_config(cfg, "the model with the run's model.qat / model.indexer_ties");
    return cfg;
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

namespace {

// What one optimizer step did, for the log, the progress bar and the guards.
struct step_record {
    int64_t step = 0;  // 0-based index of the step
    step_result acc;   // losses and expert loads, reduced over the world
    optim_step_stats os;
    double lr = 0, seconds = 0, tokens_per_s = 0;
    int64_t tokens = 0, targets = 0;  // packed tokens and LM targets of the whole step (all DP ranks)
    bool bad = false;                 // non-finite loss or gradient norm: the update was skipped
    bool spike = false;               // loss above guards.spike_factor x its running mean
};

// One rank's part of a training run: the run's state and its steps, in the order they run. The constructor builds the
// layout, the model, the optimizer and the data stream and restores a checkpoint (or initialises the weights); run()
// trains to cfg.steps and writes the final checkpoint and the report.
class training_run {
   public:
    training_run(const train_config& cfg, parallel::communicator& world, model_config mc);
    train_summary run();

   private:
    parallel::pipeline_layout layout_pipeline() const;
    void open_run_directory();
    void bind_parallelism();
    void open_data();
    void describe_layout() const;
    void restore_or_initialise();
    optim_state_ref full_state(const param_store& full, std::vector<float>& m, std::vector<float>& v) const;
    std::unique_ptr<param_store> whole_model_store() const;
    void announce();

    step_options options_for(int64_t step) const;
    void run_micro_batches(const step_options& so, step_record& rec);
    void accumulate(int64_t k);
    void update(step_record& rec);
    void after_first_step();
    void log_step(const step_record& rec);
    void report_step(const step_record& rec);
    void checkpoint(int64_t step_done);

    const train_config& cfg_;
    parallel::communicator& world_;
    const bool root_;
    // the GEMMs' precision in forward and backward (model.precision); checked before anything is written
    const matmul_precision precision_;
    const model_config mc_;
    parallel::dist_context dc_;
    const bool pipelined_;
    const parallel::pipeline_layout pl_;  // this rank's model chunks and the schedule (docs/distributed.md §9)
    const int dp_, dp_rank_;
    parallel::communicator& dpc_;  // the ranks that split the global batch (the tp ranks of a DP index share it)
    const int64_t micro_total_;    // micro-batches of one optimizer step, over all DP ranks
    dsv4_model model_;
    param_store& P_;
    parallel::parallel_bindings bound_;  // the expert dispatcher and the TP group bound to the model
    std::unique_ptr<parallel::zero_optimizer> opt_;
    std::unique_ptr<packer> data_;

    // run counters (restored on resume)
    int64_t start_ = 0, skipped_total_ = 0, tokens_seen_ = 0;
    double loss_ema_ = 0;
    int consecutive_skips_ = 0;
    std::string last_ckpt_;

    // MFU basis
    flops_breakdown fb_;
    double flops_dense_ = 0;  // FLOPs/token in the dense-CSA indexer warm-up steps
    peak_measurement peak_;
    bool mfu_reported_ = true;  // false once the peak could not be validated: MFU is left out (null), never guessed
    void drop_mfu(const std::string& why);

    std::string metrics_path_;
    std::unique_ptr<line_appender> metrics_;  // a failed append (full disk) stops the run, leaving no torn line
    std::unique_ptr<progress> bar_;

    // the step's working state
    train_batch batch_;
    step_reducer reducer_;
    // Each micro-batch's gradients are computed from zero and added to the step's sum in micro-batch order
    // (acc = ((G_0 + G_1) + G_2) + ...): the order the DP reduction uses across ranks, so that one process running
    // the ranks' micro-batches gives bitwise the same sum (docs/distributed.md).
    std::vector<float> grad_acc_;
    std::unique_ptr<pipeline_step> pipe_;
    std::vector<train_batch> pipe_batches_;  // this DP rank's micro-batches of the step (pipelined)
};

namespace {

// model.precision, refused (one line, before the run directory exists) on a CPU without bf16 instructions
matmul_precision run_precision(const train_config& cfg) {
    const matmul_precision p = parse_matmul_precision(cfg.precision, "model.precision");
    if (p == matmul_precision::bf16) require_bf16("train: model.precision = \"bf16\"");
    return p;
}

}  // namespace

training_run::training_run(const train_config& cfg, parallel::communicator& world, model_config mc)
    : cfg_(cfg),
      world_(world),
      root_(world.rank() == 0),
      precision_(run_precision(cfg)),
      mc_(std::move(mc)),
      dc_(world, {cfg.tp, cfg.pp, cfg.ep}, mc_),
      pipelined_(dc_.mesh.pp > 1),
      pl_(layout_pipeline()),
      dp_(dc_.mesh.dp),
      dp_rank_(dc_.mesh.dp_rank),
      dpc_(dc_.mesh.tp > 1 ? *dc_.dp_comm : world),
      micro_total_(cfg.grad_accum * dp_),
      // The model first: a model that cannot fit is an error from param_store (check_fits_in_memory) before the run
      // directory exists, so nothing is left behind.
      model_(mc_),
      P_(model_.params()),
      reducer_(cfg.grad_accum, dp_),
      grad_acc_(cfg.grad_accum > 1 ? P_.n_floats : 0) {
    open_run_directory();
    bind_parallelism();
    open_data();
    describe_layout();
    restore_or_initialise();
    announce();
}

parallel::pipeline_layout training_run::layout_pipeline() const {
    TREX_CHECK(pipelined_ || (cfg_.pp_virtual == 1 && cfg_.pp_layers.empty()),
               "dist.pp_virtual and dist.pp_layers need --pp above 1 (got --pp {})", dc_.mesh.pp);
    if (!pipelined_) return {};
    parallel::pipeline_layout pl =
        parallel::make_pipeline_layout(mc_, parallel::parse_pp_schedule(cfg_.pp_schedule), dc_.mesh.pp, cfg_.pp_virtual,
                                       dc_.mesh.pp_rank, cfg_.pp_layers);
    TREX_CHECK(pl.kind != parallel::pp_schedule_kind::interleaved || cfg_.grad_accum % dc_.mesh.pp == 0,
               "--pp {} with dist.pp_schedule = \"interleaved\" needs data.grad_accum divisible by {}", dc_.mesh.pp,
               dc_.mesh.pp);
    return pl;
}

void training_run::open_run_directory() {
    if (!root_) return;
    std::error_code ec;
    fs::create_directories(cfg_.out_dir, ec);
    TREX_CHECK(!ec, "{}: cannot create the run directory: {}", cfg_.out_dir, ec.message());
    write_file_atomic((fs::path(cfg_.out_dir) / "config.json").string(), config_to_json(mc_).dump(2));
    remove_stale_temps(cfg_.out_dir);
}

// Expert and tensor parallelism bound to the model (under TP it holds only its slices from here on); the ZeRO-1
// optimizer over the tensors this rank holds.
void training_run::bind_parallelism() {
    // a pipeline stage stores only its chunks' tensors, and the embedding where the MTP block looks it up (the last
    // chunk's rank receives it after every update: pipeline_step::sync_embedding)
    param_store::holds_fn stage_holds;
    if (pipelined_) stage_holds = [this](const tensor_spec& s) { return pl_.stores(s, mc_.has_mtp()); };
    bound_ = parallel::parallelize(model_, dc_, cfg_.dist_overlap, stage_holds);
    if (cfg_.grad_accum > 1) grad_acc_.assign(P_.n_floats, 0.0f);
    std::function<bool(const tensor_spec&)> held;
    if (pipelined_) held = [this](const tensor_spec& s) { return pl_.holds(s); };
    opt_ = std::make_unique<parallel::zero_optimizer>(P_, cfg_.optim, world_, dc_.replica_groups(P_, held),
                                                      model_.kernels());
}

// Rank 0 first: a text / JSONL source is tokenized into the run directory once; the others then find it fresh.
void training_run::open_data() {
    std::unique_ptr<document_source> source;
    if (root_) source = make_source(cfg_, mc_);
    // tokenizing may take hours: the others wait as long as rank 0 keeps writing into the run's data directory
    const std::string data_dir = (fs::path(cfg_.out_dir) / "data").string();
    world_.barrier_async()->wait_while_progressing([&data_dir] { return tree_signature(data_dir); });
    if (!root_) source = make_source(cfg_, mc_);
    data_ = std::make_unique<packer>(std::move(source), cfg_.mode, cfg_.pad_id);
    check_same_on_every_rank(world_, {{"data plan", data_->source().describe()}}, "data plans");
}

void training_run::describe_layout() const {
    if (world_.size() == 1) return;
    if (root_) fmt::print(stderr, "{}", dc_.mesh.describe(mc_));
    if (root_ && pipelined_) fmt::print(stderr, "{}", pl_.describe((int)cfg_.grad_accum));
    world_.barrier();
    fmt::print(stderr, "dist: rank {} pid {}: {:.1f} MiB weights + gradients, {} tensors, {} optimizer floats owned\n",
               world_.rank(), (long)getpid(), 2.0 * sizeof(float) * (double)P_.n_floats / (1 << 20),
               opt_->owned_tensors(), opt_->owned_floats());
    if (root_) fmt::print(stderr, "{}", opt_->describe_plan());
}

// Full-size optimizer state for checkpoints in the layout of `full` (rank 0 writes; every rank reads).
optim_state_ref training_run::full_state(const param_store& full, std::vector<float>& m, std::vector<float>& v) const {
    m.assign(full.n_floats, 0.0f);
    v.assign(full.n_floats, 0.0f);
    return optim_state_ref{cfg_.optim.kind, m.data(), v.data()};
}

// Under tensor or expert parallelism checkpoints are read into and written from a store of the whole model (weights
// only); null when the model's own store is whole.
std::unique_ptr<param_store> training_run::whole_model_store() const {
    if (P_.holds_all()) return nullptr;
    return std::make_unique<param_store>(mc_, true, /*with_grads=*/false);
}

// Start: resume > init_from > fresh (every rank reads the same files).
void training_run::restore_or_initialise() {
    checkpoint_state resumed;
    bool have_resume = false;
    if (!cfg_.resume.empty()) {
        std::string dir = cfg_.resume;
        if (cfg_.resume == "auto") {
            std::vector<std::string> skipped;
            dir = find_latest_checkpoint(cfg_.out_dir, &skipped);
            if (root_) {
                for (const auto& s : skipped) fmt::print(stderr, "resume: {}\n", s);
                if (dir.empty())
                    fmt::print(stderr, "resume: no valid checkpoint under {}, starting fresh\n", cfg_.out_dir);
            }
        }
        if (!dir.empty()) {
            std::vector<float> m, v;
            const std::unique_ptr<param_store> whole = whole_model_store();
            param_store& io = whole ? *whole : P_;
            const optim_state_ref ref = full_state(io, m, v);
            resumed = load_checkpoint_state(dir, io, &ref);
            if (whole) take_shards(P_, *whole);
            opt_->load_full(io, m.data(), v.data());
            opt_->set_adam_steps(resumed.adam_steps);
            data_->restore(resumed.data);
            have_resume = true;
            if (root_) fmt::print(stderr, "resume: {} (step {})\n", dir, resumed.step);
        }
        int64_t steps[2] = {have_resume ? resumed.step : -1, -(have_resume ? resumed.step : -1)};
        world_.all_reduce(steps, 2, parallel::dtype::i64, parallel::reduce_op::max);
        TREX_CHECK(steps[0] == -steps[1], "resume: the ranks found different checkpoints (steps {} and {})", steps[0],
                   -steps[1]);
    }
    if (!have_resume) {
        if (!cfg_.init_from.empty()) {
            const std::unique_ptr<param_store> whole = whole_model_store();
            param_store& io = whole ? *whole : P_;
            // ours (a manifest.json) or the official HF release layout (config.json + safetensors shards)
            if (fs::exists(fs::path(cfg_.init_from) / "manifest.json")) {
                load_checkpoint_state(cfg_.init_from, io, nullptr);
            } else {
                const hf_io_report rep = load_hf_checkpoint(io, cfg_.init_from);
                if (root_)
                    fmt::print(stderr, "init: {} tensors from {} shard(s) of the HF release layout\n", rep.tensors,
                               rep.files);
            }
            if (whole) take_shards(P_, *whole);
            if (root_) fmt::print(stderr, "init: weights from {}\n", cfg_.init_from);
        } else {
            P_.init(cfg_.seed, cfg_.init_std);
        }
    }
    if (root_ && (mc_.qat_release() || mc_.torch_ties()))
        fmt::print(stderr, "numerics: qat {}, indexer ties {} (docs/model.md §3.4)\n", mc_.qat, mc_.indexer_ties);
    start_ = have_resume ? resumed.step : 0;
    skipped_total_ = have_resume ? resumed.run.value("skipped", (int64_t)0) : 0;
    tokens_seen_ = have_resume ? resumed.run.value("tokens", (int64_t)0) : 0;
    loss_ema_ = have_resume ? resumed.run.value("loss_ema", 0.0) : 0.0;
    metrics_path_ = (fs::path(cfg_.out_dir) / "metrics.jsonl").string();
    if (root_) {
        if (have_resume)
            truncate_metrics(metrics_path_, start_);
        else
            write_file_atomic(metrics_path_, "");
    }
}

// The MFU basis (FLOPs per token and the measured peak), printed once; opens the metrics log and the progress bar.
void training_run::announce() {
    flops_options fo;
    fo.seq_len = cfg_.seq;
    fo.include_mtp = mc_.has_mtp();
    fo.indexer_loss = cfg_.indexer_weight != 0.0;
    fb_ = training_flops_per_token(mc_, fo);
    // the indexer warm-up steps (loss.indexer_dense_steps) attend to every visible compressed entry of a CSA layer
    fo.dense_csa = true;
    flops_dense_ = training_flops_per_token(mc_, fo).total;
    // Measured once before the first step and once after it (outside the step's timing); the higher is kept: on a
    // shared machine a busy neighbour can only lower a measurement, and a low peak would inflate every MFU logged.
    peak_ = root_ ? measure_peak(precision_, 0.2) : peak_measurement{};
    if (root_) {
        fmt::print(stderr, "train: {} | {} | {} steps x {} micro-batches x {}x{} tokens | {} rank(s) x {} threads\n",
                   cfg_.name, cfg_.mode, cfg_.steps, micro_total_, cfg_.batch, cfg_.seq, world_.size(),
                   omp_get_max_threads());
        fmt::print(stderr, "train: data: {}\n", data_->source().describe());
        fmt::print(stderr, "train: MFU = {:.4g} FLOPs/token x tokens/s / {:.1f} GFLOP/s (measured {} peak, {}){}\n",
                   fb_.total, peak_.gflops * world_.size(), peak_name(precision_), peak_.isa,
                   cfg_.indexer_dense_steps > 0 ? fmt::format("; {:.4g} FLOPs/token in the {} dense-CSA warm-up steps",
                                                              flops_dense_, cfg_.indexer_dense_steps)
                                                : std::string());
        metrics_ = std::make_unique<line_appender>(metrics_path_);
        bar_ = std::make_unique<progress>(cfg_.steps, "steps");
    }
    if (pipelined_)
        pipe_ = std::make_unique<pipeline_step>(model_, world_, dc_, pl_, bound_.ep.get(), cfg_.grad_accum, grad_acc_);
}

train_summary training_run::run() {
    train_summary sum;
    sum.start_step = start_;
    for (int64_t step = start_; step < cfg_.steps; step++) {
        step_record rec;
        rec.step = step;
        const double t0 = now_seconds();
        run_micro_batches(options_for(step), rec);
        update(rec);
        rec.seconds = now_seconds() - t0;
        rec.tokens_per_s = rec.tokens / rec.seconds;
        if (root_ && step == start_) after_first_step();
        if (step == start_) sum.first_loss = rec.acc.loss;
        sum.last_loss = rec.acc.loss;
        report_step(rec);
        if (cfg_.checkpoint_every > 0 && (step + 1) % cfg_.checkpoint_every == 0 && step + 1 < cfg_.steps)
            checkpoint(step + 1);
    }
    checkpoint(cfg_.steps);
    sum.end_step = cfg_.steps;
    sum.skipped = skipped_total_;
    sum.checkpoint = last_ckpt_;
    if (!root_) return sum;
    bar_->finish(fmt::format("loss {:.4f}", sum.last_loss));
    metrics_->close();
    if (cfg_.report) {
        sum.report =
            write_run_report(cfg_.out_dir, cfg_.name, fb_.formula, peak_.gflops * world_.size(), peak_name(precision_));
        fmt::print(stderr, "train: report {}\n", sum.report);
    }
    fmt::print(stderr, "train: checkpoint {}\n", last_ckpt_);
    return sum;
}

step_options training_run::options_for(int64_t step) const {
    const bool decaying = cfg_.schedule.total > 0 && step >= std::max(cfg_.schedule.decay_start, cfg_.schedule.warmup);
    step_options so;
    so.lambda_mtp = decaying ? cfg_.mtp_weight_after_decay : cfg_.mtp_weight;
    so.alpha_bal = cfg_.balance_alpha;
    so.lambda_idx = cfg_.indexer_weight;
    so.dense_csa = step < cfg_.indexer_dense_steps;
    so.recompute = cfg_.recompute;
    so.loss_scale = 1.0 / (double)micro_total_;
    return so;
}

// The step's forward and backward passes: micro-batch m of the step goes to DP rank m % dp; every rank packs them all
// (the data cursor stays the same everywhere) and computes its own. Leaves the step's gradient sum in P.grads and the
// losses and expert loads, reduced over the world, in rec.acc.
void training_run::run_micro_batches(const step_options& so, step_record& rec) {
    const scoped_matmul_precision scope(precision_);  // the optimizer's update (update()) runs after, in fp32
    P_.zero_grads();
    reducer_.begin_step();
    int64_t own = 0;
    for (int64_t m = 0; m < micro_total_; m++) {
        data_->next(batch_, cfg_.batch, cfg_.seq);
        rec.tokens += batch_.B * batch_.S;
        rec.targets += batch_.target_tokens;
        if (m % dp_ != dp_rank_) continue;
        if (pipe_) {
            pipe_batches_.resize(own + 1);
            pipe_batches_[own++] = batch_;
            continue;
        }
        if (own > 0) P_.zero_grads();
        const step_result r = model_.step(batch_.view(), so);
        accumulate(own++);
        reducer_.add(m, r);
    }
    // pipelined: every rank of a pipeline gets the whole model's losses of its micro-batches (the all-gather below
    // reads them from the first stage's ranks) and its own blocks' expert loads (summed over the world below)
    if (pipe_) pipe_->run(pipe_batches_, so, reducer_.losses(), reducer_.loads());
    if (cfg_.grad_accum > 1) std::memcpy(P_.grads.data(), grad_acc_.data(), sizeof(float) * P_.n_floats);
    // losses summed in micro-batch order (as one process running all micro-batches would); loads summed over the
    // world, the tensor-parallel copies of a micro-batch counted once (tp rank 0)
    rec.acc = reducer_.reduce(dpc_, world_, dc_.mesh.tp_rank == 0);
}

// Adds the k-th own micro-batch's gradients (P.grads) to the step's sum.
void training_run::accumulate(int64_t k) {
    if (cfg_.grad_accum == 1) return;
    const float* g = P_.grads.data();
    float* a = grad_acc_.data();
    const int64_t n = P_.n_floats;
    if (k == 0) {
        std::memcpy(a, g, sizeof(float) * n);
        return;
    }
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) a[i] += g[i];
}

// Gradient reduction, clipping and the optimizer update, skipped (and counted) when the loss or the gradient norm is
// not finite; the running loss mean and the spike flag.
void training_run::update(step_record& rec) {
    if (bound_.tp) bound_.tp->drop_replicated_gradients(P_);  // replicated: ZeRO-1 sums them over TP and DP ranks
    opt_->reduce_gradients();
    rec.lr = cfg_.schedule.at(rec.step);
    const double gnorm = opt_->grad_norm();
    rec.bad = !finite(rec.acc.loss) || !finite(gnorm);
    rec.os.lr = rec.lr;
    rec.os.grad_norm = gnorm;
    if (rec.bad) {
        skipped_total_++;
        consecutive_skips_++;
    } else {
        consecutive_skips_ = 0;
        rec.os = opt_->step(rec.lr, gnorm);
        if (pipe_) pipe_->sync_embedding();
        model_.update_expert_biases(rec.acc, cfg_.bias_update_speed);
    }
    tokens_seen_ += rec.tokens;
    rec.spike = !rec.bad && loss_ema_ > 0 && rec.acc.loss > cfg_.spike_factor * loss_ema_;
    if (!rec.bad) loss_ema_ = loss_ema_ == 0 ? rec.acc.loss : 0.9 * loss_ema_ + 0.1 * rec.acc.loss;
}

// Rank 0, after the first step: the peak measured again (the higher kept) and checked against real GEMMs; the memory.
void training_run::after_first_step() {
    const peak_measurement again = measure_peak(precision_, 0.2);
    if (again.gflops > 1.15 * peak_.gflops)
        fmt::print(stderr,
                   "train: peak re-measured after the first step: {:.1f} GFLOP/s (the first measurement, "
                   "{:.1f}, was taken on a busy machine); MFU uses the higher\n",
                   again.gflops * world_.size(), peak_.gflops * world_.size());
    peak_.gflops = std::max(peak_.gflops, again.gflops);
    // the peak must cover what real GEMMs reach here (one process: ranks sharing cores would skew both)
    if (world_.size() == 1) {
        try {
            check_peak_against_gemm(peak_, measure_gemm_peak(precision_, 1024, 3).gflops,
                                    precision_ == matmul_precision::bf16 ? "oneDNN bf16 matmul" : "oneDNN sgemm");
        } catch (const error& e) {
            drop_mfu(e.what());
        }
    }
    constexpr double MiB = 1024.0 * 1024.0;
    // (pipelined, the other micro-batches in flight hold their own activations: only the resident set then)
    const std::string acts = pipelined_ ? std::string()
                                        : describe_activation_memory((double)model_.activation_bytes(),
                                                                     cfg_.batch * cfg_.seq, cfg_.recompute) +
                                              ", ";
    fmt::print(stderr, "train: memory after the first step (rank 0): {}peak resident {:.1f} MiB\n", acts,
               peak_resident_bytes() / MiB);
}

// A training run does not stop because its MFU denominator cannot be trusted (a busy machine lowers the peak
// measurement): from here on metrics.jsonl carries "mfu": null and the run report says why, rather than a number
// above what the machine can do.
void training_run::drop_mfu(const std::string& why) {
    fmt::print(stderr, "train: MFU not reported from here on: {}\n", why);
    mfu_reported_ = false;
}

// One line of metrics.jsonl (rank 0).
void training_run::log_step(const step_record& rec) {
    const step_result& acc = rec.acc;
    nlohmann::json j;
    j["step"] = rec.step + 1;
    j["loss"] = acc.loss;
    j["lm"] = acc.lm;
    j["mtp"] = acc.mtp;
    j["bal"] = acc.bal;
    j["idx"] = acc.idx;
    j["grad_norm"] = rec.os.grad_norm;
    j["clip_scale"] = rec.os.clip_scale;
    j["lr"] = rec.lr;
    j["tokens"] = tokens_seen_;
    j["target_tokens"] = rec.targets;  // labels the LM loss averages over (SFT: assistant tokens)
    j["step_seconds"] = rec.seconds;
    j["tokens_per_s"] = rec.tokens_per_s;
    const double flops = rec.step < cfg_.indexer_dense_steps ? flops_dense_ : fb_.total;
    const double mfu = flops * rec.tokens_per_s / (peak_.gflops * world_.size() * 1e9);
    if (mfu_reported_) {
        try {
            check_mfu(mfu, fmt::format("step {}", rec.step + 1).c_str());
        } catch (const error& e) {
            drop_mfu(e.what());
        }
    }
    j["mfu"] = mfu_reported_ ? nlohmann::json(mfu) : nlohmann::json(nullptr);
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
    j["skipped"] = rec.bad;
    j["spike"] = rec.spike;
    metrics_->append(j.dump());
}

// The step's log line, messages and progress; stops the run (after a checkpoint) at the skip limit.
void training_run::report_step(const step_record& rec) {
    const int64_t step = rec.step;
    if (root_ && cfg_.log_every > 0 &&
        ((step + 1) % cfg_.log_every == 0 || step + 1 == cfg_.steps || rec.bad || rec.spike))
        log_step(rec);
    if (root_ && rec.spike)
        fmt::print(stderr, "\ntrain: loss spike at step {}: {:.4f} (running mean {:.4f})\n", step + 1, rec.acc.loss,
                   loss_ema_);
    if (root_ && rec.bad)
        fmt::print(stderr, "\ntrain: non-finite loss or gradient at step {}: update skipped ({} in a row)\n", step + 1,
                   consecutive_skips_);
    if (bar_)
        bar_->update(step + 1,
                     fmt::format("loss {:.4f} | {:.0f} tok/s | lr {:.3g}", rec.acc.loss, rec.tokens_per_s, rec.lr));
    if (consecutive_skips_ >= cfg_.max_consecutive_skips) {
        checkpoint(step + 1);
        throw error(fmt::format(
            "train: {} consecutive steps with non-finite loss or gradients (limit guards.max_consecutive_skips = "
            "{}); stopped after writing {}",
            consecutive_skips_, cfg_.max_consecutive_skips, last_ckpt_));
    }
}

// Gathers the weights and the optimizer state on rank 0, which writes the checkpoint; every rank waits for it.
void training_run::checkpoint(int64_t step_done) {
    std::vector<float> m, v;
    std::unique_ptr<param_store> whole = root_ ? whole_model_store() : nullptr;
    param_store& io = whole ? *whole : P_;
    if (root_) full_state(io, m, v);
    opt_->gather_full(0, &io, m.data(), v.data());
    if (root_) {
        checkpoint_state cs;
        cs.step = step_done;
        cs.adam_steps = opt_->adam_steps();
        cs.data = data_->state();
        cs.run = {{"skipped", skipped_total_}, {"tokens", tokens_seen_}, {"loss_ema", loss_ema_}, {"name", cfg_.name}};
        const optim_state_ref ref{cfg_.optim.kind, m.data(), v.data()};
        last_ckpt_ = save_checkpoint_state(cfg_.out_dir, io, &ref, cs, cfg_.keep_last);
    }
    // a large checkpoint may take rank 0 a while: wait as long as it keeps writing (dist.timeout after its last
    // progress, not after the start of the write)
    const std::string ckpt_dir = (fs::path(cfg_.out_dir) / "checkpoints").string();
    world_.barrier_async()->wait_while_progressing([&ckpt_dir] { return tree_signature(ckpt_dir); });
}

}  // namespace

train_summary run_training(const train_config& cfg, parallel::communicator& world) {
    world.timeout_seconds = cfg.dist_timeout;
    check_same_on_every_rank(world, config_entries(cfg), "run configs");
    training_run run(cfg, world, resolve_model_config(cfg));
    return run.run();
}

}  // namespace trex
