// A small hand-written program for blob, verifier and runtime tests. Written as a ProgramSpec
// (not through the compiler) so that a test can break exactly one field and know what the
// verifier must say, and so that it exercises every storage class:
//   y = LeakyRelu((x + bias) * scale, alpha = 0.1)
//   x     input             f32[2,3]  persistent
//   bias  frozen parameter  f32[3]    weights section
//   scale trainable param.  f32[3]    persistent, initial value from the weights section
//   sum, scaled             f32[2,3]  arena
//   y     output            f32[2,3]  persistent
//   step  state             i64[]     persistent (the step counter)
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "blob/program_spec.hpp"
#include "blob/writer.hpp"

namespace pock::test {

namespace tiny {
enum TensorIndex : int32_t { kX = 0, kBias, kScale, kSum, kScaled, kY, kStep, kNumTensors };
enum OpIndex : int32_t { kAddOp = 0, kMulOp, kActOp };
inline const std::vector<float> kBiasValues = {1.0f, -2.0f, 0.5f};
inline const std::vector<float> kScaleValues = {2.0f, 1.0f, -1.0f};
inline const std::vector<float> kInput = {1, 1, 1, -3, 5, -1};
// (x + bias) * scale = {4, -1, -1.5, -4, 3, 0.5}, then LeakyRelu(0.1).
inline const std::vector<float> kExpectedOutput = {4.0f, -0.1f, -0.15f, -0.4f, 3.0f, 0.5f};
}  // namespace tiny

inline TensorSpec tiny_tensor(std::string name, DType dtype, Shape shape, TensorKind kind, Storage storage,
                              uint64_t offset) {
  TensorSpec t;
  t.name = std::move(name);
  t.dtype = dtype;
  t.nbytes = static_cast<uint64_t>(numel(shape)) * dtype_size(dtype);
  t.shape = std::move(shape);
  t.kind = kind;
  t.storage = storage;
  t.offset = offset;
  return t;
}

inline ProgramSpec tiny_program() {
  ProgramSpec spec;
  const uint64_t bias_offset = spec.add_weight(tiny::kBiasValues.data(), tiny::kBiasValues.size() * sizeof(float));
  const uint64_t scale_init = spec.add_weight(tiny::kScaleValues.data(), tiny::kScaleValues.size() * sizeof(float));

  spec.tensors.resize(tiny::kNumTensors);
  spec.tensors[tiny::kX] = tiny_tensor("x", DType::kF32, {2, 3}, TensorKind::kInput, Storage::kPersistent, 0);
  spec.tensors[tiny::kBias] = tiny_tensor("bias", DType::kF32, {3}, TensorKind::kParameter, Storage::kWeights, bias_offset);
  TensorSpec& scale = spec.tensors[tiny::kScale];
  scale = tiny_tensor("scale", DType::kF32, {3}, TensorKind::kParameter, Storage::kPersistent, 64);
  scale.trainable = true;
  scale.checkpointed = true;
  scale.has_init = true;
  scale.init_offset = scale_init;
  spec.tensors[tiny::kSum] = tiny_tensor("sum", DType::kF32, {2, 3}, TensorKind::kActivation, Storage::kArena, 0);
  spec.tensors[tiny::kScaled] = tiny_tensor("scaled", DType::kF32, {2, 3}, TensorKind::kActivation, Storage::kArena, 64);
  spec.tensors[tiny::kY] = tiny_tensor("y", DType::kF32, {2, 3}, TensorKind::kOutput, Storage::kPersistent, 128);
  TensorSpec& step = spec.tensors[tiny::kStep];
  step = tiny_tensor("step", DType::kI64, {}, TensorKind::kState, Storage::kPersistent, 192);
  step.checkpointed = true;

  spec.ops.push_back(OpSpec{"Add", "add", {tiny::kX, tiny::kBias}, {tiny::kSum}, {}, "ref"});
  spec.ops.push_back(OpSpec{"Mul", "mul", {tiny::kSum, tiny::kScale}, {tiny::kScaled}, {}, "ref"});
  spec.ops.push_back(OpSpec{"LeakyRelu", "act", {tiny::kScaled}, {tiny::kY}, Attrs{{"alpha", 0.1}}, "ref"});

  FunctionSpec infer;
  infer.name = "infer";
  infer.ops = {tiny::kAddOp, tiny::kMulOp, tiny::kActOp};
  infer.inputs = {tiny::kX};
  infer.outputs = {tiny::kY};
  infer.arena_bytes = 128;
  spec.functions.push_back(infer);

  spec.arena_bytes = 128;
  spec.persistent_bytes = 256;
  spec.step_tensor = tiny::kStep;
  spec.metadata = R"({"producer":"tests/support/tiny_blob.hpp"})";
  return spec;
}

// The serialized blob; the test fails loudly (empty result) if the writer refuses the program.
inline std::vector<uint8_t> write_tiny_blob(const ProgramSpec& spec) {
  std::vector<uint8_t> bytes;
  if (!write_blob(spec, &bytes).is_ok()) bytes.clear();
  return bytes;
}

inline std::vector<uint8_t> tiny_blob() { return write_tiny_blob(tiny_program()); }

// Kernels may round differently from the hand computation; a relative 1e-6 is float32 noise.
inline bool nearly_equal(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const float scale = std::max(1.0f, std::max(std::fabs(a[i]), std::fabs(b[i])));
    if (!(std::fabs(a[i] - b[i]) <= 1e-6f * scale)) return false;
  }
  return true;
}

}  // namespace pock::test
