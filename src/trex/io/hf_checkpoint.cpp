#include "trex/io/hf_checkpoint.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "trex/base/error.hpp"
#include "trex/base/files.hpp"
#include "trex/io/codecs.hpp"
#include "trex/io/safetensors.hpp"

namespace trex {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char* kIndexName = "model.safetensors.index.json";
constexpr const char* kSingleName = "model.safetensors";

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool starts_with(const std::string& s, const std::string& prefix) {
    return s.compare(0, prefix.size(), prefix) == 0;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// ------------------------------------------------------------------------------------------------ layout (import)

struct layout {
    std::string dir;
    std::string index_path;                           // empty: a single model.safetensors
    std::vector<std::string> shards;                  // file names, sorted
    std::unordered_map<std::string, int> weight_map;  // tensor → shard (indexed layouts)
};

std::string one_line(std::string msg) {
    std::replace(msg.begin(), msg.end(), '\n', ' ');
    return msg;
}

layout read_layout(const std::string& dir) {
    layout L;
    L.dir = dir;
    std::error_code ec;
    TREX_CHECK(fs::is_directory(dir, ec), "{}: not a checkpoint directory (does not exist or is not a directory)", dir);
    const fs::path index = fs::path(dir) / kIndexName;
    if (fs::exists(index, ec)) {
        L.index_path = index.string();
        json j;
        {
            std::ifstream in(index);
            TREX_CHECK(in.good(), "{}: cannot open", L.index_path);
            try {
                j = json::parse(in);
            } catch (const json::exception& e) {  // parse_error, or out_of_range for a number such as 1e999
                std::string msg = e.what();
                auto pos = msg.find("] ");
                if (pos != std::string::npos) msg = msg.substr(pos + 2);
                throw_error(one_line(fmt::format("{}: bad JSON: {}", L.index_path, msg)));
            }
        }
        TREX_CHECK(j.is_object(), "{}: expected a JSON object", L.index_path);
        auto wm = j.find("weight_map");
        TREX_CHECK(wm != j.end() && wm->is_object(), "{}: missing or non-object 'weight_map'", L.index_path);
        if (auto md = j.find("metadata"); md != j.end()) {
            TREX_CHECK(md->is_object(), "{}: 'metadata' must be an object", L.index_path);
            if (auto ts = md->find("total_size"); ts != md->end())
                TREX_CHECK(ts->is_number_integer() && ts->get<int64_t>() >= 0,
                           "{}: metadata.total_size must be an integer >= 0", L.index_path);
        }
        std::map<std::string, int> shard_ids;
        for (auto it = wm->begin(); it != wm->end(); ++it)
            TREX_CHECK(it.value().is_string(), "{}: weight_map['{}'] must be a file name string", L.index_path,
                       it.key());
        for (auto it = wm->begin(); it != wm->end(); ++it) shard_ids[it.value().get<std::string>()] = 0;
        for (auto& [name, id] : shard_ids) {
            TREX_CHECK(!name.empty() && name.find('/') == std::string::npos && name != "." && name != "..",
                       "{}: shard name '{}' is not a plain file name", L.index_path, name);
            id = (int)L.shards.size();
            L.shards.push_back(name);
        }
        for (auto it = wm->begin(); it != wm->end(); ++it)
            L.weight_map[it.key()] = shard_ids[it.value().get<std::string>()];
        TREX_CHECK(!L.shards.empty(), "{}: weight_map is empty", L.index_path);
        for (const auto& [name, id] : L.weight_map) {
            const fs::path p = fs::path(dir) / L.shards[id];
            TREX_CHECK(fs::is_regular_file(p, ec), "{}: tensor '{}' maps to shard '{}', which does not exist",
                       L.index_path, name, L.shards[id]);
        }
    } else if (fs::exists(fs::path(dir) / kSingleName, ec)) {
        L.shards.push_back(kSingleName);
    } else {
        throw_error(fmt::format("{}: no {} or {} (not an HF checkpoint directory)", dir, kIndexName, kSingleName));
    }
    return L;
}

// ------------------------------------------------------------------------------------------------ import plan

enum class enc_kind { plain, fp8, fp4, table };

struct located {
    int file = -1;
    const st_tensor* t = nullptr;
};

struct load_item {
    int spec = -1;
    enc_kind kind = enc_kind::plain;
    located w, scale;
};

bool is_float_plain(st_dtype d) {
    return d == st_dtype::f32 || d == st_dtype::bf16 || d == st_dtype::f16;
}

// Known-ignorable extra tensors: HF-style duplicates of the shared embedding/head inside the MTP block.
bool ignorable_mtp_duplicate(const std::string& name) {
    if (!starts_with(name, "mtp.")) return false;
    return name.find("emb") != std::string::npos || name.find("head") != std::string::npos;
}

void decode_plain(const safetensors_file& f, const st_tensor& t, float* out) {
    const auto b = f.bytes(t.name);
    const int64_t n = t.numel();
    switch (t.dtype) {
        case st_dtype::f32:
            if (n) std::memcpy(out, b.data(), (size_t)n * 4);
            break;
        case st_dtype::bf16:
            bf16_to_f32_array(b.data(), n, out);
            break;
        case st_dtype::f16:
            for (int64_t i = 0; i < n; i++) {
                uint16_t h;
                std::memcpy(&h, b.data() + 2 * i, 2);
                out[i] = f16_to_f32(h);
            }
            break;
        default:
            TREX_ASSERT(false);
    }
}

// Scale tensor as (e8m0 bytes, f32 copy): exactly one is used.
struct scale_view {
    const uint8_t* e8m0 = nullptr;
    std::vector<float> f32;
    const float* f32_ptr() const { return e8m0 ? nullptr : f32.data(); }
};

scale_view view_scale(const std::vector<safetensors_file>& files, const located& s) {
    scale_view v;
    const auto b = files[s.file].bytes(s.t->name);
    if (s.t->dtype == st_dtype::f8_e8m0) {
        v.e8m0 = b.data();
    } else {
        v.f32.resize((size_t)s.t->numel());
        if (!v.f32.empty()) std::memcpy(v.f32.data(), b.data(), v.f32.size() * 4);
    }
    return v;
}

// A NaN or infinite scale is named as itself (its weight's block would otherwise be reported as NaN).
void check_finite_scale(const std::vector<safetensors_file>& files, const located& s, const scale_view& v) {
    if (!v.e8m0) {
        check_finite_values(s.t->name, s.t->shape, v.f32.data(), files[s.file].path());
        return;
    }
    std::vector<float> decoded((size_t)s.t->numel());
    for (size_t k = 0; k < decoded.size(); k++) decoded[k] = ue8m0_to_f32(v.e8m0[k]);
    check_finite_values(s.t->name, s.t->shape, decoded.data(), files[s.file].path());
}

// config.json, when present, must describe the same tensors
void check_config_matches(const std::string& dir, const std::vector<tensor_spec>& specs, bool store_has_mtp) {
    std::error_code ec;
    if (!fs::is_regular_file(fs::path(dir) / "config.json", ec)) return;
    const std::string cpath = (fs::path(dir) / "config.json").string();
    const model_config fc = load_config(cpath);
    const auto inv = build_inventory(fc, store_has_mtp);
    for (size_t i = 0; i < std::max(inv.size(), specs.size()); i++) {
        const tensor_spec* a = i < inv.size() ? &inv[i] : nullptr;
        const tensor_spec* b = i < specs.size() ? &specs[i] : nullptr;
        if (a && b && a->name == b->name && a->shape == b->shape) continue;
        if (!a)
            throw_error(fmt::format("{}: describes a different model (it has no tensor '{}' {})", cpath, b->name,
                                    st_shape_str(b->shape)));
        if (!b)
            throw_error(fmt::format("{}: describes a different model (tensor '{}' {} is not in the model)", cpath,
                                    a->name, st_shape_str(a->shape)));
        throw_error(fmt::format("{}: describes a different model (tensor '{}' {} where the model has '{}' {})", cpath,
                                a->name, st_shape_str(a->shape), b->name, st_shape_str(b->shape)));
    }
}

// open (and validate) every shard; locate every tensor (each in one shard: the index's, when there is an index)
void open_shards(const std::string& dir, const layout& L, std::vector<safetensors_file>& files,
                 std::unordered_map<std::string, located>& where) {
    files.reserve(L.shards.size());
    for (size_t k = 0; k < L.shards.size(); k++) {
        files.emplace_back((fs::path(dir) / L.shards[k]).string());
        const safetensors_file& f = files.back();
        for (const auto& t : f.tensors()) {
            if (!L.index_path.empty()) {
                auto it = L.weight_map.find(t.name);
                TREX_CHECK(it != L.weight_map.end(), "{}: tensor '{}' is not listed in {}", f.path(), t.name,
                           kIndexName);
                TREX_CHECK(it->second == (int)k, "{}: tensor '{}' is listed under shard '{}' in {}", f.path(), t.name,
                           L.shards[it->second], kIndexName);
            }
            auto [it, fresh] = where.emplace(t.name, located{(int)k, &t});
            TREX_CHECK(fresh, "{}: tensor '{}' is also in {}", f.path(), t.name, files[it->second.file].path());
        }
    }
    for (const auto& [name, k] : L.weight_map)
        TREX_CHECK(where.count(name), "{}: tensor '{}' is listed for shard '{}' but that shard does not hold it",
                   L.index_path, name, L.shards[k]);
}

// transformers' internal names (model.embed_tokens, lm_head) are refused: the reader expects the release layout
void check_release_naming(const std::vector<safetensors_file>& files,
                          const std::unordered_map<std::string, located>& where) {
    for (const char* hf_name : {"model.embed_tokens.weight", "lm_head.weight"})
        TREX_CHECK(!where.count(hf_name) || where.count("embed.weight"),
                   "{}: tensor '{}' uses transformers' internal naming; this reader expects the release layout "
                   "(spec 4.4: 'embed.weight', 'layers.{{i}}.attn.wq_a.weight', ...)",
                   files[where.at(hf_name).file].path(), hf_name);
}

[[noreturn]] void tensor_error(const std::string& path, const std::string& name, const std::string& msg) {
    throw_error(fmt::format("{}: tensor '{}': {}", path, name, msg));
}

// A weight's scale ('<base>.scale' or '<base>.weight_scale_inv'), named in scale_name and marked used; two scales
// are an error.
std::optional<located> find_scale(const tensor_spec& s, const std::unordered_map<std::string, located>& where,
                                  const std::string& path, std::string& scale_name,
                                  std::unordered_set<std::string>& used) {
    std::optional<located> scale;
    if (ends_with(s.name, ".weight")) {
        const std::string base = s.name.substr(0, s.name.size() - 7);
        for (const char* suffix : {".scale", ".weight_scale_inv"}) {
            auto sit = where.find(base + suffix);
            if (sit == where.end()) continue;
            if (scale)
                throw_error(fmt::format("{}: tensor '{}' has two scales, '{}' and '{}'", path, s.name, scale_name,
                                        base + suffix));
            scale = sit->second;
            scale_name = base + suffix;
            used.insert(scale_name);
        }
    }
    return scale;
}

// The encoding of the stored tensor t of spec s: a hash table, plain floats, FP8 or packed FP4 (where the spec
// accepts them), with the model's shape; anything else is an error.
enc_kind classify_encoding(const tensor_spec& s, const st_tensor& t, bool has_scale, const std::string& scale_name,
                           const std::string& path) {
    auto bad = [&](const std::string& msg) { tensor_error(path, s.name, msg); };
    const bool fp8_ok = s.format == release_format::fp8_block || s.format == release_format::fp4_1x32 || s.expert >= 0;
    const bool fp4_ok = s.format == release_format::fp4_1x32 || s.expert >= 0;
    if (s.role == tensor_role::hash_table) {
        if (t.dtype != st_dtype::i64 && t.dtype != st_dtype::i32)
            bad(fmt::format("dtype {} is not accepted (expected I64 or I32)", st_dtype_name(t.dtype)));
        if (t.shape != s.shape)
            bad(fmt::format("shape {} does not match the model's {}", st_shape_str(t.shape), st_shape_str(s.shape)));
        return enc_kind::table;
    } else if (is_float_plain(t.dtype)) {
        if (t.shape != s.shape)
            bad(fmt::format("shape {} does not match the model's {}", st_shape_str(t.shape), st_shape_str(s.shape)));
        if (has_scale)
            bad(fmt::format("is stored as {} but has a scale tensor '{}' (scales belong to FP8/FP4 weights)",
                            st_dtype_name(t.dtype), scale_name));
        return enc_kind::plain;
    } else if (t.dtype == st_dtype::f8_e4m3 && fp8_ok) {
        if (t.shape != s.shape)
            bad(fmt::format("shape {} does not match the model's {}", st_shape_str(t.shape), st_shape_str(s.shape)));
        return enc_kind::fp8;
    } else if ((t.dtype == st_dtype::i8 || t.dtype == st_dtype::u8) && fp4_ok) {
        const std::vector<int64_t> packed = {s.shape[0], s.shape[1] / 2};
        if (s.shape[1] % 2 != 0 || t.shape != packed)
            bad(fmt::format("packed FP4 shape {} does not match the model's {} (expected {})", st_shape_str(t.shape),
                            st_shape_str(s.shape), st_shape_str(packed)));
        return enc_kind::fp4;
    }
    std::string accepted = "BF16, F32 or F16";
    if (fp8_ok) accepted += ", or F8_E4M3 with a 128x128 scale";
    if (fp4_ok) accepted += ", or I8 packed FP4 with a 1x32 scale";
    bad(fmt::format("dtype {} is not accepted for this tensor (expected {})", st_dtype_name(t.dtype), accepted));
    return enc_kind::plain;  // not reached
}

// An FP8/FP4 weight's scale: present, F8_E8M0 or F32, one entry per 128x128 (FP8) or 1x32 (FP4) block.
void check_block_scale(const tensor_spec& s, const st_tensor& t, enc_kind kind, const std::optional<located>& scale,
                       const std::string& scale_name, const std::vector<safetensors_file>& files,
                       const std::string& path) {
    if (!scale)
        tensor_error(path, s.name, fmt::format("{} weight without a scale tensor ('.scale')", st_dtype_name(t.dtype)));
    const st_tensor& st = *scale->t;
    const std::string& spath = files[scale->file].path();
    const std::vector<int64_t> want = kind == enc_kind::fp8
                                          ? std::vector<int64_t>{fp8_blocks{s.shape[0], s.shape[1]}.scale_rows(),
                                                                 fp8_blocks{s.shape[0], s.shape[1]}.scale_cols()}
                                          : std::vector<int64_t>{s.shape[0], fp4_scale_cols(s.shape[1])};
    TREX_CHECK(st.dtype == st_dtype::f8_e8m0 || st.dtype == st_dtype::f32,
               "{}: tensor '{}': scale dtype {} is not accepted (expected F8_E8M0 or F32)", spath, scale_name,
               st_dtype_name(st.dtype));
    TREX_CHECK(st.shape == want, "{}: tensor '{}': scale shape {} does not match {} {} blocks of {} (expected {})",
               spath, scale_name, st_shape_str(st.shape), kind == enc_kind::fp8 ? "128x128" : "1x32",
               kind == enc_kind::fp8 ? "FP8" : "FP4", st_shape_str(s.shape), st_shape_str(want));
}

// plan: every inventory tensor exactly once, with an accepted encoding and matching shapes; counts the encodings
std::vector<load_item> plan_import(const param_store& ps, const std::vector<safetensors_file>& files,
                                   const std::unordered_map<std::string, located>& where, const std::string& where_dir,
                                   std::unordered_set<std::string>& used, hf_io_report& rep) {
    std::vector<load_item> plan;
    plan.reserve(ps.specs.size());
    for (size_t i = 0; i < ps.specs.size(); i++) {
        const tensor_spec& s = ps.specs[i];
        auto it = where.find(s.name);
        TREX_CHECK(it != where.end(), "{}: tensor '{}' is missing (the model needs {})", where_dir, s.name,
                   st_shape_str(s.shape));
        const located w = it->second;
        const st_tensor& t = *w.t;
        const std::string& path = files[w.file].path();
        used.insert(s.name);
        load_item item;
        item.spec = (int)i;
        item.w = w;
        // its scale, if any
        std::string scale_name;
        const std::optional<located> scale = find_scale(s, where, path, scale_name, used);
        item.kind = classify_encoding(s, t, scale.has_value(), scale_name, path);
        if (item.kind == enc_kind::fp8 || item.kind == enc_kind::fp4) {
            check_block_scale(s, t, item.kind, scale, scale_name, files, path);
            item.scale = *scale;
            rep.encodings[fmt::format("{}+{}", item.kind == enc_kind::fp8 ? "F8_E4M3" : "I8(FP4)",
                                      st_dtype_name(scale->t->dtype))]++;
        } else {
            rep.encodings[st_dtype_name(t.dtype)]++;
        }
        plan.push_back(item);
    }
    return plan;
}

// anything left over must be ignorable (checked in file order, so the first one reported is deterministic)
void check_leftovers(const std::vector<safetensors_file>& files, const std::unordered_set<std::string>& used,
                     bool store_has_mtp, hf_io_report& rep) {
    for (const auto& f : files) {
        for (const auto& t : f.tensors()) {
            const std::string& name = t.name;
            if (used.count(name)) continue;
            if (ignorable_mtp_duplicate(name) || (!store_has_mtp && starts_with(name, "mtp."))) {
                rep.ignored.push_back(name);
                continue;
            }
            std::string hint;
            if (ends_with(name, ".scale") || ends_with(name, ".weight_scale_inv"))
                hint = " (a scale whose weight is not quantised)";
            throw_error(fmt::format("{}: tensor '{}' is not part of the model{}", f.path(), name, hint));
        }
    }
    std::sort(rep.ignored.begin(), rep.ignored.end());
}

// One planned tensor of shard f into the store: a table copied, weights decoded (and dequantised), then checked
// finite or their non-finite values counted.
void decode_tensor(param_store& ps, const std::vector<safetensors_file>& files, const safetensors_file& f,
                   const load_item* it, const hf_load_options& opts, hf_io_report& rep) {
    const tensor_spec& s = ps.specs[it->spec];
    const st_tensor& t = *it->w.t;
    rep.bytes += t.nbytes();
    rep.tensors++;
    if (it->kind == enc_kind::table) {
        const std::vector<int64_t> v = f.to_i64(t.name);
        check_table_values(ps, it->spec, v, f.path());
        std::copy(v.begin(), v.end(), ps.tables.data() + ps.offset[it->spec]);  // in range, so fits int32
        return;
    }
    float* out = ps.weights.data() + ps.offset[it->spec];
    if (it->kind == enc_kind::plain) {
        decode_plain(f, t, out);
    } else {
        const scale_view sv = view_scale(files, it->scale);
        if (!opts.allow_nonfinite) check_finite_scale(files, it->scale, sv);
        rep.bytes += it->scale.t->nbytes();
        rep.tensors++;
        const auto codes = f.bytes(t.name);
        if (it->kind == enc_kind::fp8)
            dequantize_fp8_block(codes.data(), s.shape[0], s.shape[1], sv.e8m0, sv.f32_ptr(), out);
        else
            dequantize_fp4_1x32(codes.data(), s.shape[0], s.shape[1], sv.e8m0, sv.f32_ptr(), out);
    }
    if (opts.allow_nonfinite)
        rep.nonfinite += count_nonfinite(out, s.numel());
    else
        check_finite_values(s.name, s.shape, out, f.path());
}

// decode, shard by shard (by the shard of the weight; a scale in another shard is read from there)
void decode_shards(param_store& ps, const std::vector<safetensors_file>& files, const std::vector<load_item>& plan,
                   const hf_load_options& opts, hf_io_report& rep) {
    std::vector<std::vector<const load_item*>> by_file(files.size());
    for (const auto& it : plan) by_file[it.w.file].push_back(&it);
    for (size_t k = 0; k < files.size(); k++) {
        const safetensors_file& f = files[k];
        for (const load_item* it : by_file[k]) decode_tensor(ps, files, f, it, opts, rep);
        f.drop_pages();
    }
}

}  // namespace

model_config load_hf_config(const std::string& dir) {
    const fs::path p = fs::path(dir) / "config.json";
    std::error_code ec;
    TREX_CHECK(fs::is_regular_file(p, ec), "{}: no config.json", dir);
    return load_config(p.string());
}

hf_io_report load_hf_checkpoint(param_store& ps, const std::string& dir, const hf_load_options& opts) {
    const auto t0 = std::chrono::steady_clock::now();
    hf_io_report rep;
    const layout L = read_layout(dir);
    const bool store_has_mtp =
        std::any_of(ps.specs.begin(), ps.specs.end(), [](const tensor_spec& s) { return s.is_mtp; });
    check_config_matches(dir, ps.specs, store_has_mtp);
    std::vector<safetensors_file> files;
    std::unordered_map<std::string, located> where;
    open_shards(dir, L, files, where);
    const std::string where_dir = L.index_path.empty() ? files[0].path() : L.index_path;
    check_release_naming(files, where);
    std::unordered_set<std::string> used;
    const std::vector<load_item> plan = plan_import(ps, files, where, where_dir, used, rep);
    check_leftovers(files, used, store_has_mtp, rep);
    decode_shards(ps, files, plan, opts, rep);
    rep.files = (int64_t)files.size();
    rep.seconds = seconds_since(t0);
    return rep;
}

// ================================================================================================ export

const char* hf_dtype_name(hf_dtype d) {
    switch (d) {
        case hf_dtype::bf16:
            return "bf16";
        case hf_dtype::fp8:
            return "fp8";
        case hf_dtype::fp4:
            return "fp4";
    }
    return "?";
}

hf_dtype hf_dtype_from_name(const std::string& name) {
    if (name == "bf16") return hf_dtype::bf16;
    if (name == "fp8") return hf_dtype::fp8;
    if (name == "fp4") return hf_dtype::fp4;
    throw_error(fmt::format("unknown checkpoint dtype '{}' (expected bf16, fp8 or fp4)", name));
}

model_config hf_export_config(const model_config& cfg, hf_dtype dtype) {
    model_config c = cfg;
    c.torch_dtype = "bfloat16";
    c.has_fp8_quantization = dtype != hf_dtype::bf16;
    c.expert_dtype = dtype == hf_dtype::fp4 ? "fp4" : "";
    return c;
}

namespace {

enum class out_kind { bf16, f32, i64, fp8, fp4 };

// One tensor of the model as written: the weight, and for fp8/fp4 its scale right after it (same shard).
struct out_group {
    int spec = -1;
    out_kind kind = out_kind::bf16;
    uint64_t bytes = 0;
};

out_kind kind_for(const tensor_spec& s, hf_dtype d) {
    if (s.role == tensor_role::hash_table) return out_kind::i64;
    if (s.format == release_format::f32) return out_kind::f32;
    const bool quantised = s.format == release_format::fp8_block || s.format == release_format::fp4_1x32;
    if (d == hf_dtype::fp4 && (s.format == release_format::fp4_1x32 || s.expert >= 0)) return out_kind::fp4;
    if (d != hf_dtype::bf16 && quantised) return out_kind::fp8;
    return out_kind::bf16;
}

uint64_t group_bytes(const tensor_spec& s, out_kind k) {
    const uint64_t n = (uint64_t)s.numel();
    switch (k) {
        case out_kind::bf16:
            return 2 * n;
        case out_kind::f32:
            return 4 * n;
        case out_kind::i64:
            return 8 * n;
        case out_kind::fp8: {
            const fp8_blocks g{s.shape[0], s.shape[1]};
            return n + (uint64_t)(g.scale_rows() * g.scale_cols());
        }
        case out_kind::fp4:
            return n / 2 + (uint64_t)(s.shape[0] * fp4_scale_cols(s.shape[1]));
    }
    return 0;
}

std::string scale_name_of(const std::string& weight_name) {
    return weight_name.substr(0, weight_name.size() - 7) + ".scale";  // "<base>.weight" → "<base>.scale"
}

void write_file_synced(const fs::path& p, const std::string& content) {
    const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw_error(fmt::format("{}: cannot create: {}", p.string(), std::strerror(errno)));
    const char* d = content.data();
    size_t n = content.size();
    while (n > 0) {
        const ssize_t w = ::write(fd, d, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            const int err = errno;
            ::close(fd);
            throw_error(fmt::format("{}: cannot write: {}", p.string(), std::strerror(err)));
        }
        d += w;
        n -= (size_t)w;
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0)
        throw_error(fmt::format("{}: cannot fsync/close: {}", p.string(), std::strerror(errno)));
}

// config_to_json plus what HF transformers needs to build the model from config.json alone: its DeepseekV4Config
// maps `compress_ratios` only for {0, 4, 128}, so the layer kinds are also written as `layer_types` and
// `compress_rates` (when the config has at most one HCA ratio, all HF can represent). load_config ignores both.
json hf_config_json(const model_config& cfg) {
    json j = config_to_json(cfg);
    std::vector<int> hca;
    json types = json::array();
    for (int l = 0; l < cfg.n_layers(); l++) {
        const int m = cfg.ratio(l);
        types.push_back(m == 0   ? "sliding_attention"
                        : m == 4 ? "compressed_sparse_attention"
                                 : "heavily_compressed_attention");
        if (m != 0 && m != 4 && std::find(hca.begin(), hca.end(), m) == hca.end()) hca.push_back(m);
    }
    if (hca.size() <= 1) {
        j["layer_types"] = types;
        j["compress_rates"] = {{"compressed_sparse_attention", 4},
                               {"heavily_compressed_attention", hca.empty() ? 128 : hca[0]}};
    }
    return j;
}

// The export directory, absolute: refused when it exists and is not an empty directory (unless overwriting); its
// parent is created.
fs::path export_target(const std::string& dir, const hf_save_options& opts) {
    fs::path dst = fs::absolute(fs::path(dir)).lexically_normal();
    if (dst.filename().empty()) dst = dst.parent_path();
    const fs::path parent = dst.parent_path();
    std::error_code ec;
    if (fs::exists(dst, ec)) {
        TREX_CHECK(fs::is_directory(dst, ec), "{}: exists and is not a directory", dir);
        TREX_CHECK(opts.overwrite || fs::is_empty(dst, ec), "{}: exists and is not empty (use --force to replace it)",
                   dir);
    }
    fs::create_directories(parent, ec);
    TREX_CHECK(fs::is_directory(parent, ec), "{}: cannot create the parent directory {}", dir, parent.string());
    return dst;
}

// what to write: every tensor of the store with its output encoding and bytes
std::vector<out_group> export_groups(const param_store& ps, hf_dtype dtype) {
    std::vector<out_group> groups;
    for (size_t i = 0; i < ps.specs.size(); i++) {
        const tensor_spec& s = ps.specs[i];
        out_group g;
        g.spec = (int)i;
        g.kind = kind_for(s, dtype);
        if (g.kind == out_kind::fp4)
            TREX_CHECK(s.shape.size() == 2 && s.shape[1] % 2 == 0,
                       "tensor '{}': FP4 export needs an even input dimension (shape {})", s.name,
                       st_shape_str(s.shape));
        g.bytes = group_bytes(s, g.kind);
        groups.push_back(g);
    }
    return groups;
}

// The groups in order, cut into shards of at most max_shard_bytes (a larger group alone in its shard).
std::vector<std::vector<const out_group*>> pack_shards(const std::vector<out_group>& groups, uint64_t max_shard_bytes) {
    std::vector<std::vector<const out_group*>> shards;
    uint64_t cur = 0;
    for (const auto& g : groups) {
        if (shards.empty() || (cur > 0 && cur + g.bytes > max_shard_bytes)) {
            shards.emplace_back();
            cur = 0;
        }
        shards.back().push_back(&g);
        cur += g.bytes;
    }
    return shards;
}

// An FP8 (128x128 blocks) or FP4 (1x32) weight and its E8M0 scale, quantised when the writer streams them.
void add_quantised_tensor(safetensors_writer& w, const tensor_spec& s, const float* src, bool fp8,
                          const std::string& fname, json& weight_map) {
    const int64_t rows = s.shape[0], cols = s.shape[1];
    const std::vector<int64_t> sshape =
        fp8 ? std::vector<int64_t>{fp8_blocks{rows, cols}.scale_rows(), fp8_blocks{rows, cols}.scale_cols()}
            : std::vector<int64_t>{rows, fp4_scale_cols(cols)};
    auto scales = std::make_shared<std::vector<uint8_t>>();
    const std::string name = s.name;
    w.add_deferred(s.name, fp8 ? st_dtype::f8_e4m3 : st_dtype::i8, fp8 ? s.shape : std::vector<int64_t>{rows, cols / 2},
                   [=](uint8_t* out) {
                       scales->resize((size_t)(sshape[0] * sshape[1]));
                       if (fp8)
                           quantize_fp8_block(src, rows, cols, out, scales->data(), name.c_str());
                       else
                           quantize_fp4_1x32(src, rows, cols, out, scales->data(), name.c_str());
                   });
    const std::string sname = scale_name_of(s.name);
    w.add_deferred(sname, st_dtype::f8_e8m0, sshape, [scales](uint8_t* out) {
        std::memcpy(out, scales->data(), scales->size());
        scales->clear();
        scales->shrink_to_fit();
    });
    weight_map[sname] = fname;
}

// One group into the shard being written (converted when the writer streams it), listed in weight_map.
void add_export_tensor(safetensors_writer& w, const param_store& ps, const out_group& g, const std::string& fname,
                       json& weight_map) {
    const tensor_spec& s = ps.specs[g.spec];
    const int64_t numel = s.numel();
    if (g.kind == out_kind::i64) {
        const int32_t* src = ps.tables.data() + ps.offset[g.spec];
        w.add_deferred(s.name, st_dtype::i64, s.shape, [src, numel](uint8_t* out) {
            for (int64_t j = 0; j < numel; j++) {
                const int64_t v = src[j];
                std::memcpy(out + 8 * j, &v, 8);
            }
        });
        weight_map[s.name] = fname;
        return;
    }
    const float* src = ps.weights.data() + ps.offset[g.spec];
    switch (g.kind) {
        case out_kind::f32:
            w.add_deferred(s.name, st_dtype::f32, s.shape,
                           [src, numel](uint8_t* out) { std::memcpy(out, src, (size_t)numel * 4); });
            break;
        case out_kind::bf16:
            w.add_deferred(s.name, st_dtype::bf16, s.shape, [src, numel](uint8_t* out) {
                f32_to_bf16_array(src, numel, reinterpret_cast<uint16_t*>(out));
            });
            break;
        case out_kind::fp8:
        case out_kind::fp4:
            add_quantised_tensor(w, s, src, g.kind == out_kind::fp8, fname, weight_map);
            break;
        case out_kind::i64:
            break;
    }
    weight_map[s.name] = fname;
}

// Shard k of n into the staging directory; counts its tensors and bytes.
void write_shard(const param_store& ps, const std::vector<const out_group*>& shard, int k, int n, const fs::path& tmp,
                 json& weight_map, uint64_t& total, hf_io_report& rep) {
    const std::string fname = fmt::format("model-{:05d}-of-{:05d}.safetensors", k + 1, n);
    safetensors_writer w;
    w.set_metadata("format", "pt");
    for (const out_group* g : shard) add_export_tensor(w, ps, *g, fname, weight_map);
    rep.tensors += (int64_t)w.size();
    rep.bytes += w.data_bytes();
    total += w.data_bytes();
    w.write((tmp / fname).string());
}

}  // namespace

hf_io_report save_hf_checkpoint(const param_store& ps, const std::string& dir, const hf_save_options& opts) {
    const auto t0 = std::chrono::steady_clock::now();
    TREX_CHECK(opts.max_shard_bytes > 0, "{}: the shard size must be > 0", dir);
    TREX_CHECK(!dir.empty(), "checkpoint directory: empty path");
    const fs::path dst = export_target(dir, opts);
    const fs::path parent = dst.parent_path();

    // what to write, grouped into shards
    const std::vector<out_group> groups = export_groups(ps, opts.dtype);
    const std::vector<std::vector<const out_group*>> shards = pack_shards(groups, opts.max_shard_bytes);
    const int n = (int)shards.size();

    remove_stale_temp_entries(parent.string(), "export");
    staged_dir staged(dst.string(), /*hidden=*/true);
    const fs::path tmp(staged.path());
    hf_io_report rep;
    try {
        json weight_map = json::object();
        uint64_t total = 0;
        for (int k = 0; k < n; k++) write_shard(ps, shards[k], k, n, tmp, weight_map, total, rep);
        json index = {{"metadata", {{"total_size", total}}}, {"weight_map", weight_map}};
        write_file_synced(tmp / kIndexName, index.dump(2) + "\n");
        write_file_synced(tmp / "config.json", hf_config_json(hf_export_config(ps.cfg, opts.dtype)).dump(2) + "\n");
        staged.publish();  // an existing directory (empty, or replaced with overwrite) is moved aside, then removed
    } catch (const fs::filesystem_error& e) {
        throw_error(one_line(fmt::format("{}: {}", dir, e.what())));
    }
    rep.files = n;
    rep.seconds = seconds_since(t0);
    return rep;
}

}  // namespace trex
