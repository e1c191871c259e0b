// Fuzz target: parse a GGUF file, convert every tensor it lists to f32, import it as a llama
// model, as `pockc compile model.gguf` does, and load its tokenizer and encode with it. Sizes a file claims must be checked against the file before use.
#include <cstdint>
#include <vector>

#include "frontend/gguf/ggml_types.hpp"
#include "frontend/gguf/gguf_file.hpp"
#include "pock/compiler/gguf.hpp"
#include "pock/tokenizer.hpp"

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
  // And as a model: metadata that sizes a graph must be backed by the file's tensors.
  (void)pock::import_gguf_bytes(bytes.data(), bytes.size(), {1, 4});
  // And as a tokenizer: hostile vocabularies and merges must be errors; encode/decode round trips.
  auto tok = pock::Tokenizer::from_gguf_bytes(bytes.data(), bytes.size());
  if (tok.is_ok()) {
    auto ids = tok->encode("Hello, world! 123 <|im_start|> caf\xc3\xa9 \xff");
    if (ids.is_ok()) (void)tok->decode(ids.value());
  }
  return 0;
}
