// Trained LoRA adapters folded into their base weights for export: W' = W + scaling * B A.
#include "pock/compiler/lora.hpp"

#include <algorithm>

namespace pock {
namespace {

// The values of `name`, checked to hold `rows` x `cols` floats.
Result<const std::vector<float>*> matrix(const models::WeightMap& weights, const std::string& name, int64_t rows, int64_t cols) {
  const auto it = weights.find(name);
  if (it == weights.end()) return Status(Code::kNotFound, "merge_lora: no weight named '" + name + "'");
  if (rows <= 0 || cols <= 0 || it->second.size() != static_cast<size_t>(rows) * static_cast<size_t>(cols)) {
    return Status(Code::kInvalidArgument, "merge_lora: '" + name + "' holds " + std::to_string(it->second.size()) +
                                              " values, not " + std::to_string(rows) + " x " + std::to_string(cols));
  }
  return &it->second;
}

}  // namespace

Status merge_lora(models::WeightMap& weights, const std::vector<LoraModule>& modules) {
  // Every module is checked before any weight changes, so an error leaves the map as it was.
  std::vector<std::vector<float>> merged;
  merged.reserve(modules.size());
  for (const LoraModule& m : modules) {
    POCK_ASSIGN_OR_RETURN(const std::vector<float>* w, matrix(weights, m.name + ".weight", m.out, m.in));
    POCK_ASSIGN_OR_RETURN(const std::vector<float>* a, matrix(weights, m.name + ".lora_A.weight", m.rank, m.in));
    POCK_ASSIGN_OR_RETURN(const std::vector<float>* b, matrix(weights, m.name + ".lora_B.weight", m.out, m.rank));
    std::vector<float> out = *w;
    // Accumulated in double: the merged weight then differs from W + s B A only by its final rounding.
    std::vector<double> row(static_cast<size_t>(m.in));
    for (int64_t o = 0; o < m.out; ++o) {
      std::fill(row.begin(), row.end(), 0.0);
      for (int64_t k = 0; k < m.rank; ++k) {
        const double bk = (*b)[static_cast<size_t>(o * m.rank + k)];
        const float* ak = a->data() + k * m.in;
        for (int64_t i = 0; i < m.in; ++i) row[static_cast<size_t>(i)] += bk * ak[i];
      }
      float* wo = out.data() + o * m.in;
      for (int64_t i = 0; i < m.in; ++i) wo[i] = static_cast<float>(wo[i] + m.scaling * row[static_cast<size_t>(i)]);
    }
    merged.push_back(std::move(out));
  }
  for (size_t i = 0; i < modules.size(); ++i) {
    weights[modules[i].name + ".weight"] = std::move(merged[i]);
    weights.erase(modules[i].name + ".lora_A.weight");
    weights.erase(modules[i].name + ".lora_B.weight");
  }
  return Status::ok();
}

}  // namespace pock
