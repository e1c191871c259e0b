#include "mlp.hpp"

#include <cmath>
#include <string>

namespace example {
namespace {

// PyTorch's default Linear initialisation: uniform in +-1/sqrt(fan_in).
std::vector<float> uniform_init(size_t count, int64_t fan_in, std::mt19937& rng) {
  const float bound = 1.0f / std::sqrt(static_cast<float>(fan_in));
  std::uniform_real_distribution<float> dist(-bound, bound);
  std::vector<float> values(count);
  for (float& v : values) v = dist(rng);
  return values;
}

pock::Result<pock::TensorId> linear(pock::Graph& g, pock::TensorId x, const std::string& name, int64_t in,
                                    int64_t out, std::mt19937& rng) {
  const pock::TensorId w = g.add_parameter_f32(name + ".weight", {out, in}, uniform_init(out * in, in, rng));
  const pock::TensorId b = g.add_parameter_f32(name + ".bias", {out}, uniform_init(out, in, rng));
  POCK_ASSIGN_OR_RETURN(auto y, g.add_node("Linear", {x, w, b}, {}, name));
  return y[0];
}

}  // namespace

pock::Result<pock::Graph> build_mlp(uint32_t seed) {
  std::mt19937 rng(seed);
  pock::Graph g;
  const pock::TensorId x = g.add_input("x", pock::DType::kF32, {kBatch, kFeatures});
  POCK_ASSIGN_OR_RETURN(pock::TensorId h, linear(g, x, "fc1", kFeatures, kHidden, rng));
  POCK_ASSIGN_OR_RETURN(auto relu, g.add_node("Relu", {h}, {}, "relu"));
  POCK_ASSIGN_OR_RETURN(pock::TensorId logits, linear(g, relu[0], "fc2", kHidden, kClasses, rng));
  POCK_RETURN_IF_ERROR(g.mark_output(logits, "logits"));
  return g;
}

ClusterData::ClusterData(uint32_t seed) : rng_(seed), centres_(kClasses * kFeatures) {
  std::normal_distribution<float> centre(0.0f, 1.5f);
  for (float& c : centres_) c = centre(rng_);
}

void ClusterData::next_batch(std::vector<float>* features, std::vector<int64_t>* labels) {
  std::uniform_int_distribution<int64_t> pick(0, kClasses - 1);
  std::normal_distribution<float> noise(0.0f, 0.7f);
  features->resize(kBatch * kFeatures);
  labels->resize(kBatch);
  for (int64_t i = 0; i < kBatch; ++i) {
    const int64_t label = pick(rng_);
    (*labels)[i] = label;
    for (int64_t f = 0; f < kFeatures; ++f) {
      (*features)[i * kFeatures + f] = centres_[label * kFeatures + f] + noise(rng_);
    }
  }
}

}  // namespace example
