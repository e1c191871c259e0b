// import_gguf: a GGUF file of general.architecture "llama" into models::llama_causal_lm's graph,
// with q_proj/k_proj rows put back in transformers' order (llama_names.hpp), so the graph is the
// Hugging Face model.
#include <algorithm>
#include <fstream>
#include <iterator>

#include "frontend/gguf/ggml_types.hpp"
#include "frontend/gguf/gguf_file.hpp"
#include "frontend/gguf/llama_from_gguf.hpp"
#include "frontend/gguf/llama_names.hpp"
#include "pock/compiler/gguf.hpp"
#include "pock/compiler/models.hpp"

namespace pock {
namespace {

Status bad(const std::string& what) { return Status(Code::kInvalidArgument, "GGUF: " + what); }

// Every tensor the configuration implies exists with its shape, checked before a graph of that
// size is built: the metadata alone (a block count of millions) must not size anything.
Status check_tensors(const gguf::File& f, const models::LlamaConfig& c) {
  if (c.num_heads % c.num_kv_heads != 0 || c.hidden_size % c.num_heads != 0) {
    return bad("head counts " + std::to_string(c.num_heads) + "/" + std::to_string(c.num_kv_heads) +
               " do not divide the embedding length " + std::to_string(c.hidden_size));
  }
  const int64_t kv = c.hidden_size / c.num_heads * c.num_kv_heads;
  auto expect = [&](const std::string& name, int64_t rows, int64_t cols) -> Status {
    const gguf::TensorInfo* t = f.find_tensor(name);
    const std::vector<uint64_t> want = cols > 0 ? std::vector<uint64_t>{uint64_t(cols), uint64_t(rows)}
                                                : std::vector<uint64_t>{uint64_t(rows)};
    if (!t) return bad("tensor '" + name + "' is missing");
    if (t->dims != want) return bad("tensor '" + name + "' does not have the shape the metadata implies");
    return Status::ok();
  };
  const int64_t h = c.hidden_size;
  POCK_RETURN_IF_ERROR(expect("token_embd.weight", c.vocab_size, h));
  POCK_RETURN_IF_ERROR(expect("output_norm.weight", h, 0));
  if (!c.tie_word_embeddings) POCK_RETURN_IF_ERROR(expect("output.weight", c.vocab_size, h));
  if (static_cast<uint64_t>(c.num_layers) * 9 > f.tensors().size()) {
    return bad("block_count " + std::to_string(c.num_layers) + " needs more tensors than the file has");
  }
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    POCK_RETURN_IF_ERROR(expect(b + "attn_norm.weight", h, 0));
    POCK_RETURN_IF_ERROR(expect(b + "attn_q.weight", h, h));
    POCK_RETURN_IF_ERROR(expect(b + "attn_k.weight", kv, h));
    POCK_RETURN_IF_ERROR(expect(b + "attn_v.weight", kv, h));
    POCK_RETURN_IF_ERROR(expect(b + "attn_output.weight", h, h));
    POCK_RETURN_IF_ERROR(expect(b + "ffn_norm.weight", h, 0));
    POCK_RETURN_IF_ERROR(expect(b + "ffn_gate.weight", c.intermediate_size, h));
    POCK_RETURN_IF_ERROR(expect(b + "ffn_up.weight", c.intermediate_size, h));
    POCK_RETURN_IF_ERROR(expect(b + "ffn_down.weight", h, c.intermediate_size));
  }
  return Status::ok();
}

// The blocks of a quantized 2-D tensor, row by row, with the q_proj/k_proj rows in transformers'
// order (a row of blocks moves as the row of values does); null for F32/F16/BF16 tensors.
std::shared_ptr<const SourceBlocks> source_blocks(const gguf::File& f, const gguf::TensorInfo& t, int64_t heads) {
  const std::optional<BlockFormat> format = gguf::block_format_of(t.type);
  if (!format || t.dims.size() != 2) return nullptr;
  const int64_t cols = static_cast<int64_t>(t.dims[0]), rows = static_cast<int64_t>(t.dims[1]);
  const int64_t row_bytes = block_row_bytes(*format, cols);
  if (row_bytes < 0) return nullptr;
  const uint8_t* data = f.tensor_data(t);
  auto bytes = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(rows * row_bytes));
  const std::vector<int64_t> order = heads > 0 ? gguf::hf_row_order(rows, heads) : std::vector<int64_t>{};
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t from = heads > 0 ? order[static_cast<size_t>(r)] : r;
    std::copy_n(data + from * row_bytes, row_bytes, bytes->data() + r * row_bytes);
  }
  return std::make_shared<const SourceBlocks>(SourceBlocks{block_format_name(*format), std::move(bytes)});
}

}  // namespace

