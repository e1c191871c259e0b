// Test support for the safetensors frontend: the fixtures make_fixture.py wrote
// (tests/frontend/safetensors) and safetensors files made here, well-formed or hostile.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pock::test {

inline const std::string kSafetensorsDir = std::string(POCK_TESTS_DIR) + "/frontend/safetensors";

// 8-byte little-endian header length, the header text as given, then the data.
inline std::vector<uint8_t> safetensors_bytes(const std::string& header, const std::vector<uint8_t>& data) {
  std::vector<uint8_t> out;
  out.reserve(8 + header.size() + data.size());
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(uint64_t{header.size()} >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

struct StTensor {
  std::string name;
  std::string dtype;
  std::vector<uint64_t> shape;
  std::vector<uint8_t> bytes;
};

// A well-formed file: the tensors' data one after the other, in the given order.
inline std::vector<uint8_t> safetensors_bytes(const std::vector<StTensor>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  std::vector<uint8_t> data;
  for (const StTensor& t : tensors) {
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {data.size(), data.size() + t.bytes.size()}}};
    data.insert(data.end(), t.bytes.begin(), t.bytes.end());
  }
  return safetensors_bytes(header.dump(), data);
}

inline StTensor f32_tensor(const std::string& name, std::vector<uint64_t> shape, float value = 0.5f) {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  std::vector<uint8_t> bytes(n * 4);
  for (uint64_t i = 0; i < n; ++i) std::memcpy(bytes.data() + 4 * i, &value, 4);
  return {name, "F32", std::move(shape), std::move(bytes)};
}

}  // namespace pock::test
