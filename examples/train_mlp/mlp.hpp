// The example's model and data: a two-layer perceptron over synthetic 4-class clusters.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "pock/compiler/graph.hpp"

namespace example {

constexpr int64_t kBatch = 32;
constexpr int64_t kFeatures = 8;
constexpr int64_t kHidden = 16;
constexpr int64_t kClasses = 4;

// x [kBatch, kFeatures] -> fc1 -> Relu -> fc2 -> logits [kBatch, kClasses]. Parameters are named
// as PyTorch would name them ("fc1.weight", ...) so recipes can select them by name.
pock::Result<pock::Graph> build_mlp(uint32_t seed);

// Points scattered around one fixed centre per class: separable, but not by a single feature.
class ClusterData {
 public:
  explicit ClusterData(uint32_t seed);
  // Fills one batch: features row-major [kBatch, kFeatures], labels [kBatch].
  void next_batch(std::vector<float>* features, std::vector<int64_t>* labels);

 private:
  std::mt19937 rng_;
  std::vector<float> centres_;  // [kClasses, kFeatures]
};

}  // namespace example
