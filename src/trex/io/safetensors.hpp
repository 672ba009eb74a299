// safetensors files (https://github.com/huggingface/safetensors, format section): an 8-byte little-endian header
// length N, N bytes of JSON {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {str: str}},
// then the raw little-endian row-major data; offsets are relative to the start of the data section.
//
// safetensors_file maps a file read-only and validates the whole header up front; every error is one line naming
// the file (and the tensor). safetensors_writer collects tensors and writes `path.tmp`, fsyncs, then renames it to
// `path`, so no partial file is ever left at `path`. Deferred tensors (add_deferred) are produced by a callback while
// the file is written, so a writer holds at most one of them in memory (streaming mode).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace trex {

enum class st_dtype : uint8_t { f64, f32, f16, bf16, i64, i32, i16, i8, u8, boolean, f8_e4m3, f8_e5m2, f8_e8m0 };

const char* st_dtype_name(st_dtype t);  // "F32", "F8_E4M3", ...
size_t st_dtype_size(st_dtype t);       // bytes per element
bool st_dtype_from_name(const std::string& name, st_dtype* out);
std::string st_shape_str(const std::vector<int64_t>& shape);  // "[2,3]" (for error messages)

struct st_tensor {
    std::string name;
    st_dtype dtype = st_dtype::f32;
    std::vector<int64_t> shape;   // [] = scalar (1 element)
    uint64_t begin = 0, end = 0;  // byte range in the data section
    int64_t numel() const;
    uint64_t nbytes() const { return end - begin; }
};

class safetensors_file {
   public:
    // Maps and validates `path`; throws trex::error on any problem.
    explicit safetensors_file(const std::string& path);
    ~safetensors_file();
    safetensors_file(const safetensors_file&) = delete;
    safetensors_file& operator=(const safetensors_file&) = delete;
    safetensors_file(safetensors_file&& o) noexcept;
    safetensors_file& operator=(safetensors_file&& o) noexcept;

    const std::string& path() const { return path_; }
    uint64_t file_size() const { return size_; }
    const std::vector<st_tensor>& tensors() const { return tensors_; }  // header order
    std::vector<std::string> names() const;
    bool has(const std::string& name) const { return index_.count(name) > 0; }
    const st_tensor& tensor(const std::string& name) const;  // throws when absent
    // Raw little-endian bytes of a tensor (not necessarily aligned: read through memcpy).
    std::span<const uint8_t> bytes(const std::string& name) const;
    const std::map<std::string, std::string>& metadata() const { return metadata_; }
    // Tells the kernel the mapped pages are no longer needed (they are re-read if touched again): bounds the
    // resident memory of a reader that streams through many large files.
    void drop_pages() const;

    // Converting accessors (element order = row-major). Throw naming the tensor if the dtype does not convert.
    std::vector<float> to_f32(const std::string& name) const;    // from F32, F64, BF16, F16
    std::vector<double> to_f64(const std::string& name) const;   // from F64, F32, BF16, F16
    std::vector<int32_t> to_i32(const std::string& name) const;  // from I32, I64 (values must fit)
    std::vector<int64_t> to_i64(const std::string& name) const;  // from I32, I64

   private:
    void close();
    std::string path_;
    const uint8_t* map_ = nullptr;  // whole file
    uint64_t size_ = 0;
    uint64_t data_start_ = 0;  // 8 + header length
    std::vector<st_tensor> tensors_;
    std::unordered_map<std::string, size_t> index_;
    std::map<std::string, std::string> metadata_;
};

class safetensors_writer {
   public:
    // Tensors are written in the order they are added, contiguously. Data is copied at add time.
    void add_f32(const std::string& name, const std::vector<int64_t>& shape, const float* data);
    void add_f64(const std::string& name, const std::vector<int64_t>& shape, const double* data);
    void add_i32(const std::string& name, const std::vector<int64_t>& shape, const int32_t* data);
    void add_i64(const std::string& name, const std::vector<int64_t>& shape, const int64_t* data);
    // Rounds to nearest even (NaN stays NaN).
    void add_bf16(const std::string& name, const std::vector<int64_t>& shape, const float* data);
    // Bytes already in `dtype`'s little-endian encoding; `nbytes` must equal numel·itemsize.
    void add_raw(const std::string& name, st_dtype dtype, const std::vector<int64_t>& shape, const void* data,
                 size_t nbytes);
    // Streaming mode: `fill` writes the tensor's numel·itemsize bytes (little-endian `dtype` encoding) into the
    // buffer it is given, when write() reaches the tensor; buffers are reused, so only one deferred tensor is in
    // memory at a time. Fills run in insertion order.
    using fill_fn = std::function<void(uint8_t* out)>;
    void add_deferred(const std::string& name, st_dtype dtype, const std::vector<int64_t>& shape, fill_fn fill);
    void set_metadata(const std::string& key, const std::string& value) { metadata_[key] = value; }
    size_t size() const { return entries_.size(); }
    uint64_t data_bytes() const;  // bytes of the data section

    // Writes `path.tmp`, fsyncs it, renames it to `path` and fsyncs the directory. On error the temp file is
    // removed and `path` is untouched.
    void write(const std::string& path) const;

   private:
    struct entry {
        std::string name;
        st_dtype dtype;
        std::vector<int64_t> shape;
        std::vector<uint8_t> data;
        uint64_t nbytes = 0;
        fill_fn fill;  // deferred entries: data stays empty
    };
    entry& add_entry(const std::string& name, st_dtype dtype, const std::vector<int64_t>& shape);
    std::vector<entry> entries_;
    std::unordered_map<std::string, size_t> index_;
    std::map<std::string, std::string> metadata_;
};

// Scalar conversions used by the accessors (exposed for tests and codecs).
float bf16_to_f32(uint16_t bits);
uint16_t f32_to_bf16(float x);  // round to nearest even
float f16_to_f32(uint16_t bits);

}  // namespace trex
