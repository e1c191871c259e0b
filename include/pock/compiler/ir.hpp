// The compiler's graph IR: tensors and nodes over the shared types (pock/types.hpp). Deliberately
// plain data: passes rewrite it, the blob writer serializes it.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pock/types.hpp"

namespace pock {

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
