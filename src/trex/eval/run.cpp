#include "trex/eval/run.hpp"

#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "trex/base/error.hpp"
#include "trex/base/files.hpp"
#include "trex/base/progress.hpp"
#include "trex/base/timer.hpp"
#include "trex/eval/extract.hpp"
#include "trex/eval/prompts.hpp"

namespace trex::eval {

namespace fs = std::filesystem;

std::string completion_key(const std::string& backend_identity, const std::vector<chat_message>& msgs,
                           const gen_params& p, int sample) {
    std::string s = backend_identity;
    s += '\x1f';
    for (const auto& m : msgs) {
        s += m.role;
        s += '\x1e';
        s += m.content;
        s += '\x1f';
    }
    s += fmt::format("t={};p={};m={};s={};i={}", p.temperature, p.top_p, p.max_tokens, p.seed, sample);
    const XXH128_hash_t h = XXH3_128bits(s.data(), s.size());
    return fmt::format("{:016x}{:016x}", h.high64, h.low64);
}

namespace {

// ---- the completion cache: <out>/completions.jsonl, one line per sample, appended and flushed as they arrive
// An append-only JSONL file of records {"key": ..., ...}: read whole at start (a line torn by an interruption is
// ignored), each new record appended and flushed as it comes. The completion cache and the execution cache.
class keyed_jsonl {
   public:
    keyed_jsonl(const std::string& path, bool enabled) : enabled_(enabled) {
        if (!enabled) return;
        std::ifstream in(path);
        std::string line;
        long torn = 0;
        while (std::getline(in, line)) {
            if (line.empty()) continue;
            try {
                ojson j = ojson::parse(line);
                const std::string key = j.at("key").get<std::string>();
                map_[key] = std::move(j);
            } catch (const std::exception&) {
                torn++;  // a line cut by an interruption
            }
        }
        if (torn)
            std::fprintf(stderr, "trex eval: %s: %ld unreadable line(s) ignored (interrupted write)\n", path.c_str(),
                         torn);
        // a torn last line must not glue onto the next append
        f_ = std::fopen(path.c_str(), "ab");
        TREX_CHECK(f_ != nullptr, "{}: cannot open for appending", path);
        if (std::ftell(f_) > 0) {
            std::FILE* r = std::fopen(path.c_str(), "rb");
            if (r) {
                std::fseek(r, -1, SEEK_END);
                if (std::fgetc(r) != '\n') std::fputc('\n', f_);
                std::fclose(r);
            }
        }
    }
    ~keyed_jsonl() {
        if (f_) std::fclose(f_);
    }
    // The record of `key`, or null.
    const ojson* get(const std::string& key) const {
        auto it = map_.find(key);
        return it == map_.end() ? nullptr : &it->second;
    }
    void put(const ojson& record) {
        if (!enabled_) return;
        const std::string line = record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
        std::lock_guard<std::mutex> lock(mu_);
        std::fwrite(line.data(), 1, line.size(), f_);
        std::fflush(f_);  // in the kernel's hands: survives the process being killed
    }

   private:
    bool enabled_;
    std::map<std::string, ojson> map_;
    std::FILE* f_ = nullptr;
    std::mutex mu_;
};

// The completion cache: completions by request key.
class completion_cache {
   public:
    completion_cache(const std::string& path, bool enabled) : store_(path, enabled) {}
    bool get(const std::string& key, std::string* out) const {
        const ojson* j = store_.get(key);
        if (!j || !j->contains("completion") || !(*j)["completion"].is_string()) return false;
        *out = (*j)["completion"].get<std::string>();
        return true;
    }
    void put(const std::string& key, const std::string& id, int sample, const std::string& completion,
             const std::string& finish) {
        store_.put(
            {{"key", key}, {"id", id}, {"sample", sample}, {"completion", completion}, {"finish_reason", finish}});
    }

