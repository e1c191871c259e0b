// Fuzz target: a Hugging Face checkpoint as `pockc compile FOLDER` reads it. The input is
// config.json's text, a NUL byte, then a safetensors file; an input without that shape is the
// safetensors file alone, imported under a tiny BERT's and a tiny LLaMA's config (those of the
// fixtures in tests/frontend/safetensors, whose model.safetensors files are seeds). Every tensor
// the reader accepts is converted to f32 too. Sizes a header or config claims must be checked
// against the file before use.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "frontend/safetensors/safetensors_file.hpp"
#include "pock/compiler/safetensors.hpp"

namespace {

const char* const kBertConfig =
    R"({"architectures":["BertModel"],"hidden_act":"gelu","hidden_size":8,"intermediate_size":12,)"
    R"("max_position_embeddings":16,"model_type":"bert","num_attention_heads":2,"num_hidden_layers":2,)"
    R"("type_vocab_size":2,"vocab_size":20})";
const char* const kLlamaConfig =
    R"({"architectures":["LlamaForCausalLM"],"hidden_size":8,"intermediate_size":12,"model_type":"llama",)"
    R"("num_attention_heads":2,"num_hidden_layers":2,"num_key_value_heads":1,"rms_norm_eps":1e-05,)"
    R"("rope_theta":500.0,"tie_word_embeddings":false,"vocab_size":16})";

void read_every_tensor(const std::vector<uint8_t>& bytes) {
  auto file = pock::safetensors::File::parse(bytes.data(), bytes.size());
  if (!file.is_ok()) return;
  std::vector<float> values;
  for (const pock::safetensors::TensorInfo& t : file->tensors()) (void)pock::safetensors::to_f32(*file, t, &values);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const uint8_t* nul = size > 0 && data[0] == '{' ? std::find(data, data + size, uint8_t{0}) : data + size;
  pock::HfImportOptions options;
  options.seq_len = 4;
  options.attention_mask = true;  // BERT's optional inputs too; LLaMA ignores them
  options.token_type_ids = true;
  if (nul != data + size) {
    const std::string config(reinterpret_cast<const char*>(data), static_cast<size_t>(nul - data));
    const std::vector<uint8_t> file(nul + 1, data + size);  // a copy of its own: ASan sees overreads
    read_every_tensor(file);
    (void)pock::import_hf_bytes(config, file.data(), file.size(), options);
    return 0;
  }
  const std::vector<uint8_t> file(data, data + size);
  read_every_tensor(file);
  for (const char* config : {kBertConfig, kLlamaConfig}) (void)pock::import_hf_bytes(config, file.data(), file.size(), options);
  return 0;
}
