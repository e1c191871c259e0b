// A program as plain C++ data: what the compiler produces and the blob writer serializes; also
// what read_blob() returns for inspection and round-trip tests. The runtime reads the FlatBuffer
// directly instead (no copies of the weights).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "pock/types.hpp"

namespace pock {

enum class Storage : uint8_t { kWeights = 0, kPersistent = 1, kArena = 2 };

struct TensorSpec {
  std::string name;
  DType dtype = DType::kF32;
  Shape shape;
  TensorKind kind = TensorKind::kActivation;
  bool trainable = false;
  Storage storage = Storage::kArena;
  uint64_t offset = 0;
  uint64_t nbytes = 0;
  bool has_init = false;
  uint64_t init_offset = 0;
  bool checkpointed = false;
  int64_t channels = -1;
  uint8_t space = 0;      // 0: host; k: ProgramSpec::spaces[k - 1]
  bool constant = false;  // never written while an engine runs (blob weights and their device replicas)
  bool operator==(const TensorSpec&) const = default;
};

struct OpSpec {
  std::string op;
  std::string name;
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
  Attrs attrs;
  std::string backend;
  bool operator==(const OpSpec&) const = default;
};

struct FunctionSpec {
  std::string name;
  std::vector<uint32_t> ops;
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
  int32_t loss = -1;
  uint64_t arena_bytes = 0;
  bool operator==(const FunctionSpec&) const = default;
};

// A memory space of a backend that keeps tensors in memory of its own: its persistent region
// and arena, allocated through that backend when the engine opens.
struct MemorySpaceSpec {
  std::string backend;
  uint64_t arena_bytes = 0;
  uint64_t persistent_bytes = 0;
  bool operator==(const MemorySpaceSpec&) const = default;
};

struct ProgramSpec {
  std::vector<TensorSpec> tensors;
  std::vector<OpSpec> ops;
  std::vector<FunctionSpec> functions;
  uint64_t arena_bytes = 0;
  uint64_t persistent_bytes = 0;
  int32_t step_tensor = -1;
  std::vector<MemorySpaceSpec> spaces;  // besides the host's; empty for a host-only program
  std::string metadata;
  std::vector<uint8_t> weights;  // the weights section, 64-byte aligned offsets
  bool operator==(const ProgramSpec&) const = default;

  // Appends bytes to the weights section at a 64-byte aligned offset; returns the offset.
  uint64_t add_weight(const void* data, size_t size);
};

}  // namespace pock
