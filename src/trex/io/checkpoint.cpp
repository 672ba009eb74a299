#include "trex/io/checkpoint.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "trex/base/error.hpp"
#include "trex/base/files.hpp"
#include "trex/io/safetensors.hpp"

namespace fs = std::filesystem;

namespace trex {

namespace {

constexpr const char* kFormat = "trex-checkpoint";
constexpr int kVersion = 1;

std::string step_dir_name(int64_t step) { return fmt::format("step-{:08d}", step); }

bool is_step_dir(const std::string& name) {
    if (name.size() != 13 || name.rfind("step-", 0) != 0) return false;
    return std::all_of(name.begin() + 5, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::string save_checkpoint(const std::string& run_dir, const param_store& params, const optimizer* opt,
                            const checkpoint_state& state, int keep_last) {
    if (!opt) return save_checkpoint_state(run_dir, params, nullptr, state, keep_last);
    auto& o = const_cast<optimizer&>(*opt);
    const optim_state_ref ref{opt->config().kind, o.state_m().data(), o.state_v().data()};
    return save_checkpoint_state(run_dir, params, &ref, state, keep_last);
}

std::string save_checkpoint_state(const std::string& run_dir, const param_store& params, const optim_state_ref* opt,
                            const checkpoint_state& state, int keep_last) {
    const fs::path root = fs::path(run_dir) / "checkpoints";
    std::error_code ec;
    fs::create_directories(root, ec);
    TREX_CHECK(!ec, "{}: cannot create the checkpoint directory: {}", root.string(), ec.message());
    const fs::path final_dir = root / step_dir_name(state.step);
    staged_dir staged(final_dir.string());  // the checkpoint of the same step from an earlier attempt is replaced
    const fs::path tmp(staged.path());
    {
        {
            safetensors_writer w;
            for (size_t i = 0; i < params.specs.size(); i++) {
                const tensor_spec& s = params.specs[i];
                if (s.role == tensor_role::hash_table)
                    w.add_i32(s.name, s.shape, params.tables.data() + params.offset[i]);
                else
                    w.add_f32(s.name, s.shape, params.weights.data() + params.offset[i]);
            }
            w.set_metadata("format", kFormat);
            w.write((tmp / "model.safetensors").string());
        }
        if (opt) {
            safetensors_writer w;
            for (size_t i = 0; i < params.specs.size(); i++) {
                const tensor_spec& s = params.specs[i];
                if (s.role != tensor_role::weight) continue;
                w.add_f32("m." + s.name, s.shape, opt->m + params.offset[i]);
                w.add_f32("v." + s.name, s.shape, opt->v + params.offset[i]);
            }
            w.set_metadata("kind", opt->kind);
            w.write((tmp / "optim.safetensors").string());
        }
        write_file_atomic((tmp / "config.json").string(), config_to_json(params.cfg).dump(2));
        nlohmann::json st;
        st["step"] = state.step;
        st["adam_steps"] = state.adam_steps;
        st["data"] = state.data;
        st["run"] = state.run;
        write_file_atomic((tmp / "state.json").string(), st.dump(1));
        nlohmann::json man;
        man["format"] = kFormat;
        man["version"] = kVersion;
        man["step"] = state.step;
        for (const char* f : {"model.safetensors", "optim.safetensors", "state.json", "config.json"}) {
            const fs::path p = tmp / f;
            if (!fs::exists(p)) continue;
            man["files"][f] = {{"bytes", file_size_or_throw(p.string())}, {"xxh64", file_xxh64(p.string())}};
        }
        write_file_atomic((tmp / "manifest.json").string(), man.dump(1));
        staged.publish();
    }
    // keep the newest keep_last
    std::vector<std::string> steps;
    for (const auto& e : fs::directory_iterator(root))
        if (e.is_directory() && is_step_dir(e.path().filename().string())) steps.push_back(e.path().string());
    std::sort(steps.begin(), steps.end());
    const int keep = std::max(keep_last, 1);
    for (int i = 0; i + keep < (int)steps.size(); i++) fs::remove_all(steps[i], ec);
    return final_dir.string();
}

std::string verify_checkpoint(const std::string& dir) {
    try {
        const auto man = nlohmann::json::parse(read_file((fs::path(dir) / "manifest.json").string()));
        if (man.value("format", "") != kFormat) return "manifest.json: not a trex checkpoint";
        if (man.value("version", 0) != kVersion) return fmt::format("manifest.json: unsupported version {}", man.value("version", 0));
        if (!man.contains("files") || !man["files"].contains("model.safetensors") || !man["files"].contains("state.json"))
            return "manifest.json: model.safetensors or state.json missing";
        for (const auto& [name, info] : man["files"].items()) {
            const std::string p = (fs::path(dir) / name).string();
            if (!fs::exists(p)) return name + ": missing";
            if (file_size_or_throw(p) != info.at("bytes").get<uint64_t>())
                return fmt::format("{}: size {} differs from the manifest's {}", name, file_size_or_throw(p),
                                   info.at("bytes").get<uint64_t>());
            if (file_xxh64(p) != info.at("xxh64").get<std::string>()) return name + ": checksum mismatch";
        }
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

checkpoint_state load_checkpoint(const std::string& dir, param_store& params, optimizer* opt) {
    if (!opt) return load_checkpoint_state(dir, params, nullptr);
    const optim_state_ref ref{opt->config().kind, opt->state_m().data(), opt->state_v().data()};
    checkpoint_state cs = load_checkpoint_state(dir, params, &ref);
    opt->set_adam_steps(cs.adam_steps);
    return cs;
}

checkpoint_state load_checkpoint_state(const std::string& dir, param_store& params, const optim_state_ref* opt) {
    const std::string bad = verify_checkpoint(dir);
    TREX_CHECK(bad.empty(), "checkpoint {}: {}", dir, bad);
    {
        safetensors_file f((fs::path(dir) / "model.safetensors").string());
        for (size_t i = 0; i < params.specs.size(); i++) {
            const tensor_spec& s = params.specs[i];
            TREX_CHECK(f.has(s.name), "checkpoint {}: tensor '{}' is missing", dir, s.name);
            TREX_CHECK(f.tensor(s.name).shape == s.shape, "checkpoint {}: tensor '{}' has the wrong shape", dir,
                       s.name);
            if (s.role == tensor_role::hash_table) {
                const auto v = f.to_i64(s.name);
                check_table_values(params, (int)i, v, f.path());
                std::copy(v.begin(), v.end(), params.tables.data() + params.offset[i]);  // in range, so fits int32
            } else {
                const auto v = f.to_f32(s.name);
                std::copy(v.begin(), v.end(), params.weights.data() + params.offset[i]);
            }
        }
        TREX_CHECK(f.tensors().size() == params.specs.size(),
                   "checkpoint {}: model.safetensors holds {} tensors, the model has {}", dir, f.tensors().size(),
                   params.specs.size());
    }
    const auto st = nlohmann::json::parse(read_file((fs::path(dir) / "state.json").string()));
    checkpoint_state cs;
    cs.step = st.at("step").get<int64_t>();
    cs.adam_steps = st.at("adam_steps").get<int64_t>();
    cs.data = st.value("data", nlohmann::json());
    cs.run = st.value("run", nlohmann::json());
    if (opt) {
        const fs::path op = fs::path(dir) / "optim.safetensors";
        TREX_CHECK(fs::exists(op), "checkpoint {}: optim.safetensors is missing", dir);
        safetensors_file f(op.string());
        TREX_CHECK(f.metadata().count("kind") && f.metadata().at("kind") == opt->kind,
                   "checkpoint {}: optimizer state is for '{}', the run uses '{}'", dir,
                   f.metadata().count("kind") ? f.metadata().at("kind") : "?", opt->kind);
        for (size_t i = 0; i < params.specs.size(); i++) {
            const tensor_spec& s = params.specs[i];
            if (s.role != tensor_role::weight) continue;
            for (const char* which : {"m.", "v."}) {
                const std::string key = which + s.name;
                TREX_CHECK(f.has(key), "checkpoint {}: optimizer tensor '{}' is missing", dir, key);
                TREX_CHECK(f.tensor(key).shape == s.shape, "checkpoint {}: optimizer tensor '{}' has the wrong shape",
                           dir, key);
                const auto v = f.to_f32(key);
                float* dst = (which[0] == 'm' ? opt->m : opt->v) + params.offset[i];
                std::copy(v.begin(), v.end(), dst);
            }
        }
    }
    return cs;
}

std::string find_latest_checkpoint(const std::string& run_dir, std::vector<std::string>* skipped) {
    const fs::path root = fs::path(run_dir) / "checkpoints";
    if (!fs::exists(root)) return "";
    std::vector<std::string> steps;
    for (const auto& e : fs::directory_iterator(root)) {
        const std::string name = e.path().filename().string();
        if (e.is_directory() && is_step_dir(name)) steps.push_back(e.path().string());
        else if (skipped && name.find(".tmp-") != std::string::npos)
            skipped->push_back(fmt::format("{}: partial checkpoint (interrupted write), ignored", e.path().string()));
    }
    std::sort(steps.rbegin(), steps.rend());
    for (const auto& s : steps) {
        const std::string bad = verify_checkpoint(s);
        if (bad.empty()) return s;
        if (skipped) skipped->push_back(fmt::format("{}: {}, skipped", s, bad));
    }
    return "";
}

}  // namespace trex
