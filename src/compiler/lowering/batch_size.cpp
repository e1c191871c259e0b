#include "compiler/lowering/batch_size.hpp"

#include "ir/op_schema.hpp"

namespace pock {

Status set_batch_size(Graph& graph, int64_t batch_size) {
  // The model's own inputs: a function beside it (a decode step) keeps its batch and its caches.
  std::vector<bool> read(graph.num_tensors(), false);
  for (const Node& n : graph.nodes()) {
    for (TensorId id : n.inputs) {
      if (id != kNoTensor) read[static_cast<size_t>(id)] = true;
    }
  }
  for (size_t id = 0; id < graph.num_tensors(); ++id) {
    TensorDesc& t = graph.mutable_tensor(static_cast<TensorId>(id));
    if (t.kind == TensorKind::kInput && !t.shape.empty() && read[id]) t.shape[0] = batch_size;
  }
  for (const Node& n : graph.nodes()) {
    std::vector<TensorType> storage(n.inputs.size());
    std::vector<const TensorType*> types;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i] == kNoTensor) {
        types.push_back(nullptr);
        continue;
      }
      storage[i] = TensorType{graph.tensor(n.inputs[i]).dtype, graph.tensor(n.inputs[i]).shape};
      types.push_back(&storage[i]);
    }
    std::vector<TensorType> outs;
    Status s = infer_types(n.op, n.name, types, n.attrs, &outs);
    if (!s.is_ok()) return Status(s.code(), "batch_size " + std::to_string(batch_size) + ": " + s.message());
    for (size_t i = 0; i < n.outputs.size() && i < outs.size(); ++i) {
      graph.mutable_tensor(n.outputs[i]).shape = outs[i].shape;
    }
  }
  return Status::ok();
}

}  // namespace pock
