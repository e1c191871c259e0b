// GradContext helpers shared by every gradient rule, and the global rule registry.
#include "compiler/autodiff/grad_rule.hpp"

#include <cstring>

#include "compiler/sparse/partial_channels.hpp"

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

int64_t GradContext::leading_rows(size_t i) const {
  if (!needs(i) || node_.inputs[i] == kNoTensor) return -1;
  return trained_rows(graph_.tensor(node_.inputs[i]));
}

TensorId GradContext::sum_to_shape(TensorId grad, const Shape& shape) {
  if (grad == kNoTensor || !status_.is_ok()) return kNoTensor;
  if (graph_.tensor(grad).shape == shape) return grad;
  return emit1("SumToShape", {grad}, Attrs{{"shape", std::vector<int64_t>(shape.begin(), shape.end())}});
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
