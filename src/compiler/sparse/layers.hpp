// The model's "layers" as the recipe's `trainable[].layers` and the bias rules see them: forward
// nodes built around a parameter weight (Conv2d, Linear, MatMul with a parameter operand,
// BatchNorm / LayerNorm / RMSNorm with a parameter scale or shift, Gather from a parameter
// table), counted in forward (graph node) order from 0.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "pock/compiler/graph.hpp"

namespace pock {

struct Layer {
  size_t node = 0;                // index into graph.nodes()
  TensorId weight = kNoTensor;    // the parameter the layer is built around (a norm: its scale, else shift)
  TensorId bias = kNoTensor;      // Conv2d / Linear / MatMul bias: input 2, or a parameter added right after
  std::vector<TensorId> params;   // every parameter of the layer: weight, bias, a norm's shift
};

// Layers in forward order. Parameters in `excluded` (BatchNorm running statistics) belong to none.
std::vector<Layer> find_layers(const Graph& graph, const std::unordered_set<TensorId>& excluded);

// Biases: each Conv2d / Linear / MatMul layer's bias, plus every parameter named "bias" or "*.bias"
// (norm shifts in PyTorch naming). `excluded` parameters are never biases.
std::unordered_set<TensorId> find_biases(const Graph& graph, const std::vector<Layer>& layers,
                                         const std::unordered_set<TensorId>& excluded);

// A half-open range [begin, end) of layer positions.
struct LayerSpan {
  size_t begin = 0, end = 0;
};

// "last:k", "first:k" (k >= 1) or "a:b" (0-based, b exclusive, as a Python slice) over `count`
// layers. A malformed spec or one that reaches past the model's layers is an error saying so
// (`unit` names what is counted in that message: "layers", "blocks").
Result<LayerSpan> parse_layer_span(std::string_view spec, size_t count, std::string_view unit = "layers");

}  // namespace pock
