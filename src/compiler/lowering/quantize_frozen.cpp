#include "compiler/lowering/quantize_frozen.hpp"

#include <cmath>
#include <cstring>

namespace pock {
namespace {

bool eligible(const Graph& g, const Node& n, const std::unordered_set<TensorId>& mutated) {
  if (n.op != "Linear" || n.inputs.size() < 2) return false;
  if (n.attrs.get_string("activation", "none") != "none") return false;
  const TensorDesc& x = g.tensor(n.inputs[0]);
  const TensorDesc& w = g.tensor(n.inputs[1]);
  return x.dtype == DType::kF32 && w.kind == TensorKind::kParameter && !w.trainable && w.dtype == DType::kF32 &&
         w.shape.size() == 2 && w.data && w.data->size() == w.nbytes() && !mutated.count(n.inputs[1]);
}

std::pair<TensorId, TensorId> int8_constants(Graph& g, TensorId weight) {
  const TensorDesc w = g.tensor(weight);  // a copy: adding tensors moves the table
  const int64_t rows = w.shape[0], cols = w.shape[1];
  std::vector<uint8_t> q(static_cast<size_t>(rows * cols));
  std::vector<uint8_t> scale(static_cast<size_t>(rows) * sizeof(float));
  std::vector<float> values(static_cast<size_t>(rows * cols));
  std::memcpy(values.data(), w.data->data(), values.size() * sizeof(float));
  std::vector<float> scales(static_cast<size_t>(rows));
  quantize_weight_rows(values.data(), rows, cols, reinterpret_cast<int8_t*>(q.data()), scales.data());
  std::memcpy(scale.data(), scales.data(), scale.size());
  const TensorId qid = g.add_constant(g.unique_name(w.name + ".int8"), DType::kI8, w.shape, std::move(q));
  const TensorId sid = g.add_constant(g.unique_name(w.name + ".scale"), DType::kF32, {rows}, std::move(scale));
  return {qid, sid};
}

}  // namespace

void quantize_weight_rows(const float* w, int64_t rows, int64_t cols, int8_t* q, float* scale) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = w + r * cols;
    float amax = 0.0f;
    for (int64_t c = 0; c < cols; ++c) amax = std::max(amax, std::fabs(row[c]));
    scale[r] = amax / 127.0f;
    for (int64_t c = 0; c < cols; ++c) {
      const float v = amax > 0.0f ? std::round(row[c] / scale[r]) : 0.0f;  // std::round: half away from zero
      q[r * cols + c] = static_cast<int8_t>(std::max(-127.0f, std::min(127.0f, v)));
    }
  }
}

Result<int> quantize_frozen_linears(Graph& g, FunctionDef& fn, const std::unordered_set<TensorId>& mutated,
                                    Int8Weights& shared) {
  if (fn.backward_begin >= 0) {
    return Status(Code::kInternal, "quantize_frozen_linears: function '" + fn.name + "' already has a backward pass");
  }
  int rewritten = 0;
  for (Node& n : fn.nodes) {
    if (!eligible(g, n, mutated)) continue;
    auto it = shared.by_weight.find(n.inputs[1]);
    if (it == shared.by_weight.end()) it = shared.by_weight.emplace(n.inputs[1], int8_constants(g, n.inputs[1])).first;
    const TensorId bias = n.inputs.size() > 2 ? n.inputs[2] : kNoTensor;
    n.op = "LinearInt8";
    n.inputs = {n.inputs[0], it->second.first, it->second.second, bias};
    n.attrs = Attrs{};
    ++rewritten;
  }
  return rewritten;
}

}  // namespace pock
