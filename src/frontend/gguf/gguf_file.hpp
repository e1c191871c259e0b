// GGUF (llama.cpp's checkpoint format, version 2 and 3) read from bytes in memory: the metadata
// key/value pairs and the tensor directory, every count, length, offset and size checked against
// the file before it is used (a hostile file is an error naming the field, never a crash or an
// allocation the file cannot back). Tensor data stays in the caller's buffer; ggml_types.hpp
// turns it into floats. Layout: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "pock/status.hpp"

namespace pock::gguf {

// A metadata value: a scalar, a string, or an array of either (arrays of arrays are refused).
using Scalar = std::variant<uint64_t, int64_t, double, bool, std::string>;
struct Value {
  Scalar scalar;
  std::vector<Scalar> array;
  bool is_array = false;
};

struct TensorInfo {
  std::string name;
  std::vector<uint64_t> dims;  // ggml order: dims[0] varies fastest (a row of a [N, K] matrix is dims[0] = K)
  uint32_t type = 0;           // ggml_type (ggml_types.hpp)
  uint64_t offset = 0;         // from the start of the data section
  uint64_t elements = 0;
  uint64_t nbytes = 0;
};

class File {
 public:
  // `data` must outlive the File (tensor data is read in place).
  static Result<File> parse(const uint8_t* data, size_t size);

  uint32_t version() const { return version_; }
  const std::map<std::string, Value>& metadata() const { return metadata_; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find_tensor(const std::string& name) const;
  // The bytes of a tensor (in bounds: checked by parse).
  const uint8_t* tensor_data(const TensorInfo& t) const { return data_ + data_offset_ + t.offset; }
  // The metadata section as stored (its key/value pairs, each with its original value type), so
  // that a writer can carry it over unchanged; and the data alignment the file uses.
  const uint8_t* metadata_bytes() const { return data_ + metadata_begin_; }
  uint64_t metadata_size() const { return metadata_end_ - metadata_begin_; }
  uint64_t alignment() const { return alignment_; }

  // Typed metadata lookups: an error names the key when it is absent or of another type.
  Result<uint64_t> get_uint(const std::string& key) const;
  Result<double> get_float(const std::string& key) const;
  Result<std::string> get_string(const std::string& key) const;

 private:
  const uint8_t* data_ = nullptr;
  uint64_t data_offset_ = 0;
  uint64_t metadata_begin_ = 0, metadata_end_ = 0;
  uint64_t alignment_ = 32;
  uint32_t version_ = 0;
  std::map<std::string, Value> metadata_;
  std::vector<TensorInfo> tensors_;
};

}  // namespace pock::gguf
