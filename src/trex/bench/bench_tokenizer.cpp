#include "trex/bench/bench_tokenizer.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "trex/base/error.hpp"
#include "trex/base/timer.hpp"
#include "trex/bench/peer_process.hpp"
#include "trex/tokenizer/paths.hpp"
#include "trex/tokenizer/tokenizer.hpp"

namespace trex::bench {

using namespace trex::tok;

namespace {

double load_average() {
    double l = 0;
    if (FILE* f = std::fopen("/proc/loadavg", "r")) {
        if (std::fscanf(f, "%lf", &l) != 1) l = 0;
        std::fclose(f);
    }
    return l;
}

// CPU seconds of this process (all threads).
double cpu_seconds() {
    rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + (double)u.ru_stime.tv_sec +
           u.ru_stime.tv_usec * 1e-6;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

nlohmann::json run_peer(const std::string& python, const std::string& docs, const std::string& tokenizer, int threads,
                        int repeats) {
    const std::string script = source_dir() + "/tests/reference/tokenizer_peer_bench.py";
    const std::string env = threads == 1 ? "RAYON_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false"
                                         : fmt::format("RAYON_NUM_THREADS={} TOKENIZERS_PARALLELISM=true", threads);
    const std::string cmd = fmt::format("env {} '{}' '{}' '{}' --tokenizer '{}' --threads {} --repeats {}", env, python,
                                        script, docs, tokenizer, threads, repeats);
    const peer_output p = run_peer_command(cmd, docs + ".stderr", 400);
    TREX_CHECK(p.status == 0, "bench tokenizer: the HF tokenizers peer failed (exit status {}): {}", p.status, p.err);
    try {
        return nlohmann::json::parse(p.out);
    } catch (const std::exception& e) {
        throw error(fmt::format("bench tokenizer: cannot parse the peer's output '{}': {}", p.out, e.what()));
    }
}

}  // namespace

bench_tokenizer_result run_bench_tokenizer(const bench_tokenizer_options& opt) {
    bench_tokenizer_result r;
    const std::string src = source_dir();
    const std::string python = opt.python.empty() ? src + "/.venv/bin/python" : opt.python;
    r.tokenizer = opt.tokenizer.empty() ? default_tokenizer_path() : opt.tokenizer;
    TREX_CHECK(std::filesystem::exists(r.tokenizer),
               "bench tokenizer: {} absent (run scripts/setup.sh --with-tokenizers, or pass --tokenizer)", r.tokenizer);
    r.corpus = opt.corpus.empty() ? src + "/data/bench/tokenizer_corpus.txt" : opt.corpus;
    if (!std::filesystem::exists(r.corpus)) {
        TREX_CHECK(opt.corpus.empty(), "bench tokenizer: corpus {} not found", r.corpus);
        TREX_CHECK(std::filesystem::exists(python),
                   "bench tokenizer: no corpus at {} and no {} to generate it (scripts/setup.sh --with-tokenizers, "
                   "or pass --corpus)",
                   r.corpus, python);
        std::filesystem::create_directories(std::filesystem::path(r.corpus).parent_path());
        const std::string cmd = fmt::format(
            "'{}' '{}/tests/reference/tokenizer_corpus.py' --out '{}' --mb {} --valid-only --tokenizer '{}' >&2",
            python, src, r.corpus, opt.corpus_mb, r.tokenizer);
        TREX_CHECK(std::system(cmd.c_str()) == 0, "bench tokenizer: generating the corpus failed: {}", cmd);
    }
    std::string text;
    {
        std::ifstream in(r.corpus, std::ios::binary);
        TREX_CHECK(in.good(), "{}: cannot read", r.corpus);
        std::stringstream ss;
        ss << in.rdbuf();
        text = ss.str();
    }
    TREX_CHECK(!text.empty(), "{}: empty corpus", r.corpus);
    std::vector<std::string_view> docs;
    for (size_t s = 0; s < text.size();) {
        size_t e = std::min(text.size(), s + 16384);
        const size_t nl = text.find('\n', e);
        e = nl == std::string::npos ? text.size() : nl + 1;
        docs.emplace_back(text.data() + s, e - s);
        s = e;
    }
    r.bytes = text.size();
    r.documents = docs.size();
    r.load_average = load_average();

    const double t0 = now_seconds();
    const tokenizer t = tokenizer::from_file(r.tokenizer);
    r.load_seconds = now_seconds() - t0;
    const double mb = (double)r.bytes / 1e6;

    // trex: a first (cold-cache) pass on one thread (this one) and one on two threads, then timed passes that
    // alternate one and two threads (so both see the same machine state); median and best of the timed passes.
    std::vector<int32_t> ids;
    std::vector<double> t1, t2, cpu2;
    for (int pass = 0; pass <= opt.repeats; pass++) {
        size_t tokens = 0;
        double a = now_seconds();
        for (auto d : docs) {
            ids.clear();
            t.encode(d, ids, false);
            tokens += ids.size();
        }
        t1.push_back(now_seconds() - a);
        r.tokens = tokens;
        a = now_seconds();
        const double c = cpu_seconds();
        const auto out = t.encode_batch(docs, 2, false);
        t2.push_back(now_seconds() - a);
        cpu2.push_back((cpu_seconds() - c) / t2.back());
    }
    r.mb_s_1_first = mb / t1[0];
    t1.erase(t1.begin());
    t2.erase(t2.begin());
    cpu2.erase(cpu2.begin());
    r.cpu_per_wall_2 = median(cpu2);
    r.mb_s_1 = mb / median(t1);
    r.mb_s_2 = mb / median(t2);
    r.mb_s_1_best = mb / *std::min_element(t1.begin(), t1.end());
    r.mb_s_2_best = mb / *std::min_element(t2.begin(), t2.end());

    if (opt.peer) {
        TREX_CHECK(std::filesystem::exists(python),
                   "bench tokenizer: no Python at {} for the HF peer (scripts/setup.sh --with-tokenizers, --python, "
                   "or --no-peer)",
                   python);
        const std::string tmp =
            fmt::format("{}/trex-tokbench-{}.jsonl", std::filesystem::temp_directory_path().string(), (long)getpid());
        {
            std::ofstream out(tmp, std::ios::binary);
            for (auto d : docs) out << nlohmann::json({{"text", std::string(d)}}).dump() << '\n';
            TREX_CHECK(out.good(), "{}: write failed", tmp);
        }
        nlohmann::json p1, p2;
        try {
            p1 = run_peer(python, tmp, r.tokenizer, 1, opt.repeats);
            p2 = run_peer(python, tmp, r.tokenizer, 2, opt.repeats);
        } catch (...) {
            std::filesystem::remove(tmp);
            throw;
        }
        std::filesystem::remove(tmp);
        r.has_peer = true;
        r.peer_mb_s_1 = p1.at("mb_per_s").get<double>();
        r.peer_mb_s_1_first = p1.at("mb_per_s_first").get<double>();
        r.peer_mb_s_2 = p2.at("mb_per_s").get<double>();
        r.peer_mb_s_1_best = p1.at("mb_per_s_best").get<double>();
        r.peer_mb_s_2_best = p2.at("mb_per_s_best").get<double>();
        r.peer_tokens = p1.at("tokens").get<size_t>();
        r.peer_version = p1.value("version", std::string("?")) + " " + p1.value("method", std::string("?"));
    }
    return r;
}

std::string format_bench_tokenizer(const bench_tokenizer_result& r) {
    std::string s;
    s += fmt::format("trex bench tokenizer: {} | corpus {} ({:.2f} MB, {} documents, {} tokens)\n", r.tokenizer,
                     r.corpus, r.bytes / 1e6, r.documents, r.tokens);
    if (r.load_average > 1.5)
        s += fmt::format(
            "  WARNING         load average {:.2f} > 1.5: other work shares the cores, numbers are "
            "unreliable\n",
            r.load_average);
    s += fmt::format("  load            tokenizer.json parsed in {:.3f} s\n", r.load_seconds);
    s += fmt::format("  trex  1 thread  {:8.2f} MB/s   (best {:.2f}; first pass, cold word cache: {:.2f} MB/s)\n",
                     r.mb_s_1, r.mb_s_1_best, r.mb_s_1_first);
    s += fmt::format(
        "  trex  2 threads {:8.2f} MB/s   (best {:.2f}; {:.2f}x the 1-thread rate, best/best {:.2f}x; CPU time / wall "
        "time {:.2f})\n",
        r.mb_s_2, r.mb_s_2_best, r.mb_s_2 / r.mb_s_1, r.mb_s_2_best / r.mb_s_1_best, r.cpu_per_wall_2);
    if (r.has_peer) {
        s += fmt::format(
            "  HF    1 thread  {:8.2f} MB/s   (best {:.2f}; first pass: {:.2f} MB/s) tokenizers {}, "
            "RAYON_NUM_THREADS=1\n",
            r.peer_mb_s_1, r.peer_mb_s_1_best, r.peer_mb_s_1_first, r.peer_version);
        s += fmt::format("  HF    2 threads {:8.2f} MB/s   (best {:.2f}; RAYON_NUM_THREADS=2)\n", r.peer_mb_s_2,
                         r.peer_mb_s_2_best);
        s += fmt::format(
            "  ratio           {:.2f}x HF single-threaded (best/best {:.2f}x, first pass {:.2f}x); {:.2f}x HF with 2 "
            "threads\n",
            r.mb_s_1 / r.peer_mb_s_1, r.mb_s_1_best / r.peer_mb_s_1_best, r.mb_s_1_first / r.peer_mb_s_1_first,
            r.mb_s_2 / r.peer_mb_s_2);
        s += fmt::format("  tokens          trex {} / HF {} ({})\n", r.tokens, r.peer_tokens,
                         r.tokens == r.peer_tokens ? "equal" : "DIFFERENT");
    }
    return s;
}

nlohmann::json bench_tokenizer_json(const bench_tokenizer_result& r) {
    nlohmann::json j = {{"tokenizer", r.tokenizer},
                        {"corpus", r.corpus},
                        {"bytes", r.bytes},
                        {"documents", r.documents},
                        {"tokens", r.tokens},
                        {"load_seconds", r.load_seconds},
                        {"load_average", r.load_average},
                        {"trex_mb_per_s_1thread", r.mb_s_1},
                        {"trex_mb_per_s_1thread_first_pass", r.mb_s_1_first},
                        {"trex_mb_per_s_2threads", r.mb_s_2},
                        {"trex_mb_per_s_1thread_best", r.mb_s_1_best},
                        {"trex_mb_per_s_2threads_best", r.mb_s_2_best},
                        {"trex_2threads_cpu_per_wall", r.cpu_per_wall_2},
                        {"scaling_2threads", r.mb_s_2 / r.mb_s_1}};
    if (r.has_peer) {
        j["hf_mb_per_s_1thread"] = r.peer_mb_s_1;
        j["hf_mb_per_s_1thread_first_pass"] = r.peer_mb_s_1_first;
        j["hf_mb_per_s_2threads"] = r.peer_mb_s_2;
        j["hf_mb_per_s_1thread_best"] = r.peer_mb_s_1_best;
        j["hf_mb_per_s_2threads_best"] = r.peer_mb_s_2_best;
        j["hf_tokens"] = r.peer_tokens;
        j["hf_version"] = r.peer_version;
        j["ratio_1thread"] = r.mb_s_1 / r.peer_mb_s_1;
        j["ratio_2threads"] = r.mb_s_2 / r.peer_mb_s_2;
    }
    return j;
}

}  // namespace trex::bench
