// The compiler's graph IR: tensors and nodes over the shared types (pock/types.hpp). Deliberately
// plain data: passes rewrite it, the blob writer serializes it.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pock/types.hpp"

namespace pock {

// A weight's rows as a block-quantized source stored them: `format` names the block layout
// (src/ir/block_format.hpp: "q8_0", "q4_0", "q4_1", "q4_k", "q6_k"), `rows` holds numel / cols
// rows of cols / block_values blocks each, back to back.
struct SourceBlocks {
  std::string format;
  std::shared_ptr<const std::vector<uint8_t>> rows;
};

struct TensorDesc {
  std::string name;
  DType dtype = DType::kF32;
  Shape shape;
  TensorKind kind = TensorKind::kActivation;
  bool trainable = false;            // parameters only
  std::shared_ptr<const std::vector<uint8_t>> data;  // initial value (parameters, constants, state)
  // Trainable parameters only: partial-channel update of the leading `channels` rows (output
  // channels of an [O, ...] weight) that get a gradient and an update; -1: every row.
  int64_t channels = -1;
  // State only: a cache a function keeps between its runs (a KV cache), not part of the model:
  // zero when an engine opens, left out of checkpoints and of a failed step's rollback.
  bool cache = false;
  // Parameters imported from block-quantized files (GGUF Q8_0/Q4_x): the source's blocks, one
  // row of blocks per output row, beside the f32 values (which trainable selection and f32
  // compiles read). Recipe frozen_weights "source" runs a frozen weight on these instead.
  std::shared_ptr<const SourceBlocks> source_blocks;
  size_t nbytes() const { return static_cast<size_t>(numel(shape)) * dtype_size(dtype); }
};

using TensorId = int32_t;
constexpr TensorId kNoTensor = -1;

// Which part of a training step a node belongs to (reports, FLOP counts, saved activations).
enum class Phase : uint8_t { kForward = 0, kLoss, kBackward, kUpdate };

struct Node {
  std::string op;
  std::string name;                 // from the source model where it has one; for messages
  std::vector<TensorId> inputs;     // kNoTensor marks an omitted optional input
  std::vector<TensorId> outputs;
  Attrs attrs;
  Phase phase = Phase::kForward;
  // Backend the compiler placed the node on (src/compiler/placement); "" until placement runs.
  std::string backend;
};

}  // namespace pock
