#include "frontend/gguf/gguf_file.hpp"

#include <cstring>

#include "frontend/gguf/ggml_types.hpp"

namespace pock::gguf {
namespace {

constexpr uint32_t kMaxDims = 4;  // GGML_MAX_DIMS
// Every entry of the file takes some bytes: an array or directory claiming more entries than the
// remaining bytes could hold is refused before anything is reserved for it.
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;  // empty name, 0 dims, type, offset

enum ValueType : uint32_t {
  kUint8 = 0, kInt8, kUint16, kInt16, kUint32, kInt32, kFloat32, kBool, kString, kArray, kUint64, kInt64, kFloat64
};

Status bad(const std::string& what) { return Status(Code::kInvalidArgument, "GGUF: " + what); }

class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : p_(data), end_(data + size), begin_(data) {}
  uint64_t offset() const { return static_cast<uint64_t>(p_ - begin_); }
  uint64_t left() const { return static_cast<uint64_t>(end_ - p_); }

  template <typename T>
  Status read(T* v, const std::string& what) {
    if (left() < sizeof(T)) return bad(what + " runs past the end of the file (truncated)");
    std::memcpy(v, p_, sizeof(T));
    p_ += sizeof(T);
    return Status::ok();
  }

  Status read_string(std::string* s, const std::string& what) {
    uint64_t n = 0;
    POCK_RETURN_IF_ERROR(read(&n, what + " length"));
    if (n > left()) return bad(what + ": a string of " + std::to_string(n) + " bytes runs past the end of the file");
    s->assign(reinterpret_cast<const char*>(p_), static_cast<size_t>(n));
    p_ += n;
    return Status::ok();
  }

  Status read_scalar(uint32_t type, Scalar* out, const std::string& what) {
    switch (type) {
      case kUint8: { uint8_t v{}; POCK_RETURN_IF_ERROR(read(&v, what)); *out = uint64_t{v}; return Status::ok(); }
      case kInt8: { int8_t v{}; POCK_RETURN_IF_ERROR(read(&v, what)); *out = int64_t{v}; return Status::ok(); }
      case kUint16: { uint16_t v{}; POCK_RETURN_IF_ERROR(read(&v, what)); *out = uint64_t{v}; return Status::ok(); }
      case kInt16: { int16_t v{}; POCK_RETURN_IF_ERROR(read(&v, what)); *out = int64_t{v}; return Status::ok(); }
      case kUint32: { uint32_t v{}; POCK_RETURN_IF_ERROR(read(&v, what)); *out = uint64_t{v}; return Status::ok(); }
      case kInt32: { int32_t v{}; POCK_RETURN_IF_ERROR(read(&v, what)); *out = int64_t{v}; return Status::ok(); }
      case kUint64: { uint64_t v{}; POCK_RETURN_IF_ERROR(read(&v, what)); *out = v; return Status::ok(); }
      case kInt64: { int64_t v{}; POCK_RETURN_IF_ERROR(read(&v, what)); *out = v; return Status::ok(); }
      case kFloat32: { float v{}; POCK_RETURN_IF_ERROR(read(&v, what)); *out = double{v}; return Status::ok(); }
      case kFloat64: { double v{}; POCK_RETURN_IF_ERROR(read(&v, what)); *out = v; return Status::ok(); }
      case kBool: {
        uint8_t v = 0;
        POCK_RETURN_IF_ERROR(read(&v, what));
        if (v > 1) return bad(what + ": a bool of value " + std::to_string(v));
        *out = v == 1;
        return Status::ok();
      }
      case kString: {
        std::string s;
        POCK_RETURN_IF_ERROR(read_string(&s, what));
        *out = std::move(s);
        return Status::ok();
      }
      default: return bad(what + ": unknown value type " + std::to_string(type));
    }
  }

