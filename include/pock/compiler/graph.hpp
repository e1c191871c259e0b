// A model as the compiler sees it: tensors (inputs, named parameters, intermediates) and nodes in
// topological order. Every node added goes through its op's shape inference, so a Graph is always
// well-typed.
#pragma once
#include <string>
#include <unordered_map>
#include <vector>

#include "pock/compiler/ir.hpp"

namespace pock {

// A second entry point over the same tensors: an inference function of its own (a language
// model's decode step beside its forward), compiled into the blob under `name`.
struct GraphFunction {
  std::string name;
  std::vector<Node> nodes;
  std::vector<TensorId> outputs;
};

class Graph {
 public:
  TensorId add_tensor(TensorDesc desc);
  TensorId add_input(std::string name, DType dtype, Shape shape);
  // Parameters keep the source model's names; `data` must hold numel(shape) values of dtype.
  TensorId add_parameter(std::string name, DType dtype, Shape shape, std::vector<uint8_t> data);
  TensorId add_parameter_f32(std::string name, Shape shape, const std::vector<float>& values);
  TensorId add_constant(std::string name, DType dtype, Shape shape, std::vector<uint8_t> data);

  // Adds a node after shape inference; outputs are named "<name>:<i>" unless `output_names` says.
  Result<std::vector<TensorId>> add_node(std::string op, std::vector<TensorId> inputs, Attrs attrs = {},
                                         std::string name = {}, std::vector<std::string> output_names = {});
  // Like add_node, but returns the node instead of appending it (its output tensors are created).
  // The compiler uses it to build the train / eval / infer functions over shared tensors.
  Result<Node> create_node(std::string op, std::vector<TensorId> inputs, Attrs attrs = {}, std::string name = {},
                           std::vector<std::string> output_names = {});
  // Marks a tensor as a named output of the model (what infer() returns).
  Status mark_output(TensorId id, std::string name = {});

  const TensorDesc& tensor(TensorId id) const { return tensors_.at(static_cast<size_t>(id)); }
  TensorDesc& mutable_tensor(TensorId id) { return tensors_.at(static_cast<size_t>(id)); }
  const std::vector<TensorDesc>& tensors() const { return tensors_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  std::vector<Node>& mutable_nodes() { return nodes_; }
  const std::vector<TensorId>& outputs() const { return outputs_; }
  // Moves the nodes from index `first_node` on, and the outputs they produce, into a function of
  // their own named `name`; the model keeps the nodes before. Parameters stay shared.
  Status split_function(std::string name, size_t first_node);
  const std::vector<GraphFunction>& functions() const { return functions_; }
  std::vector<GraphFunction>& mutable_functions() { return functions_; }
  TensorId find(const std::string& name) const;  // kNoTensor when absent
  Status rename_tensor(TensorId id, std::string name);
  size_t num_tensors() const { return tensors_.size(); }
  std::string unique_name(const std::string& base);

 private:
  std::vector<TensorDesc> tensors_;
  std::vector<Node> nodes_;
  std::vector<TensorId> outputs_;
  std::vector<GraphFunction> functions_;
  std::unordered_map<std::string, TensorId> by_name_;
  int64_t next_auto_name_ = 0;
};

}  // namespace pock
