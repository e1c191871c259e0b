// The safetensors format (Hugging Face's checkpoint files) read from bytes in memory: an 8-byte
// little-endian header length, a JSON header giving each tensor's dtype, shape and byte range
// within the data that follows, then the data. As the format's specification demands, the ranges
// tile the data exactly (no overlaps, no holes). Every length, offset, shape product and dtype is
// checked against the file before use, so a hostile file is an error naming the tensor, never a
// crash or an allocation the file cannot back. Tensor data stays in the caller's buffer.
// Specification: https://github.com/huggingface/safetensors (README, "Format").
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pock/status.hpp"

namespace pock::safetensors {

struct TensorInfo {
  std::string name;
  std::string dtype;            // as the file names it: "F32", "F16", "BF16", "I64", ...
  std::vector<uint64_t> shape;  // row-major, as in PyTorch
  uint64_t elements = 0;
  uint64_t begin = 0, end = 0;  // byte range within the data section
};

class File {
 public:
  // The header is at most this large (real ones are kilobytes; a megabyte for the largest
  // models): the JSON document it parses into must stay small.
  static constexpr uint64_t kMaxHeaderBytes = uint64_t{16} << 20;

  // `data` must outlive the File (tensor data is read in place).
  static Result<File> parse(const uint8_t* data, size_t size);

  const std::vector<TensorInfo>& tensors() const { return tensors_; }  // in data order
  const TensorInfo* find(const std::string& name) const;
  // The header's optional "__metadata__" (string to string; {"format": "pt"} from PyTorch).
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const uint8_t* tensor_data(const TensorInfo& t) const { return data_ + t.begin; }

 private:
  const uint8_t* data_ = nullptr;  // the data section
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t> by_name_;
  std::map<std::string, std::string> metadata_;
};

// Bytes per element of a dtype the format defines; 0 for a name it does not.
uint64_t dtype_size(const std::string& dtype);

// A tensor of dtype F32, F16 or BF16 as f32 values (little-endian, as the format stores them);
// any other dtype is an error naming the tensor and its dtype.
Status to_f32(const File& file, const TensorInfo& t, std::vector<float>* values);

}  // namespace pock::safetensors
