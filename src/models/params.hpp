// Parameter creation for the model zoo. Each parameter's initial values are drawn from a stream
// keyed by (model seed, parameter name), so adding or reordering layers never changes the values
// of the others; the generator (splitmix64 + the polar method, in double) gives the same values
// on every platform up to last-bit differences of libm's log.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "pock/compiler/builder.hpp"

namespace pock::models {

class Params {
 public:
  Params(ModelBuilder& builder, uint64_t seed) : b_(builder), seed_(seed) {}
  ModelBuilder& builder() { return b_; }
  // From now on a parameter whose name the graph already has is that tensor, not a new one: a
  // second path through the same weights (a decode step) is built with the same layer code.
  void reuse_existing() { reuse_ = true; }

  // Normal(0, std): Hugging Face's Linear / Embedding init, torchvision's kaiming-normal convs.
  TensorId normal(const std::string& name, Shape shape, double std);
  // The values normal() would give `name`, for callers that edit them first (a padding row).
  std::vector<float> normal_values(const std::string& name, int64_t count, double std) const;
  // Uniform in [-bound, bound): PyTorch's default Linear init (bound 1/sqrt(fan_in)).
  TensorId uniform(const std::string& name, Shape shape, double bound);
  TensorId fill(const std::string& name, Shape shape, float value);
  // Non-trainable state (BatchNorm running statistics), filled with `value`.
  TensorId state(const std::string& name, Shape shape, float value);

 private:
  uint64_t seed_for(const std::string& name) const;
  TensorId existing(const std::string& name) const { return reuse_ ? b_.graph().find(name) : kNoTensor; }

  ModelBuilder& b_;
  uint64_t seed_;
  bool reuse_ = false;
};

}  // namespace pock::models