   private:
    keyed_jsonl store_;
};

struct prepared_item;

// The execution cache: what running an extracted artefact gave, by a key over the harness version (this binary and
// the Python runner and shims), the protocol, the limits, the artefact and its inputs. A rerun re-judges these
// outcomes (with the run's judge) instead of executing again; --reexecute ignores them.
class execution_cache {
   public:
    execution_cache(const std::string& path, const exec_config& cfg, const std::string& protocol)
        : store_(path, true), version_(harness_version(cfg) + "|" + protocol) {}
    std::string key(const artefact& a, const prepared_item& p) const;
    bool get(const std::string& key, exec_outcome* out) const {
        const ojson* j = store_.get(key);
        if (!j || !j->contains("exec")) return false;
        *out = exec_from_json((*j)["exec"]);
        return true;
    }
    void put(const std::string& key, const exec_outcome& ex) { store_.put({{"key", key}, {"exec", exec_to_json(ex)}}); }

   private:
    static std::string harness_version(const exec_config& cfg);
    keyed_jsonl store_;
    std::string version_;
};

struct prepared_item {
    eval_item item;
    const prompt_template* tmpl = nullptr;  // the item's template (its preferred artefact)
    std::vector<chat_message> msgs;
    std::string data_json;
    std::string reference_lp;
    std::vector<std::string> keys;  // per sample
};

std::string execution_cache::harness_version(const exec_config& cfg) {
    // this binary (the worker that reads and solves), the runner and shims, and the limits
    std::string v = cfg.trex_bin.empty() ? "" : file_xxh64(cfg.trex_bin);
    std::error_code ec;
    if (!cfg.runner_dir.empty() && fs::is_directory(cfg.runner_dir, ec)) {
        std::vector<std::string> py;
        for (const auto& e : fs::recursive_directory_iterator(cfg.runner_dir, ec))
            if (e.is_regular_file() && e.path().extension() == ".py") py.push_back(e.path().string());
        std::sort(py.begin(), py.end());
        for (const auto& f : py) v += "|" + file_xxh64(f);
    }
    return fmt::format("{}|{}|{}|{}|{}|{}", v, cfg.python, cfg.limits.wall_s, cfg.limits.cpu_s, cfg.limits.memory_mb,
                       cfg.solve_time_limit_s);
}

std::string execution_cache::key(const artefact& a, const prepared_item& p) const {
    XXH64_state_t* st = XXH64_createState();
    XXH64_reset(st, 0);
    for (const std::string* part : {&version_, &a.kind, &a.text, &p.data_json, &p.reference_lp}) {
        const uint64_t n = part->size();
        XXH64_update(st, &n, sizeof n);
        XXH64_update(st, part->data(), part->size());
    }
    const bool structure = p.item.truth.kind == truth_kind::structure;
    XXH64_update(st, &structure, sizeof structure);
    const uint64_t h = XXH64_digest(st);
    XXH64_freeState(st);
    return fmt::format("{:016x}", h);
}

struct judge_task {
    size_t item;
    int sample;
    std::string completion;
    bool backend_error = false;
    std::string error;
};

template <class T>
class work_queue {
   public:
    void push(T t) {
        {
            std::lock_guard<std::mutex> l(mu_);
            q_.push_back(std::move(t));
        }
        cv_.notify_one();
    }
    void close() {
        {
            std::lock_guard<std::mutex> l(mu_);
            closed_ = true;
        }
        cv_.notify_all();
    }
    bool pop(T* t) {
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait(l, [&] { return closed_ || !q_.empty(); });
        if (q_.empty()) return false;
        *t = std::move(q_.front());
        q_.pop_front();
        return true;
    }

