#include "trex/bench/bench_eval.hpp"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "trex/base/error.hpp"
#include "trex/base/files.hpp"
#include "trex/eval/run.hpp"
#include "trex/optmodel/render/code.hpp"
#include "trex/optmodel/families/family.hpp"
#include "trex/optmodel/ir/format.hpp"
#include "trex/optmodel/solvers/solve.hpp"
#include "trex/optmodel/ir/writers.hpp"

namespace trex::bench {

using namespace trex::eval;

namespace fs = std::filesystem;
using namespace trex::optmodel;

namespace {

// CPU seconds of this process and its waited-for children (the sandboxed programs and solve workers).
double cpu_seconds() {
    double t = 0;
    for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
        rusage ru{};
        ::getrusage(who, &ru);
        t += (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
             1e-6 * (double)ru.ru_stime.tv_usec;
    }
    return t;
}

double load_average() {
    std::ifstream in("/proc/loadavg");
    double l = 0;
    in >> l;
    return l;
}

struct synth_item {
    std::string id, question, completion, data;
    double objective = 0;
};

// Instances from the families in turn (difficulty 1-2, feasible), solved by Clp/Cbc for the truth.
std::vector<synth_item> make_items(int n, bool python, uint64_t seed0) {
    std::vector<synth_item> out;
    const auto& fams = all_families();
    uint64_t seed = seed0;
    size_t f = 0;
    while ((int)out.size() < n) {
        const family& fam = *fams[f++ % fams.size()];
        optmodel::gen_request rq;
        rq.seed = seed++;
        rq.difficulty = 1 + (int)(seed % 2);
        instance in = generate(fam, rq);
        const solve_result s = solve_coin(in.m);
        if (s.status != solve_status::optimal) continue;
        synth_item it;
        it.id = fmt::format("{}-{}", python ? "py" : "lp", out.size());
        it.question = fmt::format("{} instance {} (synthetic, for timing)", fam.title, out.size());
        it.objective = s.objective;
        if (python) {
            const dialect d = out.size() % 2 == 0 ? dialect::pulp : dialect::gurobipy;
            it.completion = "<think>read data.json, build the model, solve</think>\n```python\n" +
                            render_code(fam, in, d, true) + "```\n";
            it.data = in.data.dump(2);
        } else {
            it.completion = "<think>write the model</think>\n```lp\n" + write_lp(in.m) + "```\n";
        }
        out.push_back(std::move(it));
    }
    return out;
}

void write_bench(const std::string& dir, const std::string& name, const std::vector<synth_item>& items) {
    std::string bench, comps;
    fs::create_directories(dir + "/data");
    for (const auto& it : items) {
        ojson r = {{"id", it.id}, {"en_question", it.question}, {"en_answer", it.objective}};
        if (!it.data.empty()) {
            const std::string p = "data/" + it.id + ".json";
            write_file_atomic(dir + "/" + p, it.data + "\n");
            r["data_path"] = p;
        }
        bench += r.dump() + "\n";
        comps += ojson{{"id", it.id}, {"completion", it.completion}}.dump() + "\n";
    }
    write_file_atomic(dir + "/" + name + ".jsonl", bench);
    write_file_atomic(dir + "/" + name + ".completions.jsonl", comps);
}

run_result run_one(const std::string& dir, const std::string& name, const bench_eval_options& opt,
                   const exec_config& ec) {
    run_options o;
    o.benches = {{dir + "/" + name + ".jsonl", name}};
    o.out_dir = dir + "/out-" + name;
    o.fresh = true;
    o.progress = false;
    o.workers = opt.workers;
    o.exec = ec;
    o.prompt = "trex";
    auto b = make_replay_backend(dir + "/" + name + ".completions.jsonl");
    return run_eval(o, *b);
}

}  // namespace

bench_eval_result run_bench_eval(const bench_eval_options& opt) {
    bench_eval_result r;
    std::string dir = opt.dir;
    bool temp = false;
    if (dir.empty()) {
        char tmpl[] = "/tmp/trex-bench-eval-XXXXXX";
        TREX_CHECK(::mkdtemp(tmpl) != nullptr, "cannot create a temporary directory");
        dir = tmpl;
        temp = true;
    }
    fs::create_directories(dir);
    exec_config ec = default_exec_config();
    if (!opt.trex_bin.empty()) ec.trex_bin = opt.trex_bin;
    if (!opt.python_exe.empty()) ec.python = opt.python_exe;
    r.sandbox = sandbox_guarantees().summary;
    r.python_exe = ec.python;
    r.workers = opt.workers > 0 ? opt.workers : (int)std::max(1u, std::thread::hardware_concurrency());
    if (opt.lp > 0) write_bench(dir, "lp", make_items(opt.lp, false, 1000));
    if (opt.python > 0) {
        TREX_CHECK(!ec.python.empty(), "bench eval: no Python with PuLP (scripts/setup.sh, or --python)");
        write_bench(dir, "python", make_items(opt.python, true, 5000));
    }
    r.load_before = load_average();
    if (opt.lp > 0) {
        const double c0 = cpu_seconds();
        const run_result lr = run_one(dir, "lp", opt, ec);
        r.lp_cpu_seconds = cpu_seconds() - c0;
        r.lp = (int)lr.samples;
        r.lp_seconds = lr.seconds;
        r.lp_correct = lr.summary.micro.correct;
    }
    if (opt.python > 0) {
        const double c0 = cpu_seconds();
        const run_result pr = run_one(dir, "python", opt, ec);
        r.python_cpu_seconds = cpu_seconds() - c0;
        r.python = (int)pr.samples;
        r.python_pulp = (r.python + 1) / 2;
        r.python_gurobipy = r.python / 2;
        r.python_seconds = pr.seconds;
        r.python_correct = pr.summary.micro.correct;
    }
    r.load_after = load_average();
    if (temp) {
        std::error_code e;
        fs::remove_all(dir, e);
    }
    return r;
}

std::string format_bench_eval(const bench_eval_result& r) {
    std::string o = "trex bench eval: judging replayed answers (trex eval run --backend replay)\n";
    o += fmt::format("  judge threads {}, sandbox: {}\n", r.workers, r.sandbox);
    if (r.lp > 0)
        o += fmt::format(
            "  LP answers (GLPK read, Clp/Cbc solve, sandboxed worker): {} in {:.2f} s = {:.1f} answers/s "
            "({} correct); CPU {:.1f} ms/answer\n",
            r.lp, r.lp_seconds, r.lp / r.lp_seconds, r.lp_correct, 1e3 * r.lp_cpu_seconds / r.lp);
    if (r.python > 0)
        o += fmt::format(
            "  Python answers (fresh sandbox each; {} PuLP, {} gurobipy shim): {} in {:.2f} s = {:.2f} "
            "answers/s ({} correct); CPU {:.1f} ms/answer\n",
            r.python_pulp, r.python_gurobipy, r.python, r.python_seconds, r.python / r.python_seconds, r.python_correct,
            1e3 * r.python_cpu_seconds / r.python);
    o += fmt::format("  load average {:.2f} before, {:.2f} after (2-core machine: numbers under load when > 1.5)\n",
                     r.load_before, r.load_after);
    return o;
}

nlohmann::json bench_eval_json(const bench_eval_result& r) {
    return {{"lp_answers", r.lp},
            {"lp_seconds", r.lp_seconds},
            {"lp_answers_per_s", r.lp ? r.lp / r.lp_seconds : 0.0},
            {"lp_correct", r.lp_correct},
            {"lp_cpu_seconds", r.lp_cpu_seconds},
            {"python_answers", r.python},
            {"python_seconds", r.python_seconds},
            {"python_answers_per_s", r.python ? r.python / r.python_seconds : 0.0},
            {"python_correct", r.python_correct},
            {"python_cpu_seconds", r.python_cpu_seconds},
            {"workers", r.workers},
            {"load_before", r.load_before},
            {"load_after", r.load_after},
            {"sandbox", r.sandbox}};
}

}  // namespace trex::bench