  Status read_value(Value* v, const std::string& what) {
    uint32_t type = 0;
    POCK_RETURN_IF_ERROR(read(&type, what + " type"));
    if (type != kArray) return read_scalar(type, &v->scalar, what);
    uint32_t element = 0;
    uint64_t count = 0;
    POCK_RETURN_IF_ERROR(read(&element, what + " element type"));
    POCK_RETURN_IF_ERROR(read(&count, what + " element count"));
    if (element == kArray) return bad(what + ": arrays of arrays are not supported");
    // Each element takes at least one byte (a string at least its 8-byte length).
    if (count > left() / (element == kString ? 8 : 1)) {
      return bad(what + ": " + std::to_string(count) + " elements cannot fit in the " + std::to_string(left()) +
                 " bytes left");
    }
    v->is_array = true;
    v->array.reserve(static_cast<size_t>(count));
    for (uint64_t i = 0; i < count; ++i) {
      Scalar s;
      POCK_RETURN_IF_ERROR(read_scalar(element, &s, what + "[" + std::to_string(i) + "]"));
      v->array.push_back(std::move(s));
    }
    return Status::ok();
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
  const uint8_t* begin_;
};

}  // namespace

Result<File> File::parse(const uint8_t* data, size_t size) {
  if (!data || size < 4 + 4 + 8 + 8 || std::memcmp(data, "GGUF", 4) != 0) return bad("not a GGUF file (no 'GGUF' magic)");
  Reader r(data + 4, size - 4);
  File f;
  f.data_ = data;
  POCK_RETURN_IF_ERROR(r.read(&f.version_, "version"));
  if (f.version_ != 2 && f.version_ != 3) return bad("version " + std::to_string(f.version_) + " is not supported (2 or 3)");
  uint64_t tensor_count = 0, kv_count = 0;
  POCK_RETURN_IF_ERROR(r.read(&tensor_count, "tensor count"));
  POCK_RETURN_IF_ERROR(r.read(&kv_count, "metadata count"));
  if (kv_count > r.left() / (8 + 4)) return bad(std::to_string(kv_count) + " metadata entries cannot fit in the file");
  f.metadata_begin_ = 4 + r.offset();
  for (uint64_t i = 0; i < kv_count; ++i) {
    std::string key;
    POCK_RETURN_IF_ERROR(r.read_string(&key, "metadata key " + std::to_string(i)));
    Value v;
    POCK_RETURN_IF_ERROR(r.read_value(&v, "metadata '" + key + "'"));
    if (!f.metadata_.emplace(key, std::move(v)).second) return bad("metadata key '" + key + "' appears twice");
  }
  f.metadata_end_ = 4 + r.offset();
  if (tensor_count > r.left() / kMinTensorInfoBytes) {
    return bad(std::to_string(tensor_count) + " tensors cannot fit in the file");
  }
  f.tensors_.reserve(static_cast<size_t>(tensor_count));
  for (uint64_t i = 0; i < tensor_count; ++i) {
    TensorInfo t;
    const std::string what = "tensor " + std::to_string(i);
    POCK_RETURN_IF_ERROR(r.read_string(&t.name, what + " name"));
    uint32_t rank = 0;
    POCK_RETURN_IF_ERROR(r.read(&rank, what + " rank"));
    if (rank == 0 || rank > kMaxDims) return bad(what + " '" + t.name + "': rank " + std::to_string(rank));
    t.dims.resize(rank);
    t.elements = 1;
    for (uint32_t d = 0; d < rank; ++d) {
      POCK_RETURN_IF_ERROR(r.read(&t.dims[d], what + " dims"));
      if (t.dims[d] == 0 || __builtin_mul_overflow(t.elements, t.dims[d], &t.elements)) {
        return bad(what + " '" + t.name + "': dimension " + std::to_string(t.dims[d]) + " is zero or too large");
      }
    }
    POCK_RETURN_IF_ERROR(r.read(&t.type, what + " type"));
    POCK_RETURN_IF_ERROR(r.read(&t.offset, what + " offset"));
    uint64_t per_block = 0, block_bytes = 0;
    if (!block_layout(t.type, &per_block, &block_bytes)) {
      return Status(Code::kUnsupportedOp, "GGUF: tensor '" + t.name + "' has type " + type_name(t.type) +
                                              ", which this reader does not convert (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q4_K, Q6_K)");
    }
    if (t.dims[0] % per_block != 0) return bad("tensor '" + t.name + "': rows are not whole " + type_name(t.type) + " blocks");
    // F32's 4 bytes per element overflow 64 bits from 2^62 elements on: such a tensor would wrap
    // to a few bytes, pass the bounds check below, and size an import by its dimensions.
    if (__builtin_mul_overflow(t.elements / per_block, block_bytes, &t.nbytes)) {
      return bad(what + " '" + t.name + "': " + std::to_string(t.elements) + " elements are more bytes than 64 bits count");
    }
    f.tensors_.push_back(std::move(t));
  }
  uint64_t alignment = 32;
  if (auto it = f.metadata_.find("general.alignment"); it != f.metadata_.end()) {
    const uint64_t* a = std::get_if<uint64_t>(&it->second.scalar);
    if (!a || *a == 0 || (*a & (*a - 1)) != 0 || *a > 4096) return bad("general.alignment must be a power of two up to 4096");
    alignment = *a;
  }
  f.alignment_ = alignment;
  const uint64_t header_end = 4 + r.offset();
  f.data_offset_ = (header_end + alignment - 1) / alignment * alignment;
  if (f.data_offset_ > size) return bad("the data section starts past the end of the file");
  const uint64_t data_bytes = size - f.data_offset_;
  for (const TensorInfo& t : f.tensors_) {
    if (t.offset % alignment != 0) return bad("tensor '" + t.name + "' is not aligned to " + std::to_string(alignment));
    if (t.offset > data_bytes || t.nbytes > data_bytes - t.offset) {
      return bad("tensor '" + t.name + "' (" + std::to_string(t.nbytes) + " bytes at " + std::to_string(t.offset) +
                 ") runs past the end of the file");
    }
  }
  return f;
}

const TensorInfo* File::find_tensor(const std::string& name) const {
  for (const TensorInfo& t : tensors_) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

Result<uint64_t> File::get_uint(const std::string& key) const {
  auto it = metadata_.find(key);
  if (it == metadata_.end() || it->second.is_array) return bad("metadata '" + key + "' is missing or not a number");
  if (const uint64_t* u = std::get_if<uint64_t>(&it->second.scalar)) return *u;
  if (const int64_t* i = std::get_if<int64_t>(&it->second.scalar); i && *i >= 0) return static_cast<uint64_t>(*i);
  return bad("metadata '" + key + "' is not a non-negative integer");
}

Result<double> File::get_float(const std::string& key) const {
  auto it = metadata_.find(key);
  if (it == metadata_.end() || it->second.is_array) return bad("metadata '" + key + "' is missing or not a number");
  if (const double* d = std::get_if<double>(&it->second.scalar)) return *d;
  return bad("metadata '" + key + "' is not a float");
}

Result<std::string> File::get_string(const std::string& key) const {
  auto it = metadata_.find(key);
  const std::string* s = it == metadata_.end() || it->second.is_array ? nullptr : std::get_if<std::string>(&it->second.scalar);
  if (!s) return bad("metadata '" + key + "' is missing or not a string");
  return *s;
}

}  // namespace pock::gguf
