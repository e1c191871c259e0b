#include "compiler/lowering/loss.hpp"

namespace pock {

Result<TensorId> resolve_loss_source(const Graph& model, const Recipe::Loss& loss) {
  if (loss.logits.empty()) {
    if (model.outputs().size() != 1) {
      return Status(Code::kInvalidArgument, "loss.logits: the model has " + std::to_string(model.outputs().size()) +
                                                " outputs; name the one the loss reads");
    }
    return model.outputs()[0];
  }
  const TensorId id = model.find(loss.logits);
  if (id == kNoTensor) return Status(Code::kNotFound, "loss.logits: the model has no tensor named '" + loss.logits + "'");
  const TensorKind kind = model.tensor(id).kind;
  if (kind != TensorKind::kActivation && kind != TensorKind::kOutput) {
    return Status(Code::kInvalidArgument, "loss.logits: '" + loss.logits + "' is a " + tensor_kind_name(kind) +
                                              ", not a tensor the model computes");
  }
  return id;
}

Result<TensorId> create_label_input(Graph& graph, const Recipe::Loss& loss, TensorId source) {
  if (loss.type == "output") return kNoTensor;
  const TensorDesc src = graph.tensor(source);
  DType dtype = src.dtype;
  Shape shape = src.shape;
  if (loss.type == "cross_entropy") {
    if (src.shape.size() < 2) {
      return Status(Code::kShapeMismatch, "loss.logits: cross_entropy needs logits [N, C] or [N, S, C], '" + src.name +
                                              "' is " + shape_str(src.shape));
    }
    dtype = DType::kI64;
    shape.pop_back();
  }
  const TensorId existing = graph.find(loss.labels);
  if (existing != kNoTensor) {
    const TensorDesc& e = graph.tensor(existing);
    if (e.kind == TensorKind::kInput && e.dtype == dtype && e.shape == shape) return existing;
    return Status(Code::kInvalidArgument, "loss.labels: '" + loss.labels + "' already names a model tensor (" +
                                              tensor_kind_name(e.kind) + ", " + dtype_name(e.dtype) + shape_str(e.shape) +
                                              "); the loss needs an input " + dtype_name(dtype) + shape_str(shape));
  }
  return graph.add_input(loss.labels, dtype, shape);
}

Result<TensorId> append_loss(Graph& graph, std::vector<Node>& nodes, const Recipe::Loss& loss, TensorId prediction,
                             TensorId labels, const std::string& loss_name) {
  if (loss.type == "output") {
    const TensorDesc& p = graph.tensor(prediction);
    if (p.dtype != DType::kF32 || numel(p.shape) != 1) {
      return Status(Code::kInvalidArgument, "loss.type 'output': the model output '" + p.name +
                                                "' must be an f32 scalar, got " + dtype_name(p.dtype) + shape_str(p.shape));
    }
    for (Node& n : nodes) {
      if (!n.outputs.empty() && n.outputs[0] == prediction) n.phase = Phase::kLoss;
    }
    return prediction;
  }
  std::string op;
  Attrs attrs;
  if (loss.type == "cross_entropy") {
    op = "SoftmaxCrossEntropy";
    attrs = Attrs{{"ignore_index", loss.ignore_index}, {"label_smoothing", loss.label_smoothing}};
  } else if (loss.type == "mse") {
    op = "MseLoss";
  } else {
    return Status(Code::kInvalidArgument, "loss.type: unknown loss '" + loss.type + "'");
  }
  auto node = graph.create_node(op, {prediction, labels}, attrs, loss_name, {loss_name});
  if (!node.is_ok()) return Status(node.status().code(), "loss: " + node.status().message());
  node->phase = Phase::kLoss;
  const TensorId out = node->outputs[0];
  nodes.push_back(std::move(node.value()));
  return out;
}

}  // namespace pock
