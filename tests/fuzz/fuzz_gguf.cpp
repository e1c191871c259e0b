// Fuzz target: parse a GGUF file and convert every tensor it lists to f32, as the GGUF frontend
// reads a checkpoint. Sizes a file claims must be checked against the file before use.
#include <cstdint>
#include <vector>

#include "frontend/gguf/ggml_types.hpp"
#include "frontend/gguf/gguf_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<uint8_t> bytes(data, data + size);  // parse reads in place: keep a stable copy
  auto file = pock::gguf::File::parse(bytes.data(), bytes.size());
  if (!file.is_ok()) return 0;
  std::vector<float> values;
  for (const pock::gguf::TensorInfo& t : file->tensors()) {
    if (t.elements > (uint64_t{1} << 22)) continue;  // time, not safety: the bytes are in the file
    values.resize(static_cast<size_t>(t.elements));
    (void)pock::gguf::to_f32(t.type, file->tensor_data(t), t.elements, values.data());
  }
  return 0;
}
