#include "compiler/sparse/layers.hpp"

#include <algorithm>
#include <charconv>

namespace pock {
namespace {

bool is_parameter(const Graph& g, TensorId id, const std::unordered_set<TensorId>& excluded) {
  return id != kNoTensor && g.tensor(id).kind == TensorKind::kParameter && !excluded.count(id);
}

TensorId input_or_none(const Node& n, size_t i) { return i < n.inputs.size() ? n.inputs[i] : kNoTensor; }

// Which inputs of an op can hold a layer's parameters, the weight's candidates first.
struct LayerSlots {
  std::vector<size_t> weight;  // the first of these holding a parameter is the weight
  std::vector<size_t> others;  // further parameters of the layer (bias, shift)
  bool has_bias = false;       // whether others[0] is a bias (Conv2d, Linear) or may be added after (MatMul)
};

bool layer_slots(const std::string& op, LayerSlots* s) {
  if (op == "Conv2d" || op == "Linear") {
    *s = {{1}, {2}, true};
  } else if (op == "MatMul") {
    *s = {{1, 0}, {}, true};
  } else if (op == "BatchNorm" || op == "BatchNormTrain" || op == "LayerNorm" || op == "RMSNorm") {
    *s = {{1, 2}, {2}, false};  // scale, else shift; running statistics (3, 4) never belong
  } else if (op == "Gather") {
    *s = {{0}, {}, false};      // an embedding table
  } else {
    return false;
  }
  return true;
}

// A bias added right after a weight layer that has none of its own (ONNX MatMul + Add, GGUF
// linear layers): an Add of the layer's output and a parameter.
TensorId trailing_bias(const Graph& g, const std::vector<Node>& nodes, size_t layer_node,
                       const std::unordered_set<TensorId>& excluded) {
  const TensorId y = nodes[layer_node].outputs.empty() ? kNoTensor : nodes[layer_node].outputs[0];
  for (size_t k = layer_node + 1; k < nodes.size(); ++k) {
    const Node& n = nodes[k];
    if (n.op != "Add" || n.inputs.size() != 2) continue;
    if (n.inputs[0] == y && is_parameter(g, n.inputs[1], excluded)) return n.inputs[1];
    if (n.inputs[1] == y && is_parameter(g, n.inputs[0], excluded)) return n.inputs[0];
  }
  return kNoTensor;
}

bool named_bias(std::string_view name) {
  constexpr std::string_view suffix = ".bias";
  return name == "bias" || (name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix);
}

Result<size_t> parse_count(std::string_view text, std::string_view spec) {
  size_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    return Status(Code::kInvalidArgument, "'" + std::string(spec) + "' is not \"last:k\", \"first:k\" or \"a:b\" ('" +
                                              std::string(text) + "' is not a count)");
  }
  return v;
}

}  // namespace

std::vector<Layer> find_layers(const Graph& graph, const std::unordered_set<TensorId>& excluded) {
  std::vector<Layer> layers;
  const std::vector<Node>& nodes = graph.nodes();
  for (size_t k = 0; k < nodes.size(); ++k) {
    const Node& n = nodes[k];
    LayerSlots slots;
    if (!layer_slots(n.op, &slots)) continue;
    Layer layer;
    layer.node = k;
    for (size_t i : slots.weight) {
      const TensorId id = input_or_none(n, i);
      if (is_parameter(graph, id, excluded)) {
        layer.weight = id;
        break;
      }
    }
    if (layer.weight == kNoTensor) continue;  // e.g. attention's MatMul of two activations
    layer.params.push_back(layer.weight);
    for (size_t i : slots.others) {
      const TensorId id = input_or_none(n, i);
      if (id != layer.weight && is_parameter(graph, id, excluded)) layer.params.push_back(id);
    }
    if (slots.has_bias) {
      layer.bias = slots.others.empty() ? kNoTensor : input_or_none(n, slots.others[0]);
      if (!is_parameter(graph, layer.bias, excluded)) layer.bias = trailing_bias(graph, nodes, k, excluded);
      const bool listed = std::find(layer.params.begin(), layer.params.end(), layer.bias) != layer.params.end();
      if (layer.bias != kNoTensor && !listed) layer.params.push_back(layer.bias);
    }
    layers.push_back(std::move(layer));
  }
  return layers;
}

std::unordered_set<TensorId> find_biases(const Graph& graph, const std::vector<Layer>& layers,
                                         const std::unordered_set<TensorId>& excluded) {
  std::unordered_set<TensorId> biases;
  for (const Layer& l : layers) {
    if (l.bias != kNoTensor) biases.insert(l.bias);
  }
  // A normalization's shift (input 2) is its bias whatever the exporter named it ("beta",
  // "ln_b"); the running statistics (3, 4) never are.
  for (const Node& n : graph.nodes()) {
    const bool norm = n.op == "BatchNorm" || n.op == "BatchNormTrain" || n.op == "LayerNorm";
    const TensorId shift = norm ? input_or_none(n, 2) : kNoTensor;
    if (is_parameter(graph, shift, excluded)) biases.insert(shift);
  }
  for (size_t id = 0; id < graph.num_tensors(); ++id) {
    const TensorId t = static_cast<TensorId>(id);
    if (is_parameter(graph, t, excluded) && named_bias(graph.tensor(t).name)) biases.insert(t);
  }
  return biases;
}

Result<LayerSpan> parse_layer_span(std::string_view spec, size_t count, std::string_view unit) {
  const size_t colon = spec.find(':');
  if (colon == std::string_view::npos) {
    return Status(Code::kInvalidArgument, "'" + std::string(spec) + "' is not \"last:k\", \"first:k\" or \"a:b\"");
  }
  const std::string_view head = spec.substr(0, colon), tail = spec.substr(colon + 1);
  const std::string model = "the model has " + std::to_string(count) + " " + std::string(unit);
  LayerSpan span;
  if (head == "last" || head == "first") {
    POCK_ASSIGN_OR_RETURN(const size_t k, parse_count(tail, spec));
    if (k < 1 || k > count) {
      return Status(Code::kInvalidArgument, "'" + std::string(spec) + "' needs 1 <= k <= " + std::to_string(count) +
                                                " (" + model + ")");
    }
    span = head == "last" ? LayerSpan{count - k, count} : LayerSpan{0, k};
  } else {
    POCK_ASSIGN_OR_RETURN(span.begin, parse_count(head, spec));
    POCK_ASSIGN_OR_RETURN(span.end, parse_count(tail, spec));
    if (span.begin >= span.end || span.end > count) {
      return Status(Code::kInvalidArgument, "'" + std::string(spec) + "' needs 0 <= a < b <= " +
                                                std::to_string(count) + " (" + model + ")");
    }
  }
  return span;
}

}  // namespace pock
