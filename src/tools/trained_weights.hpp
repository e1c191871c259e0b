// The tensors a training run leaves, by their source names, from either file `pockc train`
// writes: the .npz of --save-weights (every parameter, with dtype and shape, but no BatchNorm
// running statistics: they are state, not parameters) or a --checkpoint (the trainable
// parameters, the running statistics the train step updates, and optimizer state; bytes only).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "pock/compiler/ir.hpp"
#include "pock/status.hpp"

namespace pock::tools {

struct TrainedTensor {
  std::string name;
  DType dtype = DType::kF32;
  Shape shape;
  bool typed = false;  // dtype and shape known: always from an .npz, from a checkpoint once matched
  std::vector<uint8_t> bytes;
};

struct TrainedWeights {
  std::string path;
  bool from_checkpoint = false;
  std::vector<TrainedTensor> tensors;  // by name
};

// Tells the two formats apart by their first bytes; errors name the file and the array.
Result<TrainedWeights> read_trained_weights(const std::string& path);
// A checkpoint only (its tensors untyped until matched to a model).
Result<TrainedWeights> read_checkpoint_weights(const std::string& path);

// Names of LoRA adapter weights (`*.lora_A.weight`, `*.lora_B.weight`): they belong to no source
// tensor until merged into their modules.
bool is_lora_adapter_name(const std::string& name);

}  // namespace pock::tools
