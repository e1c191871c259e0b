// Frozen Linear weights stored as int8, before autodiff (recipe "frozen_weights": "int8"): a
// Linear whose weight is a frozen f32 parameter becomes
//   LinearInt8(x, q, scale, bias),  q = round(w / scale) in [-127, 127],  scale = max|w_row| / 127
// per output row, with q and scale new compile-time constants. The blob then carries a quarter of
// those weights' bytes, and a backend with integer units (the Hexagon DSP's HVX) runs the layer
// as int8 products. Its input gradient, for layers below that train, is LinearInt8InputGrad with
// the transposed int8 weight (autodiff/rules/linalg.cpp). Trainable weights stay f32.
#pragma once
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "compiler/program.hpp"

namespace pock {

// The int8 constants of each quantized weight, shared by the functions (infer, train, eval) so
// that each weight is quantized once and its f32 original leaves the blob.
struct Int8Weights {
  std::unordered_map<TensorId, std::pair<TensorId, TensorId>> by_weight;  // w -> (q, scale)
};

// Rewrites the eligible Linear nodes of `fn`; returns how many. `mutated`: tensors some function
// writes, which are never quantized.
Result<int> quantize_frozen_linears(Graph& g, FunctionDef& fn, const std::unordered_set<TensorId>& mutated,
                                    Int8Weights& shared);

// Per output row of an f32 [N, K] weight: the int8 values and the scales (the rule above).
void quantize_weight_rows(const float* w, int64_t rows, int64_t cols, int8_t* q, float* scale);

}  // namespace pock
