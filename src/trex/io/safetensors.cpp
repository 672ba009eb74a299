#include "trex/io/safetensors.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include "trex/base/error.hpp"

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");

namespace trex {

namespace {

using ojson = nlohmann::ordered_json;

// Same limit as the reference implementation (safetensors MAX_HEADER_SIZE).
constexpr uint64_t max_header_bytes = 100'000'000;

struct dtype_entry {
    st_dtype type;
    const char* name;
    size_t size;
};
constexpr dtype_entry dtype_table[] = {
    {st_dtype::f64, "F64", 8},         {st_dtype::f32, "F32", 4},         {st_dtype::f16, "F16", 2},
    {st_dtype::bf16, "BF16", 2},       {st_dtype::i64, "I64", 8},         {st_dtype::i32, "I32", 4},
    {st_dtype::i16, "I16", 2},         {st_dtype::i8, "I8", 1},           {st_dtype::u8, "U8", 1},
    {st_dtype::boolean, "BOOL", 1},    {st_dtype::f8_e4m3, "F8_E4M3", 1}, {st_dtype::f8_e5m2, "F8_E5M2", 1},
    {st_dtype::f8_e8m0, "F8_E8M0", 1},
};

// numel·itemsize, or false on negative dims or when the product of the non-zero dims (times itemsize) exceeds
// INT64_MAX (so numel() can never overflow, even for shapes with a zero dim).
bool byte_size(const std::vector<int64_t>& shape, size_t itemsize, uint64_t* out) {
    const uint64_t limit = (uint64_t)std::numeric_limits<int64_t>::max();
    uint64_t n = itemsize;
    bool zero = false;
    for (int64_t s : shape) {
        if (s < 0) return false;
        if (s == 0) {
            zero = true;
            continue;
        }
        if (n > limit / (uint64_t)s) return false;
        n *= (uint64_t)s;
    }
    *out = zero ? 0 : n;
    return true;
}

// A JSON integer >= 0, or false.
bool get_u64(const ojson& v, uint64_t* out) {
    if (v.is_number_unsigned()) {
        *out = v.get<uint64_t>();
        return true;
    }
    if (v.is_number_integer() && v.get<int64_t>() >= 0) {
        *out = (uint64_t)v.get<int64_t>();
        return true;
    }
    return false;
}

std::string short_dump(const ojson& v) {
    std::string s = v.dump();
    if (s.size() > 60) s = s.substr(0, 57) + "...";
    return s;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// dtypes and scalar conversions

const char* st_dtype_name(st_dtype t) {
    for (const auto& e : dtype_table)
        if (e.type == t) return e.name;
    return "?";
}

size_t st_dtype_size(st_dtype t) {
    for (const auto& e : dtype_table)
        if (e.type == t) return e.size;
    return 0;
}

bool st_dtype_from_name(const std::string& name, st_dtype* out) {
    for (const auto& e : dtype_table) {
        if (name == e.name) {
            *out = e.type;
            return true;
        }
    }
    return false;
}

int64_t st_tensor::numel() const {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return n;
}

float bf16_to_f32(uint16_t bits) {
    uint32_t u = (uint32_t)bits << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

uint16_t f32_to_bf16(float x) {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u);  // quiet NaN, keep sign
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

float f16_to_f32(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t u;
    if (exp == 0) {
        if (mant == 0) {
            u = sign;
        } else {  // subnormal: normalise
            int e = -1;
            do {
                e++;
                mant <<= 1;
            } while ((mant & 0x400u) == 0);
            u = sign | ((uint32_t)(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
        }
    } else if (exp == 31) {
        u = sign | 0x7f800000u | (mant << 13);
    } else {
        u = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

// ---------------------------------------------------------------------------------------------------------------
// reader

safetensors_file::safetensors_file(const std::string& path) : path_(path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw_error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
    struct stat st;
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        throw_error(fmt::format("{}: cannot stat: {}", path, std::strerror(err)));
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        throw_error(fmt::format("{}: not a regular file", path));
    }
    size_ = (uint64_t)st.st_size;
    if (size_ < 8) {
        ::close(fd);
        throw_error(
            fmt::format("{}: truncated file ({} bytes; a safetensors file has at least the 8-byte header "
                        "length)",
                        path, size_));
    }
    void* m = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    const int map_err = errno;
    ::close(fd);
    if (m == MAP_FAILED) throw_error(fmt::format("{}: cannot map: {}", path, std::strerror(map_err)));
    map_ = (const uint8_t*)m;

    try {
        uint64_t n = 0;
        std::memcpy(&n, map_, 8);  // little-endian host (static_assert above)
        if (n > size_ - 8)
            throw_error(
                fmt::format("{}: header length {} exceeds the file size ({} bytes; truncated or not a "
                            "safetensors file)",
                            path, n, size_));
        if (n > max_header_bytes)
            throw_error(fmt::format("{}: header length {} exceeds the {}-byte limit", path, n, max_header_bytes));
        data_start_ = 8 + n;
        const uint64_t data_size = size_ - data_start_;

        ojson h;
        try {
            h = ojson::parse(map_ + 8, map_ + 8 + n);
        } catch (const ojson::exception& e) {  // parse_error, or out_of_range for a number beyond double's range
            std::string msg = e.what();
            auto pos = msg.find("] ");
            if (pos != std::string::npos) msg = msg.substr(pos + 2);
            std::replace(msg.begin(), msg.end(), '\n', ' ');
            throw_error(fmt::format("{}: bad header JSON: {}", path, msg));
        }
        if (!h.is_object()) throw_error(fmt::format("{}: bad header: expected a JSON object", path));

        for (auto it = h.begin(); it != h.end(); ++it) {
            const std::string& name = it.key();
            const ojson& v = it.value();
            if (name == "__metadata__") {
                if (!v.is_object()) throw_error(fmt::format("{}: __metadata__ must be an object of strings", path));
                for (auto m2 = v.begin(); m2 != v.end(); ++m2) {
                    if (!m2.value().is_string())
                        throw_error(fmt::format("{}: __metadata__ '{}' must be a string, got {}", path, m2.key(),
                                                short_dump(m2.value())));
                    metadata_[m2.key()] = m2.value().get<std::string>();
                }
                continue;
            }
            auto bad = [&](const std::string& msg) {
                throw_error(fmt::format("{}: tensor '{}': {}", path, name, msg));
            };
            if (name.empty()) throw_error(fmt::format("{}: a tensor has an empty name", path));
            if (!v.is_object()) bad("entry must be an object");
            st_tensor t;
            t.name = name;
            auto d = v.find("dtype");
            if (d == v.end() || !d->is_string()) bad("missing or non-string 'dtype'");
            if (!st_dtype_from_name(d->get<std::string>(), &t.dtype))
                bad(fmt::format("unknown dtype '{}'", d->get<std::string>()));
            auto s = v.find("shape");
            if (s == v.end() || !s->is_array()) bad("missing or non-array 'shape'");
            for (const auto& e : *s) {
                uint64_t x;
                if (!get_u64(e, &x) || x > (uint64_t)std::numeric_limits<int64_t>::max())
                    bad(fmt::format("bad shape {} (dimensions must be integers >= 0)", short_dump(*s)));
                t.shape.push_back((int64_t)x);
            }
            auto o = v.find("data_offsets");
            if (o == v.end() || !o->is_array() || o->size() != 2 || !get_u64((*o)[0], &t.begin) ||
                !get_u64((*o)[1], &t.end))
                bad("'data_offsets' must be [begin, end] with integers >= 0");
            if (t.begin > t.end) bad(fmt::format("data_offsets [{},{}] has begin > end", t.begin, t.end));
            if (t.end > data_size)
                bad(fmt::format("data_offsets [{},{}] exceed the data section ({} bytes; truncated file?)", t.begin,
                                t.end, data_size));
            uint64_t want = 0;
            if (!byte_size(t.shape, st_dtype_size(t.dtype), &want))
                bad(fmt::format("shape {} is too large", st_shape_str(t.shape)));
            if (want != t.nbytes())
                bad(fmt::format("size mismatch: shape {} of {} is {} bytes but data_offsets span {}",
                                st_shape_str(t.shape), st_dtype_name(t.dtype), want, t.nbytes()));
            index_[name] = tensors_.size();
            tensors_.push_back(std::move(t));
        }

        // no two tensors may share bytes (empty tensors occupy nothing)
        std::vector<const st_tensor*> by_offset;
        for (const auto& t : tensors_)
            if (t.nbytes() > 0) by_offset.push_back(&t);
        std::sort(by_offset.begin(), by_offset.end(),
                  [](const st_tensor* a, const st_tensor* b) { return a->begin < b->begin; });
        for (size_t i = 1; i < by_offset.size(); i++) {
            if (by_offset[i]->begin < by_offset[i - 1]->end)
                throw_error(fmt::format("{}: tensors '{}' and '{}' overlap (data_offsets [{},{}] and [{},{}])", path,
                                        by_offset[i - 1]->name, by_offset[i]->name, by_offset[i - 1]->begin,
                                        by_offset[i - 1]->end, by_offset[i]->begin, by_offset[i]->end));
        }
    } catch (...) {
        close();
        throw;
    }
}

safetensors_file::~safetensors_file() {
    close();
}

void safetensors_file::drop_pages() const {
    if (map_) ::madvise((void*)map_, size_, MADV_DONTNEED);
}

void safetensors_file::close() {
    if (map_) ::munmap((void*)map_, size_);
    map_ = nullptr;
}

safetensors_file::safetensors_file(safetensors_file&& o) noexcept
    : path_(std::move(o.path_)),
      map_(o.map_),
      size_(o.size_),
      data_start_(o.data_start_),
      tensors_(std::move(o.tensors_)),
      index_(std::move(o.index_)),
      metadata_(std::move(o.metadata_)) {
    o.map_ = nullptr;
}

safetensors_file& safetensors_file::operator=(safetensors_file&& o) noexcept {
    if (this != &o) {
        close();
        path_ = std::move(o.path_);
        map_ = o.map_;
        size_ = o.size_;
        data_start_ = o.data_start_;
        tensors_ = std::move(o.tensors_);
        index_ = std::move(o.index_);
        metadata_ = std::move(o.metadata_);
        o.map_ = nullptr;
    }
    return *this;
}

std::vector<std::string> safetensors_file::names() const {
    std::vector<std::string> out;
    out.reserve(tensors_.size());
    for (const auto& t : tensors_) out.push_back(t.name);
    return out;
}

const st_tensor& safetensors_file::tensor(const std::string& name) const {
    auto it = index_.find(name);
    if (it == index_.end()) throw_error(fmt::format("{}: no tensor '{}'", path_, name));
    return tensors_[it->second];
}

std::span<const uint8_t> safetensors_file::bytes(const std::string& name) const {
    const st_tensor& t = tensor(name);
    return {map_ + data_start_ + t.begin, (size_t)t.nbytes()};
}

namespace {

template <typename T>
T load_le(const uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
}

template <typename Out>
std::vector<Out> convert_float(const safetensors_file& f, const std::string& name, const char* target) {
    const st_tensor& t = f.tensor(name);
    const auto b = f.bytes(name);
    const size_t n = (size_t)t.numel();
    std::vector<Out> out(n);
    switch (t.dtype) {
        case st_dtype::f32:
            for (size_t i = 0; i < n; i++) out[i] = (Out)load_le<float>(b.data() + 4 * i);
            break;
        case st_dtype::f64:
            for (size_t i = 0; i < n; i++) out[i] = (Out)load_le<double>(b.data() + 8 * i);
            break;
        case st_dtype::bf16:
            for (size_t i = 0; i < n; i++) out[i] = (Out)bf16_to_f32(load_le<uint16_t>(b.data() + 2 * i));
            break;
        case st_dtype::f16:
            for (size_t i = 0; i < n; i++) out[i] = (Out)f16_to_f32(load_le<uint16_t>(b.data() + 2 * i));
            break;
        default:
            throw_error(fmt::format("{}: tensor '{}': cannot convert {} to {}", f.path(), name, st_dtype_name(t.dtype),
                                    target));
    }
    return out;
}

}  // namespace

std::vector<float> safetensors_file::to_f32(const std::string& name) const {
    return convert_float<float>(*this, name, "float32");
}

std::vector<double> safetensors_file::to_f64(const std::string& name) const {
    return convert_float<double>(*this, name, "float64");
}

std::vector<int64_t> safetensors_file::to_i64(const std::string& name) const {
    const st_tensor& t = tensor(name);
    const auto b = bytes(name);
    const size_t n = (size_t)t.numel();
    std::vector<int64_t> out(n);
    if (t.dtype == st_dtype::i64) {
        for (size_t i = 0; i < n; i++) out[i] = load_le<int64_t>(b.data() + 8 * i);
    } else if (t.dtype == st_dtype::i32) {
        for (size_t i = 0; i < n; i++) out[i] = load_le<int32_t>(b.data() + 4 * i);
    } else {
        throw_error(fmt::format("{}: tensor '{}': cannot convert {} to int64", path_, name, st_dtype_name(t.dtype)));
    }
    return out;
}

std::vector<int32_t> safetensors_file::to_i32(const std::string& name) const {
    const st_tensor& t = tensor(name);
    if (t.dtype == st_dtype::i32) {
        const auto b = bytes(name);
        std::vector<int32_t> out((size_t)t.numel());
        if (!out.empty()) std::memcpy(out.data(), b.data(), b.size());
        return out;
    }
    if (t.dtype != st_dtype::i64)
        throw_error(fmt::format("{}: tensor '{}': cannot convert {} to int32", path_, name, st_dtype_name(t.dtype)));
    const std::vector<int64_t> wide = to_i64(name);
    std::vector<int32_t> out(wide.size());
    for (size_t i = 0; i < wide.size(); i++) {
        if (wide[i] < std::numeric_limits<int32_t>::min() || wide[i] > std::numeric_limits<int32_t>::max())
            throw_error(fmt::format("{}: tensor '{}': element {} = {} does not fit in int32", path_, name, i, wide[i]));
        out[i] = (int32_t)wide[i];
    }
    return out;
}

// ---------------------------------------------------------------------------------------------------------------
// writer

safetensors_writer::entry& safetensors_writer::add_entry(const std::string& name, st_dtype dtype,
                                                         const std::vector<int64_t>& shape) {
    TREX_CHECK(!name.empty(), "safetensors writer: empty tensor name");
    TREX_CHECK(name != "__metadata__", "safetensors writer: '__metadata__' is not a valid tensor name");
    TREX_CHECK(index_.count(name) == 0, "safetensors writer: tensor '{}': duplicate name", name);
    uint64_t nbytes = 0;
    TREX_CHECK(byte_size(shape, st_dtype_size(dtype), &nbytes), "safetensors writer: tensor '{}': bad shape {}", name,
               st_shape_str(shape));
    index_[name] = entries_.size();
    entries_.push_back(entry{name, dtype, shape, {}, nbytes, {}});
    entries_.back().data.resize((size_t)nbytes);
    return entries_.back();
}

void safetensors_writer::add_deferred(const std::string& name, st_dtype dtype, const std::vector<int64_t>& shape,
                                      fill_fn fill) {
    TREX_CHECK(fill != nullptr, "safetensors writer: tensor '{}': no fill function", name);
    entry& e = add_entry(name, dtype, shape);
    e.data.clear();
    e.data.shrink_to_fit();
    e.fill = std::move(fill);
}

uint64_t safetensors_writer::data_bytes() const {
    uint64_t n = 0;
    for (const auto& e : entries_) n += e.nbytes;
    return n;
}

void safetensors_writer::add_raw(const std::string& name, st_dtype dtype, const std::vector<int64_t>& shape,
                                 const void* data, size_t nbytes) {
    uint64_t want = 0;
    TREX_CHECK(byte_size(shape, st_dtype_size(dtype), &want) && want == nbytes,
               "safetensors writer: tensor '{}': {} bytes given for shape {} of {}", name, nbytes, st_shape_str(shape),
               st_dtype_name(dtype));
    entry& e = add_entry(name, dtype, shape);
    if (nbytes) std::memcpy(e.data.data(), data, nbytes);
}

void safetensors_writer::add_f32(const std::string& name, const std::vector<int64_t>& shape, const float* data) {
    entry& e = add_entry(name, st_dtype::f32, shape);
    if (!e.data.empty()) std::memcpy(e.data.data(), data, e.data.size());
}
void safetensors_writer::add_f64(const std::string& name, const std::vector<int64_t>& shape, const double* data) {
    entry& e = add_entry(name, st_dtype::f64, shape);
    if (!e.data.empty()) std::memcpy(e.data.data(), data, e.data.size());
}
void safetensors_writer::add_i32(const std::string& name, const std::vector<int64_t>& shape, const int32_t* data) {
    entry& e = add_entry(name, st_dtype::i32, shape);
    if (!e.data.empty()) std::memcpy(e.data.data(), data, e.data.size());
}
void safetensors_writer::add_i64(const std::string& name, const std::vector<int64_t>& shape, const int64_t* data) {
    entry& e = add_entry(name, st_dtype::i64, shape);
    if (!e.data.empty()) std::memcpy(e.data.data(), data, e.data.size());
}
void safetensors_writer::add_bf16(const std::string& name, const std::vector<int64_t>& shape, const float* data) {
    entry& e = add_entry(name, st_dtype::bf16, shape);
    const size_t n = e.data.size() / 2;
    for (size_t i = 0; i < n; i++) {
        const uint16_t b = f32_to_bf16(data[i]);
        std::memcpy(e.data.data() + 2 * i, &b, 2);
    }
}

namespace {

// Writes all of [p, p+n) to fd, retrying short writes and EINTR.
bool write_all(int fd, const uint8_t* p, size_t n) {
    while (n > 0) {
        const ssize_t w = ::write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        p += w;
        n -= (size_t)w;
    }
    return true;
}

}  // namespace

void safetensors_writer::write(const std::string& path) const {
    // header: __metadata__ first, then tensors in insertion order with contiguous offsets
    ojson h = ojson::object();
    if (!metadata_.empty()) {
        ojson m = ojson::object();
        for (const auto& [k, v] : metadata_) m[k] = v;
        h["__metadata__"] = m;
    }
    uint64_t off = 0;
    for (const auto& e : entries_) {
        h[e.name] = {{"dtype", st_dtype_name(e.dtype)}, {"shape", e.shape}, {"data_offsets", {off, off + e.nbytes}}};
        off += e.nbytes;
    }
    std::string header = h.dump();
    header.append((8 - header.size() % 8) % 8, ' ');  // pad so the data section is 8-byte aligned
    const uint64_t n = header.size();

    const std::string tmp = path + ".tmp";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw_error(fmt::format("{}: cannot create {}: {}", path, tmp, std::strerror(errno)));
    auto fail = [&](const char* what) {
        const int err = errno;
        ::close(fd);
        ::unlink(tmp.c_str());
        throw_error(fmt::format("{}: {} {}: {}", path, what, tmp, std::strerror(err)));
    };
    uint8_t len[8];
    std::memcpy(len, &n, 8);
    if (!write_all(fd, len, 8) || !write_all(fd, (const uint8_t*)header.data(), header.size())) fail("cannot write");
    std::vector<uint8_t> buf;  // deferred tensors, one at a time
    for (const auto& e : entries_) {
        const uint8_t* p = e.data.data();
        if (e.fill) {
            buf.resize((size_t)e.nbytes);
            try {
                e.fill(buf.data());
            } catch (...) {
                ::close(fd);
                ::unlink(tmp.c_str());
                throw;
            }
            p = buf.data();
        }
        if (!write_all(fd, p, (size_t)e.nbytes)) fail("cannot write");
    }
    if (::fsync(fd) != 0) fail("cannot fsync");
    if (::close(fd) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        throw_error(fmt::format("{}: cannot close {}: {}", path, tmp, std::strerror(err)));
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        throw_error(fmt::format("{}: cannot rename {} to it: {}", path, tmp, std::strerror(err)));
    }
    // make the rename durable
    std::filesystem::path dir = std::filesystem::path(path).parent_path();
    if (dir.empty()) dir = std::filesystem::path(".");
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
}

std::string st_shape_str(const std::vector<int64_t>& shape) {
    return fmt::format("[{}]", fmt::join(shape, ","));
}

}  // namespace trex
