#include "trex/optmodel/ir/glpk_io.hpp"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "trex/base/error.hpp"
#include "trex/optmodel/ir/lp_dialect.hpp"
#include "trex/optmodel/ir/mps_quadratic.hpp"
#include "trex/optmodel/solvers/glpk_env.hpp"

namespace trex::optmodel {

namespace {

using detail::glpk_quiet;

// The most useful line of GLPK's log for an error in `path`: the last "path:line: ..." line, else the last line.
std::string glpk_error_line(const glpk_quiet& q, const std::string& path) {
    const std::string& log = q.log();
    std::string best;
    size_t b = 0;
    while (b < log.size()) {
        size_t e = log.find('\n', b);
        if (e == std::string::npos) e = log.size();
        std::string line = log.substr(b, e - b);
        if (line.rfind(path + ":", 0) == 0) best = line.substr(path.size() + 1);
        b = e + 1;
    }
    if (!best.empty()) {
        while (!best.empty() && best.front() == ' ') best.erase(0, 1);
        return "line " + best;  // GLPK writes "path:12: message"
    }
    std::string last = q.last_message();
    return last.empty() ? "unreadable" : last;
}

void check_readable(const std::string& path) {
    std::error_code ec;
    TREX_CHECK(std::filesystem::is_regular_file(path, ec), "{}: cannot read model file (no such file)", path);
    std::FILE* f = std::fopen(path.c_str(), "rb");
    TREX_CHECK(f != nullptr, "{}: cannot read model file", path);
    std::fclose(f);
}

std::string without_prefix(const std::string& s, const std::string& prefix) {
    return s.rfind(prefix, 0) == 0 ? "line " + s.substr(prefix.size()) : s;
}

std::string stem(const std::string& path) {
    return std::filesystem::path(path).stem().string();
}

// A private temporary file holding `text`, removed by the destructor.
struct temp_file {
    std::string path;
    temp_file(const std::string& text, const char* suffix) {
        const char* dir = std::getenv("TMPDIR");
        std::string tmpl = std::string(dir && *dir ? dir : "/tmp") + "/trex_model_XXXXXX" + suffix;
        std::vector<char> buf(tmpl.begin(), tmpl.end());
        buf.push_back('\0');
        const int fd = ::mkstemps(buf.data(), (int)std::strlen(suffix));
        TREX_CHECK(fd >= 0, "cannot create a temporary file in {}", dir && *dir ? dir : "/tmp");
        path = buf.data();
        size_t off = 0;
        while (off < text.size()) {
            ssize_t w = ::write(fd, text.data() + off, text.size() - off);
            if (w <= 0) {
                ::close(fd);
                ::unlink(path.c_str());
                throw_error(fmt::format("cannot write temporary file {}", path));
            }
            off += (size_t)w;
        }
        ::close(fd);
    }
    ~temp_file() { ::unlink(path.c_str()); }
};

// Replaces the temporary path in an error message by `what`.
std::string rename_in(std::string msg, const std::string& from, const std::string& to) {
    size_t p;
    while ((p = msg.find(from)) != std::string::npos) msg.replace(p, from.size(), to);
    return msg;
}

}  // namespace

model read_lp_file(const std::string& path) {
    check_readable(path);
    std::string dialect_error;
    {
        std::ifstream in(path, std::ios::binary);
        const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        try {
            model m = read_lp_dialect(text, path);
            m.name = stem(path);
            return m;
        } catch (const error& e) {
            dialect_error = e.what();
        }
    }
    glpk_quiet q;
    glp_prob* p = nullptr;
    int rc = 0;
    bool fatal = false;
    fatal = !detail::glpk_run([&] {
        p = glp_create_prob();
        rc = glp_read_lp(p, nullptr, path.c_str());
    });
    if (fatal) throw_error(fmt::format("{}: GLPK failed reading the LP file: {}", path, q.last_message()));
    if (rc != 0) {
        glp_delete_prob(p);
        throw_error(fmt::format("{}: not a valid CPLEX LP file: {} (read as Gurobi's LP dialect: {})", path,
                                glpk_error_line(q, path), without_prefix(dialect_error, path + ":")));
    }
    model m = detail::from_glp(p, stem(path));
    glp_delete_prob(p);
    return m;
}

namespace {

// GLPK 5.0's MPS reader lacks the OBJSENSE section (a free-MPS extension written by CPLEX, Gurobi, COIN and
// write_mps). Returns the sense it declares (minimize when absent) and, when present, the text with those lines
// turned into comment lines, so GLPK's line numbers still match the file.
bool strip_objsense(std::string& text, obj_sense* sense) {
    *sense = obj_sense::minimize;
    bool found = false;
    size_t b = 0;
    auto word_of = [](const std::string& line) {
        std::string w;
        for (char c : line)
            if (!std::isspace((unsigned char)c)) w += (char)std::toupper((unsigned char)c);
        return w;
    };
    while (b < text.size()) {
        size_t e = text.find('\n', b);
        if (e == std::string::npos) e = text.size();
        const std::string line = text.substr(b, e - b);
        if (line.rfind("OBJSENSE", 0) == 0) {
            found = true;
            std::string rest = word_of(line.substr(8));
            text[b] = '*';
            if (rest.empty() && e < text.size()) {  // sense on the next (indented) line
                size_t b2 = e + 1, e2 = text.find('\n', b2);
                if (e2 == std::string::npos) e2 = text.size();
                const std::string next = text.substr(b2, e2 - b2);
                if (!next.empty() && std::isspace((unsigned char)next[0])) {
                    rest = word_of(next);
                    text[b2] = '*';
                }
            }
            if (rest == "MAX" || rest == "MAXIMIZE") *sense = obj_sense::maximize;
        }
        b = e + 1;
    }
    return found;
}

}  // namespace

model read_mps_file(const std::string& path, mps_format format) {
    check_readable(path);
    std::string text;
    {
        std::ifstream in(path, std::ios::binary);
        text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    obj_sense sense;
    const bool has_sense = strip_objsense(text, &sense);
    const mps_quadratic quad = strip_mps_quadratic(text, path);
    if (has_sense || !quad.empty()) {
        temp_file f(text, ".mps");
        try {
            model m = read_mps_file(f.path, format);
            m.name = stem(path);
            if (has_sense) m.sense = sense;
            attach_mps_quadratic(m, quad, path);
            return m;
        } catch (const error& e) {
            throw error(rename_in(e.what(), f.path, path));
        }
    }
    glpk_quiet q;
    auto attempt = [&](int fmt_code, std::string* err) -> glp_prob* {
        glp_prob* p = nullptr;
        int rc = 0;
        bool fatal = false;
        fatal = !detail::glpk_run([&] {
            p = glp_create_prob();
            rc = glp_read_mps(p, fmt_code, nullptr, path.c_str());
        });
        if (fatal) {
            *err = q.last_message();
            return nullptr;
        }
        if (rc != 0) {
            *err = glpk_error_line(q, path);
            glp_delete_prob(p);
            return nullptr;
        }
        return p;
    };
    std::string err;
    glp_prob* p = nullptr;
    if (format == mps_format::free_format || format == mps_format::detect) p = attempt(GLP_MPS_FILE, &err);
    if (!p && (format == mps_format::fixed_format || format == mps_format::detect)) {
        std::string err2;
        p = attempt(GLP_MPS_DECK, &err2);
        if (!p && format == mps_format::fixed_format) err = err2;
    }
    if (!p) throw_error(fmt::format("{}: not a valid MPS file: {}", path, err));
    model m = detail::from_glp(p, stem(path));
    // An RHS entry on the objective row means constant = -rhs (CPLEX, Gurobi, COIN and write_mps); GLPK 5.0 reads
    // it as +rhs, so flip it back.
    m.obj_constant = -m.obj_constant;
    glp_delete_prob(p);
    return m;
}

model read_mathprog_file(const std::string& path, const std::string& data_path) {
    check_readable(path);
    if (!data_path.empty()) check_readable(data_path);
    glpk_quiet q;
    glp_prob* p = nullptr;
    glp_tran* tran = nullptr;
    int rc = 0;
    const char* stage = "";
    bool fatal = false;
    fatal = !detail::glpk_run([&] {
        tran = glp_mpl_alloc_wksp();
        stage = "model";
        rc = glp_mpl_read_model(tran, path.c_str(), data_path.empty() ? 0 : 1);
        if (rc == 0 && !data_path.empty()) {
            stage = "data";
            rc = glp_mpl_read_data(tran, data_path.c_str());
        }
        if (rc == 0) {
            stage = "generation";
            rc = glp_mpl_generate(tran, nullptr);
        }
        if (rc == 0) {
            p = glp_create_prob();
            glp_mpl_build_prob(tran, p);
        }
    });
    if (fatal) throw_error(fmt::format("{}: GLPK failed in the MathProg translator: {}", path, q.last_message()));
    if (rc != 0) {
        glp_mpl_free_wksp(tran);
        const std::string culprit = std::string(stage) == "data" ? data_path : path;
        throw_error(fmt::format("{}: MathProg {} error: {}", culprit, stage, glpk_error_line(q, culprit)));
    }
    model m = detail::from_glp(p, stem(path));
    glp_delete_prob(p);
    glp_mpl_free_wksp(tran);
    return m;
}

model read_lp_text(const std::string& text, const std::string& what) {
    temp_file f(text, ".lp");
    try {
        model m = read_lp_file(f.path);
        m.name = what;
        return m;
    } catch (const error& e) {
        throw error(rename_in(e.what(), f.path, what));
    }
}

model read_mps_text(const std::string& text, const std::string& what, mps_format format) {
    temp_file f(text, ".mps");
    try {
        model m = read_mps_file(f.path, format);
        m.name = what;
        return m;
    } catch (const error& e) {
        throw error(rename_in(e.what(), f.path, what));
    }
}

model read_mathprog_text(const std::string& text, const std::string& what) {
    temp_file f(text, ".mod");
    try {
        model m = read_mathprog_file(f.path);
        m.name = what;
        return m;
    } catch (const error& e) {
        throw error(rename_in(e.what(), f.path, what));
    }
}

}  // namespace trex::optmodel
