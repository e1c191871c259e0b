// GradContext helpers shared by every gradient rule, and the global rule registry.
#include "compiler/autodiff/grad_rule.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_set>

#include "compiler/sparse/partial_channels.hpp"
#include "ir/activation.hpp"

namespace pock {

std::vector<TensorId> GradContext::emit(const std::string& op, std::vector<TensorId> inputs, Attrs attrs) {
  if (!status_.is_ok()) return {};
  for (TensorId id : inputs) {
    // A rule that forgot to check needs()/dy() would otherwise pass kNoTensor as a required input.
    if (id == kNoTensor) continue;
    if (id < 0 || static_cast<size_t>(id) >= graph_.num_tensors()) {
      fail(Status(Code::kInternal, "gradient rule of " + node_.op + " '" + node_.name + "' emits " + op +
                                       " with an invalid input"));
      return {};
    }
  }
  // Backward node names say which forward node they differentiate, for messages and reports.
  const std::string name = graph_.unique_name(node_.name + "/grad/" + op);
  auto node = graph_.create_node(op, std::move(inputs), std::move(attrs), name);
  if (!node.is_ok()) {
    fail(Status(node.status().code(), "gradient of " + node_.op + " '" + node_.name + "': " + node.status().message()));
    return {};
  }
  node->phase = Phase::kBackward;
  std::vector<TensorId> outs = node->outputs;
  backward_.push_back(std::move(node.value()));
  return outs;
}

TensorId GradContext::emit_forward1(const std::string& op, std::vector<TensorId> inputs, Attrs attrs) {
  if (!status_.is_ok()) return kNoTensor;
  if (!forward_after_) {
    fail(Status(Code::kInternal, "gradient rule of " + node_.op + " '" + node_.name + "' emits forward node " + op +
                                     " where none may be added"));
    return kNoTensor;
  }
  for (TensorId id : inputs) {
    if (id < 0 || static_cast<size_t>(id) >= graph_.num_tensors()) {
      fail(Status(Code::kInternal, "gradient rule of " + node_.op + " '" + node_.name + "' emits " + op +
                                       " with an invalid input"));
      return kNoTensor;
    }
  }
  const std::string name = graph_.unique_name(node_.name + "/saved/" + op);
  auto node = graph_.create_node(op, std::move(inputs), std::move(attrs), name);
  if (!node.is_ok()) {
    fail(Status(node.status().code(), "gradient of " + node_.op + " '" + node_.name + "': " + node.status().message()));
    return kNoTensor;
  }
  node->phase = node_.phase;  // forward (or loss): it is written before the backward begins
  const TensorId out = node->outputs.empty() ? kNoTensor : node->outputs[0];
  forward_after_->push_back(std::move(node.value()));
  return out;
}

bool GradContext::kept_by_backward(TensorId id) const {
  for (const Node& n : backward_) {
    if (std::find(n.inputs.begin(), n.inputs.end(), id) != n.inputs.end()) return true;
  }
  if (!forward_) return false;
  // Ops whose output holds every value of their input, rearranged.
  static const std::unordered_set<std::string> kViews = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity",
                                                         "Transpose"};
  for (const Node& n : *forward_) {
    if (kViews.count(n.op) && !n.inputs.empty() && n.inputs[0] == id && n.outputs.size() == 1 &&
        kept_by_backward(n.outputs[0])) {
      return true;
    }
  }
  return false;
}

int64_t GradContext::leading_rows(size_t i) const {
  if (!needs(i) || node_.inputs[i] == kNoTensor) return -1;
  return trained_rows(graph_.tensor(node_.inputs[i]));
}

TensorId GradContext::sum_to_shape(TensorId grad, const Shape& shape) {
  if (grad == kNoTensor || !status_.is_ok()) return kNoTensor;
  if (graph_.tensor(grad).shape == shape) return grad;
  return emit1("SumToShape", {grad}, Attrs{{"shape", std::vector<int64_t>(shape.begin(), shape.end())}});
}

Status refuse_fused_activation(const GradContext& ctx) {
  const std::string activation(ctx.attrs().get_string("activation", "none"));
  if (parse_activation(activation) == Activation::kNone) return Status::ok();
  return Status(Code::kUnsupportedOp, ctx.node().op + " '" + ctx.node().name + "' carries the fused activation '" +
                                          activation + "', which has no gradient rule: write the activation as its own op");
}

TensorId GradContext::constant(float value, const Shape& shape) {
  const std::vector<float> values(static_cast<size_t>(numel(shape)), value);
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return graph_.add_constant(graph_.unique_name(node_.name + "/grad/const"), DType::kF32, shape, std::move(bytes));
}

const GradRegistry& GradRegistry::global() {
  static const GradRegistry registry = [] {
    GradRegistry r;
#define POCK_OP_FAMILY(family) register_##family##_gradients(r);
#include "ir/op_families.def"
#undef POCK_OP_FAMILY
    return r;
  }();
  return registry;
}

}  // namespace pock
