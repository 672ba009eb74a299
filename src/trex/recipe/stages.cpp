#include "trex/recipe/stages.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "trex/base/error.hpp"
#include "trex/base/files.hpp"
#include "trex/base/timer.hpp"

namespace trex::recipe {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {

std::string hex64(uint64_t h) {
    return fmt::format("{:016x}", h);
}

void hash_path(XXH64_state_t* st, const fs::path& root, const std::string& rel) {
    const fs::path p = root / rel;
    XXH64_update(st, rel.data(), rel.size() + 1);
    if (fs::is_regular_file(p)) {
        const std::string h = file_xxh64(p.string());
        XXH64_update(st, h.data(), h.size());
        return;
    }
    if (!fs::is_directory(p)) {
        XXH64_update(st, "missing", 7);
        return;
    }
    std::vector<std::string> entries;
    for (const auto& e : fs::recursive_directory_iterator(p))
        if (e.is_regular_file()) entries.push_back(fs::relative(e.path(), root).string());
    std::sort(entries.begin(), entries.end());
    for (const auto& e : entries) {
        const std::string h = file_xxh64((root / e).string());
        XXH64_update(st, e.data(), e.size() + 1);
        XXH64_update(st, h.data(), h.size());
    }
}

std::string state_path(const stage_context& ctx, const std::string& name) {
    return ctx.out_dir + "/state/" + name + ".json";
}

ojson read_state(const std::string& path) {
    if (!fs::exists(path)) return ojson();
    try {
        return ojson::parse(read_file(path));
    } catch (const std::exception&) {
        return ojson();  // a torn record counts as none: the stage runs again
    }
}

std::string input_hash(const stage& s, const std::map<std::string, std::string>& done_outputs) {
    std::string text = s.name + "\n" + s.definition + "\n";
    for (const auto& d : s.deps) {
        const auto it = done_outputs.find(d);
        TREX_CHECK(it != done_outputs.end(), "recipe stage '{}' reads '{}', which does not run before it", s.name, d);
        text += d + "=" + it->second + "\n";
    }
    return hex64(XXH64(text.data(), text.size(), 0));
}

bool has_outputs(const stage_context& ctx, const stage& s) {
    for (const auto& o : s.outputs)
        if (fs::exists(fs::path(ctx.out_dir) / o)) return true;
    return false;
}

// Removes what an interrupted run of the stage left (a fresh start).
void clear_outputs(const stage_context& ctx, const stage& s) {
    for (const auto& o : s.outputs) fs::remove_all(fs::path(ctx.out_dir) / o);
}

// The last lines of a log, for an error message.
std::string log_tail(const std::string& path, size_t lines) {
    std::string text;
    try {
        text = read_file(path);
    } catch (const std::exception&) {
        return "";
    }
    size_t pos = text.size();
    for (size_t k = 0; k <= lines && pos > 0; k++) {
        const size_t nl = text.rfind('\n', pos - 1);
        if (nl == std::string::npos) {
            pos = 0;
            break;
        }
        pos = nl;
        if (k == lines) pos++;
    }
    return text.substr(pos);
}

}  // namespace

std::string hash_outputs(const std::string& root, const std::vector<std::string>& rel_paths) {
    XXH64_state_t* st = XXH64_createState();
    XXH64_reset(st, 0);
    for (const auto& r : rel_paths) hash_path(st, root, r);
    const uint64_t h = XXH64_digest(st);
    XXH64_freeState(st);
    return hex64(h);
}

int run_trex(const stage_context& ctx, const std::string& what, const std::vector<std::string>& args,
             const std::string& log_path, const std::string& stdout_path, const std::vector<int>& ok_exits) {
    std::vector<std::string> argv_s = {"trex"};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    TREX_CHECK(fd >= 0, "{}: cannot open {}: {}", what, log_path, std::strerror(errno));
    std::string cmd = "$ trex";
    for (const auto& a : args) cmd += " " + a;
    cmd += "\n";
    (void)!::write(fd, cmd.data(), cmd.size());
    const std::string out_tmp = stdout_path.empty() ? "" : stdout_path + ".tmp";
    const int out_fd = out_tmp.empty() ? fd : ::open(out_tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    TREX_CHECK(out_fd >= 0, "{}: cannot open {}: {}", what, out_tmp, std::strerror(errno));
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // a killed recipe takes its stage with it
        if (::getppid() != parent) ::_exit(127);
        ::dup2(out_fd, 1);
        ::dup2(fd, 2);
        ::execv(ctx.trex.c_str(), argv.data());
        ::_exit(127);
    }
    ::close(fd);
    if (out_fd != fd) ::close(out_fd);
    TREX_CHECK(pid > 0, "{}: fork failed: {}", what, std::strerror(errno));
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0)
        TREX_CHECK(errno == EINTR, "{}: waitpid failed: {}", what, std::strerror(errno));
    if (WIFEXITED(status) && std::find(ok_exits.begin(), ok_exits.end(), WEXITSTATUS(status)) != ok_exits.end()) {
        if (!out_tmp.empty()) std::filesystem::rename(out_tmp, stdout_path);
        return WEXITSTATUS(status);
    }
    if (!out_tmp.empty()) std::filesystem::remove(out_tmp);
    const std::string how = WIFSIGNALED(status) ? fmt::format("killed by signal {}", WTERMSIG(status))
                                                : fmt::format("exit status {}", WEXITSTATUS(status));
    throw_error(fmt::format("{} failed ({}); the end of {}:\n{}", what, how, log_path, log_tail(log_path, 12)));
}

std::vector<stage_result> run_stages(const std::vector<stage>& stages, const stage_context& ctx,
                                     const std::function<void(const stage&, bool skipped)>& on_start) {
    fs::create_directories(ctx.out_dir + "/state");
    fs::create_directories(ctx.out_dir + "/logs");
    std::map<std::string, std::string> outputs;  // stage -> output hash
    std::vector<stage_result> results;
    for (const auto& s : stages) {
        const std::string in = input_hash(s, outputs);
        const ojson rec = read_state(state_path(ctx, s.name));
        const bool recorded = rec.is_object() && rec.value("input_hash", "") == in;
        if (recorded && hash_outputs(ctx.out_dir, s.outputs) == rec.value("output_hash", "")) {
            on_start(s, true);
            outputs[s.name] = rec["output_hash"].get<std::string>();
            results.push_back({s.name, true, rec.value("wall_s", 0.0)});
            continue;
        }
        fs::remove(state_path(ctx, s.name));
        stage_context c = ctx;
        c.interrupted = !rec.is_object() && has_outputs(ctx, s);
        if (!(c.interrupted && ctx.resume)) {
            clear_outputs(ctx, s);
            c.interrupted = false;
        }
        on_start(s, false);
        const double t0 = now_seconds();
        s.run(c);
        const double wall = now_seconds() - t0;
        const std::string out = hash_outputs(ctx.out_dir, s.outputs);
        const ojson done = {{"stage", s.name}, {"input_hash", in}, {"output_hash", out}, {"wall_s", wall}};
        write_file_atomic(state_path(ctx, s.name), done.dump(2) + "\n");
        outputs[s.name] = out;
        results.push_back({s.name, false, wall});
    }
    return results;
}

}  // namespace trex::recipe