   private:
    std::deque<T> q_;
    bool closed_ = false;
    std::mutex mu_;
    std::condition_variable cv_;
};

// Runs the artefact (or takes its outcome from the execution cache); *from_cache tells which.
exec_outcome execute(executor& ex, const artefact& a, const prepared_item& p, execution_cache& cache, bool reexecute,
                     bool* from_cache) {
    const std::string key = cache.key(a, p);
    exec_outcome o;
    *from_cache = !reexecute && cache.get(key, &o);
    if (*from_cache) return o;
    if (p.item.truth.kind == truth_kind::structure)
        o = a.kind == "python" ? ex.compare_python(a.text, p.data_json, p.reference_lp)
                               : ex.compare_model(a.kind, a.text, p.reference_lp);
    else
        o = a.kind == "python" ? ex.run_python(a.text, p.data_json) : ex.run_model(a.kind, a.text);
    cache.put(key, o);
    return o;
}

sample_record judge_sample(executor& ex, execution_cache& cache, const prepared_item& p, const judge_task& t,
                           const run_options& opt, const objective_judge& j, bool* from_cache) {
    *from_cache = false;
    sample_record r;
    r.id = p.item.id;
    r.benchmark = p.item.benchmark;
    r.category = p.item.category;
    r.difficulty = p.item.difficulty;
    r.sample = t.sample;
    r.truth = p.item.truth;
    r.cache_key = p.keys[(size_t)t.sample];
    if (t.backend_error) {
        r.ex.status = "backend_error";
        r.ex.detail = t.error;
    } else {
        const artefact a = opt.protocol == "trex"   ? extract_trex_protocol(t.completion)
                           : opt.protocol == "orlm" ? extract_orlm_protocol(t.completion)
                                                    : extract_artefact(t.completion, p.tmpl->artefact);
        if (a.kind.empty()) {
            r.ex.status = "no_artefact";
            r.ex.detail = t.completion.empty() ? "empty completion" : "no model or code block in the completion";
        } else {
            r.ex = execute(ex, a, p, cache, opt.reexecute, from_cache);
            r.artefact_text = a.text.size() > 4096 ? a.text.substr(0, 4096) + "\n[... cut]" : a.text;
        }
    }
    r.v = judge_outcome(r.truth, r.ex, j);
    return r;
}

void write_outputs(const std::string& dir, const std::vector<sample_record>& recs, const eval_summary& s,
                   const ojson& run) {
    std::string lines;
    for (const auto& r : recs)
        lines += sample_to_json(r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    write_file_atomic(dir + "/results.jsonl", lines);
    ojson summary = summary_json(s);
    summary["run"] = run;
    write_file_atomic(dir + "/summary.json", summary.dump(2) + "\n");
    write_file_atomic(dir + "/report.md", report_markdown(s, run));
    write_file_atomic(dir + "/report.html", report_html(s, run, recs));
}

objective_judge make_judge(const std::string& judge, double tol) {
    objective_judge j;
    TREX_CHECK(parse_objective_judge(judge, tol, &j), "--judge '{}': expected abs, rel or orlm", judge);
    return j;
}

// The refusals before any work: missing options, and a sandbox that does not hold (unless allowed).
void check_run_options(const run_options& opt) {
    TREX_CHECK(!opt.benches.empty(), "no benchmark given (--bench FILE or --suite trex DIR)");
    TREX_CHECK(!opt.out_dir.empty(), "no output directory given (--out DIR)");
    TREX_CHECK(opt.samples >= 1, "--samples must be at least 1");
    for (int k : opt.ks)
        TREX_CHECK(k >= 1 && k <= opt.samples, "--k {}: must be between 1 and --samples ({})", k, opt.samples);
    // every answer (model files too) runs in the sandbox: refuse before asking the model anything
    if (!opt.exec.allow_unisolated && !sandbox_guarantees().isolated) {
        std::string missing;
        for (const auto& g : sandbox_guarantees().items)
            if (g.required && !g.held) missing += (missing.empty() ? "" : ", ") + g.name;
        throw_error(
            fmt::format("the sandbox for model-written code does not hold here ({}; missing: {}); "
                        "`trex eval sandbox` says why, --allow-unisolated runs the answers anyway",
                        sandbox_guarantees().summary, missing));
    }
}

// The items of every benchmark (at most --limit each); a repeated (benchmark, id) is renamed. What the loaders
// skipped, and the renames, go to `skipped`.
std::vector<prepared_item> load_items(const run_options& opt, std::vector<std::string>& skipped,
                                      std::map<std::string, long>& unscorable) {
    std::vector<prepared_item> items;
    std::set<std::pair<std::string, std::string>> seen;
    for (const auto& bs : opt.benches) {
        load_options lo = opt.load;
        lo.name = bs.name;
        if (lo.python.empty()) lo.python = opt.exec.python;
        load_report rep;
        std::vector<eval_item> its = load_benchmark(bs.path, lo, &rep);
        for (const auto& s : rep.skipped) skipped.push_back(s);
        unscorable[bs.name.empty() ? fs::path(bs.path).stem().string() : bs.name] += (long)rep.skipped.size();
        long n = 0;
        for (auto& it : its) {
            if (opt.limit > 0 && n >= opt.limit) break;
            n++;
            if (!seen.insert({it.benchmark, it.id}).second) {
                const std::string old = it.id;
                it.id = fmt::format("{}@{}", it.id, it.source.substr(it.source.rfind(':') + 1));
                skipped.push_back(fmt::format("{}: duplicate id '{}' renamed '{}'", it.source, old, it.id));
            }
            prepared_item p;
            p.item = std::move(it);
            items.push_back(std::move(p));
        }
    }
    return items;
}

// The first ten skipped records on stderr (the report lists them all).
void report_skipped(const std::vector<std::string>& skipped) {
    for (size_t i = 0; i < skipped.size() && i < 10; i++)
        std::fprintf(stderr, "trex eval: skipped %s\n", skipped[i].c_str());
    if (skipped.size() > 10)
        std::fprintf(stderr, "trex eval: ... %zu more (listed in the report)\n", skipped.size() - 10);
}

// Each item's data, reference model, prompt (with its few-shot examples) and per-sample cache keys.
void render_prompts(std::vector<prepared_item>& items, const run_options& opt, const prompt_template& tmpl,
                    const prompt_template& structure_tmpl, const fewshot_pool* pool, backend& b) {
    for (auto& p : items) {
        p.tmpl = p.item.truth.kind == truth_kind::structure ? &structure_tmpl : &tmpl;
        if (!p.item.data_path.empty()) p.data_json = read_file(p.item.data_path);
        if (p.item.truth.kind == truth_kind::structure) p.reference_lp = read_file(p.item.reference_lp_path);
        std::vector<const fewshot_example*> shots;
        if (pool) shots = pool->retrieve(p.item.question, p.item.id, opt.shots);
        p.msgs = render_prompt(*p.tmpl, p.item, p.data_json, shots);
        for (int s = 0; s < opt.samples; s++) p.keys.push_back(completion_key(b.identity(), p.msgs, opt.gen, s));
    }
}

// Creates the output directory (removing the cache for --fresh); returns the cache's path.
std::string prepare_out_dir(const run_options& opt) {
    std::error_code ec;
    fs::create_directories(opt.out_dir, ec);
    TREX_CHECK(fs::is_directory(opt.out_dir, ec), "--out {}: cannot create the directory", opt.out_dir);
    const std::string cache_path = opt.out_dir + "/completions.jsonl";
    if (opt.fresh) fs::remove(cache_path, ec);
    return cache_path;
}

// One request to the backend: samples first .. first+n-1 of an item.
struct gen_task {
    size_t item;
    int first, n;
};

// The work of a run: generator threads ask the backend for the completions the cache lacks, judge threads (one
// executor each) judge every sample, cached ones first, into `records` (item-major, then sample).
struct eval_work {
    const run_options& opt;
    backend& b;
    const std::vector<prepared_item>& items;
    completion_cache& cache;
    const prompt_template& tmpl;
    const objective_judge& judge;
    execution_cache& xcache;
    std::deque<gen_task> gen_tasks;
    work_queue<judge_task> jq;
    long total = 0;
    std::mutex gen_mu;
    std::atomic<long> generated{0}, backend_errors{0};
    std::vector<std::thread> gen_threads;
    std::vector<sample_record> records;
    std::vector<size_t> offset;
    std::atomic<long> judged{0}, correct{0}, exec_cached{0};
    std::atomic<size_t> gens_done{0};
    std::vector<char> done;  // per record: judged
    bool interrupted = false, detached = false;
    double judge_busy_t0 = -1;
    std::mutex t_mu;
    double judge_last = 0;
    std::vector<std::thread> judges;

    eval_work(const run_options& opt_, backend& b_, const std::vector<prepared_item>& items_, completion_cache& cache_,
              const prompt_template& tmpl_, const objective_judge& judge_, execution_cache& xcache_)
        : opt(opt_), b(b_), items(items_), cache(cache_), tmpl(tmpl_), judge(judge_), xcache(xcache_) {}

    bool stopped() const { return opt.stop && opt.stop->load(); }

    // Cached samples go straight to the judges; the others become generation requests.
    void plan(run_result& res) {
        for (size_t i = 0; i < items.size(); i++) {
            std::vector<int> missing;
            for (int s = 0; s < opt.samples; s++) {
                total++;
                std::string c;
                if (cache.get(items[i].keys[(size_t)s], &c)) {
                    res.cached++;
                    jq.push(judge_task{i, s, std::move(c), false, ""});
                } else {
                    missing.push_back(s);
                }
            }
            add_requests(i, missing);
        }
    }

    // one request for a missing suffix; single requests for holes
    void add_requests(size_t i, const std::vector<int>& missing) {
        size_t k = 0;
        while (k < missing.size()) {
            size_t e = k;
            while (e + 1 < missing.size() && missing[e + 1] == missing[e] + 1) e++;
            if (e + 1 == missing.size()) {
                gen_tasks.push_back({i, missing[k], (int)(e - k + 1)});
            } else {
                for (size_t q = k; q <= e; q++) gen_tasks.push_back({i, missing[q], 1});
            }
            k = e + 1;
        }
    }

    void start_generators() {
        const int n_gen = std::max(1, std::min<int>(b.concurrency(), (int)gen_tasks.size()));
        for (int g = 0; g < n_gen && !gen_tasks.empty(); g++) gen_threads.emplace_back([this] { generate_loop(); });
    }

    void generate_loop() {
        struct count_done {
            std::atomic<size_t>& n;
            ~count_done() { n++; }
        } on_exit{gens_done};
        while (!stopped()) {
            gen_task t;
            {
                std::lock_guard<std::mutex> l(gen_mu);
                if (gen_tasks.empty()) return;
                t = gen_tasks.front();
                gen_tasks.pop_front();
            }
            generate(t);
        }
    }

    // One request; each completion is cached and judged (a failed request: each sample a backend error).
    void generate(const gen_task& t) {
        gen_request rq;
        rq.item_id = items[t.item].item.id;
        rq.benchmark = items[t.item].item.benchmark;
        rq.messages = items[t.item].msgs;
        rq.params = opt.gen;
        rq.n = t.n;
        rq.first_sample = t.first;
        gen_result gr;
        try {
            gr = b.generate(rq);
        } catch (const std::exception& e) {
            gr.ok = false;
            gr.error = e.what();
        }
        for (int s = 0; s < t.n; s++) {
            judge_task jt{t.item, t.first + s, "", false, ""};
            if (gr.ok && s < (int)gr.completions.size()) {
                jt.completion = gr.completions[(size_t)s];
                cache.put(items[t.item].keys[(size_t)(t.first + s)], rq.item_id, t.first + s, jt.completion,
                          s < (int)gr.finish_reasons.size() ? gr.finish_reasons[(size_t)s] : "");
                generated++;
            } else {
                jt.backend_error = true;
                jt.error = gr.error.empty() ? "no completion" : gr.error;
                backend_errors++;
            }
            jq.push(std::move(jt));
        }
    }

    void start_judges() {
        const int n_judge =
            std::max(1, opt.workers > 0 ? std::min(opt.workers, 32)
                                        : std::min(32, (int)std::max(1u, std::thread::hardware_concurrency())));
        records.resize((size_t)total);
        done.assign((size_t)total, 0);
        offset.resize(items.size());
        for (size_t i = 0; i < items.size(); i++) offset[i] = i * (size_t)opt.samples;
        for (int w = 0; w < n_judge; w++) judges.emplace_back([this, w] { judge_loop(w); });
    }

    void judge_loop(int w) {
        executor ex(opt.exec, w);
        judge_task t;
        while (!stopped() && jq.pop(&t)) {
            if (stopped()) break;  // taken after the stop: not judged
            {
                std::lock_guard<std::mutex> l(t_mu);
                if (judge_busy_t0 < 0) judge_busy_t0 = now_seconds();
            }
            bool from_cache = false;
            sample_record r = judge_sample(ex, xcache, items[t.item], t, opt, judge, &from_cache);
            if (from_cache) exec_cached++;
            if (r.v.correct) correct++;
            const size_t idx = offset[t.item] + (size_t)t.sample;
            records[idx] = std::move(r);
            done[idx] = 1;
            judged++;
            std::lock_guard<std::mutex> l(t_mu);
            judge_last = now_seconds();
        }
    }

    // Until every sample is judged (with a progress line); then every thread is joined.
    // driving: the backend's engine runs on this thread (backend::attach_driver), between progress updates.
    void wait(const run_result& res, bool driving) {
        progress bar(total, "answers");
        // closes the judges' queue when every generator is done (or at a stop)
        std::thread closer([&] {
            while (gens_done.load() < gen_threads.size() && !stopped())
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            jq.close();
        });
        while (judged.load() < total) {
            if (stopped()) {
                interrupted = true;
                break;
            }
            if (opt.progress)
                bar.update(judged.load(), fmt::format("generated {} cached {} correct {}", generated.load(), res.cached,
                                                      correct.load()));
            if (driving)
                b.drive(0.2);
            else
                std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
        closer.join();  // the judges finish the answer they hold and stop
        for (auto& t : judges) t.join();
        if (interrupted) {
            // a request in flight cannot be cancelled: wait a little, then leave it (the caller exits soon)
            const double t0 = now_seconds();
            while (gens_done.load() < gen_threads.size() && now_seconds() - t0 < 2.0)
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            detached = gens_done.load() < gen_threads.size();
        }
        for (auto& t : gen_threads) detached ? t.detach() : t.join();
        if (opt.progress)
            bar.finish(fmt::format("generated {} cached {} correct {}", generated.load(), res.cached, correct.load()));
    }
};

// The run's description in summary.json and the reports.
ojson run_description(const run_options& opt, backend& b, const prompt_template& tmpl, const objective_judge& judge,
                      const run_result& res, const std::vector<std::string>& skipped) {
    ojson run = {{"backend", b.identity()},
                 {"prompt", tmpl.name + " (" + tmpl.path + ")"},
                 {"shots", opt.shots},
                 {"samples per item", opt.samples},
                 {"decoding", fmt::format("temperature {}, top_p {}, max_tokens {}, seed {}", opt.gen.temperature,
                                          opt.gen.top_p, opt.gen.max_tokens, opt.gen.seed)},
                 {"objective judge", judge.describe()},
                 {"items", res.items},
                 {"completions", fmt::format("{} from the cache, {} {}, {} backend errors", res.cached, res.generated,
                                             b.cacheable() ? "generated" : "replayed", res.backend_errors)},
                 {"time", fmt::format("{:.1f} s", res.seconds)},
                 {"sandbox", sandbox_guarantees().summary},
                 {"python", opt.exec.python.empty() ? "none" : opt.exec.python}};
    run["executions"] =
        fmt::format("{} re-judged from the execution cache{}", res.exec_cached, opt.reexecute ? " (--reexecute)" : "");
    if (res.interrupted)
        run["interrupted"] =
            fmt::format("stopped by SIGINT: {} of {} answers judged", res.summary.micro.samples, res.samples);
    if (!opt.protocol.empty())
        run["protocol"] = opt.protocol + (opt.protocol == "trex" ? " (T-Rex or_benchmark_eval: its extraction, "
                                                                   "trex / trex_orgeval prompts, abs 1e-6, the solved "
                                                                   "model object, ORGEval from the written LP)"
                                                                 : " (ORLM eval/execute.py: orlm prompt, the first "
                                                                   "python block, 300 s, rounded and 5 % relative)");
    ojson sk = ojson::array();
    for (const auto& s : skipped) sk.push_back(s);
    run["skipped"] = sk;
    run["unscorable"] = res.unscorable;
    return run;
}

run_options with_protocol(const run_options& given) {
    run_options o = given;
    TREX_CHECK(o.protocol.empty() || o.protocol == "trex" || o.protocol == "orlm",
               "--protocol '{}': expected trex or orlm", o.protocol);
    if (o.protocol == "trex") {
        o.judge = "abs";
        o.tol = 0;  // its default, 1e-6
        o.exec.protocol = "trex";
    }
    if (o.protocol == "orlm") {  // ORLM's eval: its prompt, first python block, rounded and 5 % relative
        o.judge = "orlm";
        o.tol = 0;
        if (o.prompt == "trex") o.prompt = "orlm";
    }
    return o;
}

}  // namespace

run_result run_eval(const run_options& given, backend& b) {
    const run_options opt = with_protocol(given);
    check_run_options(opt);
    const objective_judge judge = make_judge(opt.judge, opt.tol);
    const prompt_template tmpl = load_prompt(opt.prompt);
    // under the T-Rex protocol ORGEval items get its LP-structure prompt (the code writes model.lp, solves nothing)
    const prompt_template structure_tmpl = opt.protocol == "trex" ? load_prompt("trex_orgeval") : tmpl;
    std::unique_ptr<fewshot_pool> pool;
    if (opt.shots > 0) {
        TREX_CHECK(!opt.shots_from.empty(), "--shots {} needs --shots-from FILE (a pool of solved examples)",
                   opt.shots);
        pool = std::make_unique<fewshot_pool>(opt.shots_from);
    }
    run_result res;
    res.out_dir = opt.out_dir;
    const double t0 = now_seconds();
    // ---- items
    std::vector<std::string> skipped;
    std::vector<prepared_item> items = load_items(opt, skipped, res.unscorable);
    report_skipped(skipped);
    res.skipped_records = (long)skipped.size();
    TREX_CHECK(!items.empty(), "no usable items in the benchmark file(s)");
    render_prompts(items, opt, tmpl, structure_tmpl, pool.get(), b);
    // ---- output directory and cache
    const std::string cache_path = prepare_out_dir(opt);
    completion_cache cache(cache_path, b.cacheable());
    execution_cache xcache(opt.out_dir + "/executions.jsonl", opt.exec, opt.protocol);
    // ---- work
    eval_work work(opt, b, items, cache, tmpl, judge, xcache);
    work.plan(res);
    res.items = (long)items.size();
    res.samples = work.total;
    const bool driving = b.attach_driver();  // the engine on this thread, which loaded the model
    work.start_generators();
    work.start_judges();
    work.wait(res, driving);
    res.generated = work.generated.load();
    res.backend_errors = work.backend_errors.load();
    res.seconds = now_seconds() - t0;
    res.judge_seconds = work.judge_busy_t0 < 0 ? 0 : work.judge_last - work.judge_busy_t0;
    res.exec_cached = work.exec_cached.load();
    if (work.interrupted) {  // what finished
        res.interrupted = true;
        res.generators_detached = work.detached;
        std::vector<sample_record> finished;
        for (size_t i = 0; i < work.records.size(); i++)
            if (work.done[i]) finished.push_back(std::move(work.records[i]));
        work.records = std::move(finished);
    }
    res.summary = summarize(work.records, opt.ks);
    const ojson run = run_description(opt, b, tmpl, judge, res, skipped);
    write_outputs(opt.out_dir, work.records, res.summary, run);
    return res;
}

namespace {

// The benchmark file of a suite folder: test.parquet / test.jsonl / test.json, else its only such file ("" = none).
std::string suite_file(const fs::path& d) {
    for (const char* n : {"test.parquet", "test.jsonl", "test.json"})
        if (fs::is_regular_file(d / n)) return (d / n).string();
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(d)) {
        const std::string ext = e.path().extension().string();
        if (e.is_regular_file() && (ext == ".parquet" || ext == ".jsonl" || ext == ".json"))
            found.push_back(e.path().string());
    }
    return found.size() == 1 ? found[0] : "";
}

// Which of the four benchmarks a folder name is ("" = none of them).
std::string suite_member(std::string n) {
    for (char& c : n) c = (char)std::tolower((unsigned char)c);
    const bool b4o = n.find("bench4opt") != std::string::npos || n.find("b4o") != std::string::npos;
    if (b4o && n.find("feasible") != std::string::npos) return "B4O-Feasible";
    if ((b4o && n.find("mix") == std::string::npos) || n.find("orgeval") != std::string::npos) return "B4O-ORGEval";
    if (n.find("nl4opt") != std::string::npos) return "NL4OPT";
    if (n.find("optibench") != std::string::npos) return "OptiBench";
    return "";
}

}  // namespace

std::vector<bench_spec> trex_suite_benches(const std::string& dir, std::vector<std::string>* missing) {
    std::error_code ec;
    TREX_CHECK(fs::is_directory(dir, ec), "--suite trex {}: not a directory (the T-Rex or_benchmark_eval/data folder)",
               dir);
    std::map<std::string, std::string> found;
    std::vector<fs::path> subdirs;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.is_directory()) subdirs.push_back(e.path());
    std::sort(subdirs.begin(), subdirs.end());
    for (const auto& d : subdirs) {
        const std::string member = suite_member(d.filename().string());
        if (member.empty() || found.count(member)) continue;
        const std::string file = suite_file(d);
        if (!file.empty()) found[member] = file;
    }
    std::vector<bench_spec> out;
    for (const char* m : {"NL4OPT", "OptiBench", "B4O-Feasible", "B4O-ORGEval"}) {
        if (found.count(m))
            out.push_back({found[m], m});
        else if (missing)
            missing->push_back(m);
    }
    return out;
}

run_result rescore_run(const std::string& out_dir, const std::string& judge_kind, double tol) {
    run_result res;
    res.out_dir = out_dir;
    const std::string path = out_dir + "/results.jsonl";
    std::ifstream in(path);
    TREX_CHECK(in.good(), "{}: cannot read (not a trex eval output directory?)", path);
    ojson run = ojson::object();
    std::vector<int> ks = {1};
    {
        std::ifstream s(out_dir + "/summary.json");
        if (s.good()) {
            try {
                ojson j = ojson::parse(s);
                if (j.contains("run")) run = j["run"];
                for (auto it = j["benchmarks"].begin(); it != j["benchmarks"].end(); ++it)
                    for (auto f = it.value().begin(); f != it.value().end(); ++f)
                        if (f.key().rfind("pass@", 0) == 0) {
                            const int k = std::stoi(f.key().substr(5));
                            if (std::find(ks.begin(), ks.end(), k) == ks.end()) ks.push_back(k);
                        }
            } catch (const std::exception&) {
            }
        }
    }
    std::sort(ks.begin(), ks.end());
    objective_judge j;
    const std::string kind = judge_kind.empty()
                                 ? run.value("objective judge", std::string("abs"))
                                       .substr(0, run.value("objective judge", std::string("abs")).find(' '))
                                 : judge_kind;
    j = make_judge(kind, tol);
    if (judge_kind.empty() && tol <= 0 && run.contains("objective judge")) {
        const std::string d = run["objective judge"].get<std::string>();
        const size_t sp = d.find(' ');
        if (sp != std::string::npos) j.tol = std::stod(d.substr(sp + 1));
    }
    std::vector<sample_record> recs;
    std::string line;
    int ln = 0;
    while (std::getline(in, line)) {
        ln++;
        if (line.empty()) continue;
        try {
            sample_record r = sample_from_json(ojson::parse(line));
            r.v = judge_outcome(r.truth, r.ex, j);
            recs.push_back(std::move(r));
        } catch (const std::exception& e) {
            throw_error(fmt::format("{}:{}: {}", path, ln, e.what()));
        }
    }
    res.summary = summarize(recs, ks);
    run["objective judge"] = j.describe();
    res.samples = (long)recs.size();
    res.items = res.summary.micro.items;
    write_outputs(out_dir, recs, res.summary, run);
    return res;
}

std::string format_summary(const run_result& r) {
    std::string o;
    std::vector<int> ks;
    for (int k : r.summary.ks)
        if (k != 1) ks.push_back(k);
    o += fmt::format("{:<28} {:>6} {:>8} {:>9}", "benchmark", "items", "samples", "Pass@1%");
    for (int k : ks) o += fmt::format(" {:>9}", fmt::format("pass@{}%", k));
    o += "  outcomes\n";
    auto row = [&](const std::string& n, const group_stats& g) {
        o += fmt::format("{:<28} {:>6} {:>8} {:>9.2f}", n, g.items, g.samples, 100 * g.pass1);
        for (int k : ks)
            o += g.pass_k.count(k) ? fmt::format(" {:>9.2f}", 100 * g.pass_k.at(k)) : fmt::format(" {:>9}", "-");
        o += " ";
        for (int f = 0; f < failure_count; f++)
            if (g.outcomes[(size_t)f]) o += fmt::format(" {} {}", failure_name((failure)f), g.outcomes[(size_t)f]);
        if (r.unscorable.count(n) && r.unscorable.at(n) > 0)
            o += fmt::format(" (+{} unscorable records, not counted)", r.unscorable.at(n));
        o += "\n";
    };
    for (auto& [n, g] : r.summary.benchmark) row(n, g);
    if (r.summary.benchmark.size() > 1) {
        o += fmt::format("{:<28} {:>6} {:>8} {:>9.2f}", "average over benchmarks", "", "", 100 * r.summary.macro_pass1);
        for (int k : ks)
            o += r.summary.macro_pass_k.count(k) ? fmt::format(" {:>9.2f}", 100 * r.summary.macro_pass_k.at(k))
                                                 : fmt::format(" {:>9}", "-");
        o += "\n";
    }
    return o;
}

}  // namespace trex::eval
