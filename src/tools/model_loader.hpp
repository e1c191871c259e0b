// Picks the frontend for a model file by its extension (a folder with config.json: Hugging Face).
#pragma once
#include <string>
#include <vector>

#include "pock/compiler/graph.hpp"

namespace pock::tools {

struct ModelLoadOptions {
  std::vector<std::string> input_shapes;  // --input-shape arguments, "NAME=d0,d1" or "@DIM=N"
  std::vector<std::string> binds;         // --bind arguments (ONNX), "NAME=v0,v1" or "NAME=@values.npy"
  int64_t batch_size = 0;                 // leading dim of every input (the recipe's batch_size)
  int64_t kv_cache = 0;                   // language models: a decode function with this KV cache (--kv-cache)
  int64_t num_labels = -1;                // Hugging Face BERT: classifier labels, 0 none, -1 the checkpoint's (--num-labels)
};

Result<Graph> load_model(const std::string& path, const ModelLoadOptions& options);

}  // namespace pock::tools
