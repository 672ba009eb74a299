#include "trex/optmodel/data_build/resources.hpp"

#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "trex/base/error.hpp"
#include "trex/optmodel/ir/format.hpp"
#include "trex/optmodel/ir/glpk_io.hpp"

namespace fs = std::filesystem;

namespace trex::optmodel {

namespace {

const char* glpk_examples = "/usr/share/doc/glpk-utils/examples";
const char* coin_samples = "/usr/share/coin/Data/Sample";
const char* glpk_doc = "/usr/share/doc/glpk-doc";
constexpr size_t max_bytes = 48 * 1024;

std::string read_text(const fs::path& p) {
    std::string s;
    if (p.extension() == ".gz") {
        gzFile g = gzopen(p.c_str(), "rb");
        if (!g) return "";
        char buf[65536];
        int n;
        while ((n = gzread(g, buf, sizeof buf)) > 0) s.append(buf, (size_t)n);
        gzclose(g);
        return s;
    }
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

bool is_text(const std::string& s) {
    for (unsigned char c : s)
        if (c == 0 || (c < 9)) return false;
    return true;
}

std::vector<fs::path> sorted_files(const fs::path& dir, const std::string& ext) {
    std::vector<fs::path> out;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return out;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.is_regular_file() && e.path().extension() == ext) out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

// Leading /* ... */ or # comment block of a MathProg file, as prose.
std::string leading_comment(const std::string& src) {
    std::string s = src;
    size_t p = s.find_first_not_of(" \t\r\n");
    if (p == std::string::npos) return "";
    if (s.compare(p, 2, "/*") == 0) {
        size_t e = s.find("*/", p);
        if (e == std::string::npos) return "";
        return s.substr(p + 2, e - p - 2);
    }
    std::string out;
    std::istringstream in(s);
    std::string line;
    while (std::getline(in, line)) {
        size_t q = line.find_first_not_of(" \t");
        if (q == std::string::npos || line[q] != '#') break;
        out += line.substr(q + 1) + "\n";
    }
    return out;
}

std::string trim_block(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    while (!s.empty() && (s.front() == '\n')) s.erase(0, 1);
    return s;
}

// Known optima from glpk-doc's netlib/miplib tables: name -> objective text.
std::map<std::string, std::string> known_optima() {
    std::map<std::string, std::string> out;
    for (const char* f : {"netlib.txt.gz", "miplib2.txt.gz", "miplib3.txt.gz"}) {
        std::istringstream in(read_text(fs::path(glpk_doc) / f));
        std::string line;
        while (std::getline(in, line)) {
            std::istringstream ls(line);
            std::vector<std::string> w;
            std::string t;
            while (ls >> t) w.push_back(t);
            for (size_t k = 1; k < w.size() && k < 5; k++)
                if ((w[k][0] == '+' || w[k][0] == '-') && w[k].find('e') != std::string::npos) {
                    try {
                        out[w[0]] = format_value(std::stod(w[k]), 10);
                    } catch (...) {
                    }
                    break;
                }
        }
    }
    return out;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> collected_resources() {
    std::vector<std::pair<std::string, std::string>> docs;
    // GLPK MathProg examples
    for (const auto& p : sorted_files(glpk_examples, ".mod")) {
        std::string src = read_text(p);
        if (src.empty() || src.size() > max_bytes || !is_text(src)) continue;
        const std::string name = p.stem().string();
        std::string comment = trim_block(leading_comment(src));
        std::string d = "# GLPK MathProg example: " + name + ".mod\n\n";
        d += "Source: Debian package glpk-utils, file " + p.string() + " (GLPK, GNU GPL v3 or later).\n\n";
        if (!comment.empty()) d += "## Description\n\n" + comment + "\n\n";
        d += "## Model (GNU MathProg)\n\n```mathprog\n" + trim_block(src) + "\n```\n";
        docs.push_back({"glpk-example-" + name, d});
    }
    // COIN-OR sample models
    const auto optima = known_optima();
    for (const auto& p : sorted_files(coin_samples, ".mps")) {
        std::string src = read_text(p);
        if (src.empty() || !is_text(src)) continue;
        const std::string name = p.stem().string();
        std::string stats;
        try {
            model m = read_mps_file(p.string());
            long ints = 0;
            for (const auto& v : m.vars) ints += v.type != var_type::continuous;
            stats = fmt::format("It has {} constraints, {} variables ({} integer) and {} nonzero coefficients; the "
                                "objective is {}d.",
                                m.cons.size(), m.vars.size(), ints, m.nonzeros(),
                                m.sense == obj_sense::minimize ? "minimize" : "maximize");
        } catch (const error&) {
            stats = "GLPK cannot read it as a linear program (it carries extensions such as quadratic or stochastic "
                    "sections).";
        }
        std::string d = "# COIN-OR sample model: " + name + "\n\n";
        d += "Source: Debian package coinor-libcoinutils-dev, file " + p.string() + " (COIN-OR, EPL).\n\n";
        d += "This is an optimization model in MPS format. " + stats + "\n";
        std::string key = name;
        std::transform(key.begin(), key.end(), key.begin(), ::tolower);
        if (optima.count(key))
            d += "Its known optimal objective value (glpk-doc's benchmark tables) is " + optima.at(key) + ".\n";
        d += "\n## MPS file" + std::string(src.size() > max_bytes ? " (first part)" : "") + "\n\n```\n" +
             trim_block(src.substr(0, max_bytes)) + "\n```\n";
        docs.push_back({"coin-sample-" + name, d});
    }
    // GLPK manual text
    for (const char* f : {"npp.txt.gz", "netlib.txt.gz", "miplib2.txt.gz", "miplib3.txt.gz"}) {
        const fs::path p = fs::path(glpk_doc) / f;
        std::string src = read_text(p);
        if (src.empty() || !is_text(src)) continue;
        std::string name = fs::path(f).stem().stem().string();
        std::string d = "# GLPK documentation: " + name + "\n\n";
        d += "Source: Debian package glpk-doc, file " + p.string() + " (GLPK manual text, GNU FDL/GPL).\n\n";
        d += std::string(name == "npp" ? "" : "Benchmark results of GLPK's solvers on a standard test set:\n\n") +
             "```\n" + trim_block(src.substr(0, 4 * max_bytes)) + "\n```\n";
        docs.push_back({"glpk-doc-" + name, d});
    }
    return docs;
}

}  // namespace trex::optmodel
