// Writes GGUF version 3 files (llama.cpp's checkpoint format), atomically: the metadata section
// as bytes (carried over from a file read with gguf::File, or built with MetadataBuilder) and
// the tensors, each aligned as the format requires.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "pock/status.hpp"

namespace pock::gguf {

// Key/value pairs in GGUF's encoding, appended one at a time.
class MetadataBuilder {
 public:
  void add_string(const std::string& key, const std::string& value);
  void add_u32(const std::string& key, uint32_t value);
  void add_f32(const std::string& key, float value);
  void add_string_array(const std::string& key, const std::vector<std::string>& values);
  // Appends pairs already encoded (a File's metadata_bytes()), `count` of them.
  void add_encoded(const uint8_t* bytes, uint64_t size, uint64_t count);

  const std::vector<uint8_t>& bytes() const { return bytes_; }
  uint64_t count() const { return count_; }

 private:
  void key(const std::string& k, uint32_t type);
  std::vector<uint8_t> bytes_;
  uint64_t count_ = 0;
};

struct TensorToWrite {
  std::string name;
  std::vector<uint64_t> dims;  // ggml order: dims[0] varies fastest
  uint32_t type = 0;
  const uint8_t* data = nullptr;  // the tensor's bytes in `type`, as many as dims and type imply
  uint64_t nbytes = 0;
};

// `alignment` must be the one the metadata declares (general.alignment, else 32).
Status write_gguf(const std::string& path, const MetadataBuilder& metadata, const std::vector<TensorToWrite>& tensors,
                  uint64_t alignment = 32);

}  // namespace pock::gguf