Result<models::LlamaConfig> llama_config(const gguf::File& f, const GgufImportOptions& o) {
  POCK_ASSIGN_OR_RETURN(const std::string arch, f.get_string("general.architecture"));
  if (arch != "llama") return Status(Code::kUnsupportedOp, "GGUF: architecture '" + arch + "' is not supported (llama)");
  models::LlamaConfig c;
  c.batch = o.batch;
  c.seq_len = o.seq_len;
  c.decode_cache = o.decode_cache;
  auto count = [&](const char* key, int64_t* out) -> Status {
    POCK_ASSIGN_OR_RETURN(const uint64_t v, f.get_uint(key));
    if (v == 0 || v > (uint64_t{1} << 24)) return bad(std::string("metadata '") + key + "' = " + std::to_string(v) + " is out of range");
    *out = static_cast<int64_t>(v);
    return Status::ok();
  };
  POCK_RETURN_IF_ERROR(count("llama.block_count", &c.num_layers));
  POCK_RETURN_IF_ERROR(count("llama.embedding_length", &c.hidden_size));
  POCK_RETURN_IF_ERROR(count("llama.feed_forward_length", &c.intermediate_size));
  POCK_RETURN_IF_ERROR(count("llama.attention.head_count", &c.num_heads));
  c.num_kv_heads = c.num_heads;
  if (f.metadata().count("llama.attention.head_count_kv")) POCK_RETURN_IF_ERROR(count("llama.attention.head_count_kv", &c.num_kv_heads));
  POCK_ASSIGN_OR_RETURN(c.rms_norm_eps, f.get_float("llama.attention.layer_norm_rms_epsilon"));
  c.rope_theta = 10000.0;
  if (f.metadata().count("llama.rope.freq_base")) {
    POCK_ASSIGN_OR_RETURN(c.rope_theta, f.get_float("llama.rope.freq_base"));
  }
  if (!(c.rope_theta > 0.0) || !(c.rms_norm_eps >= 0.0)) return bad("rope.freq_base or layer_norm_rms_epsilon is out of range");
  const gguf::TensorInfo* embed = f.find_tensor("token_embd.weight");
  if (!embed || embed->dims.size() != 2) return bad("no 2-D token_embd.weight");
  c.vocab_size = static_cast<int64_t>(embed->dims[1]);
  c.tie_word_embeddings = f.find_tensor("output.weight") == nullptr;
  POCK_RETURN_IF_ERROR(check_tensors(f, c));
  return c;
}

Result<Graph> import_gguf_bytes(const uint8_t* data, size_t size, const GgufImportOptions& options) {
  if (options.batch < 1 || options.seq_len < 1 || options.decode_cache < 0) {
    return Status(Code::kInvalidArgument, "GGUF import: batch and seq_len must be >= 1, decode_cache >= 0");
  }
  POCK_ASSIGN_OR_RETURN(const gguf::File file, gguf::File::parse(data, size));
  POCK_ASSIGN_OR_RETURN(const models::LlamaConfig config, llama_config(file, options));
  POCK_ASSIGN_OR_RETURN(Graph graph, models::llama_causal_lm(config));
  models::WeightMap weights;
  std::vector<std::pair<std::string, std::shared_ptr<const SourceBlocks>>> blocks;
  for (const gguf::TensorInfo& t : file.tensors()) {
    POCK_ASSIGN_OR_RETURN(const gguf::LlamaTensorName name, gguf::llama_tensor_name(t.name, config.num_heads, config.num_kv_heads));
    if (t.elements > (uint64_t{1} << 34)) return bad("tensor '" + t.name + "' is too large");
    std::vector<float> values(static_cast<size_t>(t.elements));
    POCK_RETURN_IF_ERROR(gguf::to_f32(t.type, file.tensor_data(t), t.elements, values.data()));
    if (name.heads > 0) {
      const int64_t cols = static_cast<int64_t>(t.dims[0]), rows = static_cast<int64_t>(t.elements) / cols;
      if (t.dims.size() != 2 || rows % name.heads != 0 || (rows / name.heads) % 2 != 0) {
        return bad("tensor '" + t.name + "' does not split into " + std::to_string(name.heads) + " heads");
      }
      values = gguf::reorder_head_rows(values, cols, name.heads, /*to_hf=*/true);
    }
    weights[name.hf] = std::move(values);
    if (options.keep_source_blocks) {
      if (auto b = source_blocks(file, t, name.heads)) blocks.emplace_back(name.hf, std::move(b));
    }
  }
  models::LoadWeightsOptions load;
  load.require_all = true;
  POCK_RETURN_IF_ERROR(models::load_weights(graph, weights, load));
  for (auto& [name, b] : blocks) graph.mutable_tensor(graph.find(name)).source_blocks = std::move(b);
  return graph;
}

Result<Graph> import_gguf(const std::string& path, const GgufImportOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(Code::kIo, "cannot open '" + path + "'");
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto graph = import_gguf_bytes(bytes.data(), bytes.size(), options);
  if (!graph.is_ok()) return Status(graph.status().code(), path + ": " + graph.status().message());
  return graph;
}

}  // namespace pock
