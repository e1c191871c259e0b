#include "compiler/passes/eval_node.hpp"

#include "runtime/kernel.hpp"
#include "runtime/table_backend.hpp"

namespace pock {
namespace {

pock_tensor_desc describe(const TensorDesc& t, void* data) {
  pock_tensor_desc d{};
  d.dtype = static_cast<pock_dtype>(t.dtype);
  d.rank = static_cast<int32_t>(t.shape.size());
  for (size_t i = 0; i < t.shape.size(); ++i) d.dims[i] = t.shape[i];
  d.data = data;
  d.nbytes = t.nbytes();
  d.memory_space = POCK_MEMORY_HOST;
  return d;
}

}  // namespace

Status evaluate_node(const Graph& graph, const Node& node, const std::vector<const void*>& inputs,
                     std::vector<std::vector<uint8_t>>* outputs) {
  std::vector<pock_tensor_desc> in(node.inputs.size()), out(node.outputs.size());
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i] == kNoTensor) {
      in[i] = pock_tensor_desc{};
      in[i].rank = -1;
    } else {
      in[i] = describe(graph.tensor(node.inputs[i]), const_cast<void*>(inputs[i]));
    }
  }
  outputs->assign(node.outputs.size(), {});
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    const TensorDesc& t = graph.tensor(node.outputs[i]);
    (*outputs)[i].assign(t.nbytes(), 0);
    out[i] = describe(t, (*outputs)[i].data());
  }
  std::vector<pock_attr> attrs;
  for (const auto& [name, value] : node.attrs.items()) {
    pock_attr a{};
    a.name = name.c_str();
    if (auto* i = std::get_if<int64_t>(&value)) { a.kind = POCK_ATTR_INT; a.i = *i; }
    if (auto* f = std::get_if<double>(&value)) { a.kind = POCK_ATTR_FLOAT; a.f = *f; }
    if (auto* s = std::get_if<std::string>(&value)) { a.kind = POCK_ATTR_STRING; a.s = s->c_str(); }
    if (auto* l = std::get_if<std::vector<int64_t>>(&value)) { a.kind = POCK_ATTR_INTS; a.ints = l->data(); a.count = static_cast<int64_t>(l->size()); }
    if (auto* l = std::get_if<std::vector<double>>(&value)) { a.kind = POCK_ATTR_FLOATS; a.floats = l->data(); a.count = static_cast<int64_t>(l->size()); }
    attrs.push_back(a);
  }
  pock_op_desc desc{};
  desc.op = node.op.c_str();
  desc.name = node.name.c_str();
  desc.num_inputs = static_cast<int32_t>(in.size());
  desc.num_outputs = static_cast<int32_t>(out.size());
  desc.inputs = in.data();
  desc.outputs = out.data();
  desc.num_attrs = static_cast<int32_t>(attrs.size());
  desc.attrs = attrs.data();
  desc.num_threads = 1;
  const KernelDef* def = ref_kernels().find(node.op, kernel_key_dtype(desc));
  if (!def) return Status(Code::kMissingKernel, "no reference kernel to fold " + node.op + " '" + node.name + "'");
  void* state = nullptr;
  if (def->prepare) POCK_RETURN_IF_ERROR(def->prepare(desc, &state));
  Status s = def->run(KernelCall{&desc, state});
  if (def->release) def->release(state);
  return s;
}

}  // namespace pock
