#include "kernels/params/reduce.hpp"

#include <string>
#include <string_view>

#include "kernels/params/attr_reader.hpp"

namespace pock::params {

Status parse(const pock_op_desc& op, ReduceParams* out) {
  AttrReader r(op);
  const bool gradient = std::string_view(op.op).ends_with("Grad");
  const int32_t rank = gradient ? (op.num_outputs > 0 ? op.outputs[0].rank : 0) : (op.num_inputs > 0 ? op.inputs[0].rank : 0);
  const pock_attr* axes = nullptr;
  for (int32_t i = 0; i < op.num_attrs; ++i) {
    if (op.attrs[i].name && std::string_view(op.attrs[i].name) == "axes") axes = &op.attrs[i];
  }
  // A one-element list may be written as a scalar.
  const int64_t* list = axes && axes->kind == POCK_ATTR_INT ? &axes->i : (axes ? axes->ints : nullptr);
  const int64_t count = axes && axes->kind == POCK_ATTR_INT ? 1 : (axes ? axes->count : 0);
  if (axes && axes->kind != POCK_ATTR_INTS && axes->kind != POCK_ATTR_INT) r.invalid("axes", "must be a list of integers");
  for (int32_t d = 0; d < rank && d < POCK_TENSOR_MAX_RANK; ++d) out->reduced[d] = count == 0;
  for (int64_t i = 0; r.status().is_ok() && i < count; ++i) {
    const int64_t a = list[i] < 0 ? list[i] + rank : list[i];
    if (a < 0 || a >= rank || a >= POCK_TENSOR_MAX_RANK) {
      r.invalid("axes", "holds " + std::to_string(list[i]) + ", out of range for rank " + std::to_string(rank));
      break;
    }
    out->reduced[a] = true;
  }
  out->scale = r.real("scale", 1.0);
  return r.status();
}

Status parse(const pock_op_desc& op, ArgExtremumParams* out) {
  AttrReader r(op);
  out->axis = r.axis("axis", op.num_inputs > 0 ? op.inputs[0].rank : 0, 0);
  out->select_last_index = r.integer("select_last_index", 0) != 0;
  return r.status();
}

}  // namespace pock::params
