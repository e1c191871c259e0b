// The tensors of a Hugging Face checkpoint by name, over one safetensors file or the shards a
// model.safetensors.index.json lists, and what the model importers need from them: shapes checked
// against what a configuration implies before a graph is built, and values as f32.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "frontend/safetensors/safetensors_file.hpp"
#include "pock/compiler/models.hpp"
#include "pock/status.hpp"
#include "runtime/mapped_file.hpp"

namespace pock::hf {

// A tensor the configuration implies: its name in the checkpoint and in the graph, and its shape.
struct ExpectedTensor {
  std::string checkpoint_name;
  std::string graph_name;
  std::vector<uint64_t> shape;
};

class Checkpoint {
 public:
  // The checkpoint of a folder: model.safetensors, or the shards of model.safetensors.index.json
  // (every listed tensor in the shard the index names, and nothing unlisted), memory-mapped.
  static Result<Checkpoint> open_folder(const std::string& folder);
  // One safetensors file in memory (kept alive by the caller), named `file_name` in errors.
  static Result<Checkpoint> from_bytes(const uint8_t* data, size_t size, const std::string& file_name);

  const safetensors::TensorInfo* find(const std::string& name) const;
  size_t size() const { return tensors_.size(); }
  std::vector<std::string> names_starting_with(const std::string& prefix) const;

  // Every expected tensor exists with its shape, and every tensor of the checkpoint is expected
  // or in `ignored` (buffers transformers saves that the graph has no place for).
  Status check(const std::vector<ExpectedTensor>& expected, const std::set<std::string>& ignored) const;
  // The expected tensors' values as f32, by graph name (checked first).
  Result<models::WeightMap> read(const std::vector<ExpectedTensor>& expected) const;

 private:
  struct Source {
    const safetensors::File* file;
    const safetensors::TensorInfo* info;
    std::string file_name;
  };
  Status add(const uint8_t* data, size_t size, const std::string& file_name);

  std::vector<std::unique_ptr<MappedFile>> maps_;
  std::vector<std::unique_ptr<safetensors::File>> files_;
  std::map<std::string, Source> tensors_;
};

}  // namespace pock::hf
