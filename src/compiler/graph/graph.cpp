#include "pock/compiler/graph.hpp"

#include <algorithm>
#include <cstring>

#include "ir/op_schema.hpp"

namespace pock {

TensorId Graph::add_tensor(TensorDesc desc) {
  if (desc.name.empty() || by_name_.count(desc.name)) desc.name = unique_name(desc.name.empty() ? "t" : desc.name);
  const TensorId id = static_cast<TensorId>(tensors_.size());
  by_name_[desc.name] = id;
  tensors_.push_back(std::move(desc));
  return id;
}

TensorId Graph::add_input(std::string name, DType dtype, Shape shape) {
  TensorDesc d;
  d.name = std::move(name);
  d.dtype = dtype;
  d.shape = std::move(shape);
  d.kind = TensorKind::kInput;
  return add_tensor(std::move(d));
}

TensorId Graph::add_parameter(std::string name, DType dtype, Shape shape, std::vector<uint8_t> data) {
  TensorDesc d;
  d.name = std::move(name);
  d.dtype = dtype;
  d.shape = std::move(shape);
  d.kind = TensorKind::kParameter;
  d.data = std::make_shared<const std::vector<uint8_t>>(std::move(data));
  return add_tensor(std::move(d));
}

TensorId Graph::add_parameter_f32(std::string name, Shape shape, const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return add_parameter(std::move(name), DType::kF32, std::move(shape), std::move(bytes));
}

TensorId Graph::add_constant(std::string name, DType dtype, Shape shape, std::vector<uint8_t> data) {
  TensorDesc d;
  d.name = std::move(name);
  d.dtype = dtype;
  d.shape = std::move(shape);
  d.kind = TensorKind::kConstant;
  d.data = std::make_shared<const std::vector<uint8_t>>(std::move(data));
  return add_tensor(std::move(d));
}

Result<std::vector<TensorId>> Graph::add_node(std::string op, std::vector<TensorId> inputs, Attrs attrs,
                                              std::string name, std::vector<std::string> output_names) {
  auto node = create_node(std::move(op), std::move(inputs), std::move(attrs), std::move(name), std::move(output_names));
  if (!node.is_ok()) return node.status();
  std::vector<TensorId> outs = node->outputs;
  nodes_.push_back(std::move(node.value()));
  return outs;
}

Result<Node> Graph::create_node(std::string op, std::vector<TensorId> inputs, Attrs attrs, std::string name,
                                std::vector<std::string> output_names) {
  if (name.empty()) name = unique_name(op);
  std::vector<const TensorType*> in_types;
  std::vector<TensorType> storage(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorId id = inputs[i];
    if (id == kNoTensor) {
      in_types.push_back(nullptr);
      continue;
    }
    if (id < 0 || static_cast<size_t>(id) >= tensors_.size()) {
      return Status(Code::kInvalidArgument, op + " '" + name + "': input " + std::to_string(i) + " is not a tensor of this graph");
    }
    storage[i] = TensorType{tensors_[id].dtype, tensors_[id].shape};
    in_types.push_back(&storage[i]);
  }
  std::vector<TensorType> out_types;
  POCK_RETURN_IF_ERROR(infer_types(op, name, in_types, attrs, &out_types));
  Node node;
  node.op = op;
  node.name = name;
  node.inputs = std::move(inputs);
  node.attrs = std::move(attrs);
  for (size_t i = 0; i < out_types.size(); ++i) {
    TensorDesc d;
    d.name = i < output_names.size() && !output_names[i].empty() ? output_names[i] : name + ":" + std::to_string(i);
    d.dtype = out_types[i].dtype;
    d.shape = out_types[i].shape;
    d.kind = TensorKind::kActivation;
    node.outputs.push_back(add_tensor(std::move(d)));
  }
  return node;
}

Status Graph::mark_output(TensorId id, std::string name) {
  if (id < 0 || static_cast<size_t>(id) >= tensors_.size()) {
    return Status(Code::kInvalidArgument, "mark_output: not a tensor of this graph");
  }
  if (!name.empty() && name != tensors_[id].name) POCK_RETURN_IF_ERROR(rename_tensor(id, std::move(name)));
  for (TensorId o : outputs_) if (o == id) return Status::ok();
  outputs_.push_back(id);
  return Status::ok();
}

Status Graph::split_function(std::string name, size_t first_node) {
  if (first_node >= nodes_.size()) return Status(Code::kInvalidArgument, "split_function '" + name + "': no nodes to move");
  for (const GraphFunction& f : functions_) {
    if (f.name == name) return Status(Code::kInvalidArgument, "split_function: a function named '" + name + "' exists");
  }
  GraphFunction fn;
  fn.name = std::move(name);
  fn.nodes.assign(nodes_.begin() + static_cast<std::ptrdiff_t>(first_node), nodes_.end());
  nodes_.resize(first_node);
  std::vector<TensorId> kept;
  for (TensorId o : outputs_) {
    bool moved = false;
    for (const Node& n : fn.nodes) moved = moved || std::find(n.outputs.begin(), n.outputs.end(), o) != n.outputs.end();
    (moved ? fn.outputs : kept).push_back(o);
  }
  outputs_ = std::move(kept);
  functions_.push_back(std::move(fn));
  return Status::ok();
}

TensorId Graph::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? kNoTensor : it->second;
}

Status Graph::rename_tensor(TensorId id, std::string name) {
  if (by_name_.count(name) && by_name_[name] != id) {
    return Status(Code::kInvalidArgument, "tensor name '" + name + "' is already used");
  }
  by_name_.erase(tensors_[id].name);
  tensors_[id].name = name;
  by_name_[name] = id;
  return Status::ok();
}

std::string Graph::unique_name(const std::string& base) {
  std::string candidate;
  do {
    candidate = base + "_" + std::to_string(next_auto_name_++);
  } while (by_name_.count(candidate));
  return candidate;
}

}  // namespace pock
