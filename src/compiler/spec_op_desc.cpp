#include "compiler/spec_op_desc.hpp"

#include <string>
#include <type_traits>
#include <variant>

namespace pock {
namespace {

Result<pock_tensor_desc> tensor_desc(const ProgramSpec& spec, int32_t id, const OpSpec& op) {
  pock_tensor_desc d{};
  if (id < 0) {
    d.rank = -1;
    return d;
  }
  if (static_cast<size_t>(id) >= spec.tensors.size()) {
    return Status(Code::kInvalidArgument, op.op + " '" + op.name + "' refers to tensor " + std::to_string(id) +
                                              " of " + std::to_string(spec.tensors.size()));
  }
  const TensorSpec& t = spec.tensors[static_cast<size_t>(id)];
  if (t.shape.size() > POCK_TENSOR_MAX_RANK) {
    return Status(Code::kInvalidArgument, "tensor '" + t.name + "' has rank " + std::to_string(t.shape.size()));
  }
  d.dtype = static_cast<pock_dtype>(t.dtype);
  d.rank = static_cast<int32_t>(t.shape.size());
  for (size_t r = 0; r < t.shape.size(); ++r) d.dims[r] = t.shape[r];
  d.nbytes = t.nbytes;
  d.memory_space = POCK_MEMORY_HOST;
  d.flags = t.storage == Storage::kWeights ? uint32_t{POCK_TENSOR_CONSTANT} : 0u;
  return d;
}

pock_attr to_abi_attr(const std::string& name, const AttrValue& value) {
  pock_attr a{};
  a.name = name.c_str();
  a.s = "";
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          a.kind = POCK_ATTR_INT;
          a.i = v;
        } else if constexpr (std::is_same_v<T, double>) {
          a.kind = POCK_ATTR_FLOAT;
          a.f = v;
        } else if constexpr (std::is_same_v<T, std::string>) {
          a.kind = POCK_ATTR_STRING;
          a.s = v.c_str();
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          a.kind = POCK_ATTR_INTS;
          a.ints = v.data();
          a.count = static_cast<int64_t>(v.size());
        } else {
          a.kind = POCK_ATTR_FLOATS;
          a.floats = v.data();
          a.count = static_cast<int64_t>(v.size());
        }
      },
      value);
  return a;
}

}  // namespace

Result<SpecOpDesc> SpecOpDesc::describe(const ProgramSpec& spec, const OpSpec& op, int num_threads) {
  SpecOpDesc out;
  for (int32_t id : op.inputs) {
    POCK_ASSIGN_OR_RETURN(pock_tensor_desc d, tensor_desc(spec, id, op));
    out.inputs_.push_back(d);
  }
  for (int32_t id : op.outputs) {
    POCK_ASSIGN_OR_RETURN(pock_tensor_desc d, tensor_desc(spec, id, op));
    out.outputs_.push_back(d);
  }
  for (const auto& [name, value] : op.attrs.items()) out.attrs_.push_back(to_abi_attr(name, value));
  out.desc_.op = op.op.c_str();
  out.desc_.name = op.name.c_str();
  out.desc_.num_inputs = static_cast<int32_t>(out.inputs_.size());
  out.desc_.num_outputs = static_cast<int32_t>(out.outputs_.size());
  out.desc_.inputs = out.inputs_.data();
  out.desc_.outputs = out.outputs_.data();
  out.desc_.num_attrs = static_cast<int32_t>(out.attrs_.size());
  out.desc_.attrs = out.attrs_.data();
  out.desc_.num_threads = num_threads;
  return out;
}

}  // namespace pock
