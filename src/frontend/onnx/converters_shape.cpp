// ONNX shape and indexing ops -> pock ops. Operands that ONNX passes as tensors (Reshape's shape,
// Slice's bounds, Unsqueeze's axes) must be known at compile time and become attributes; Shape and
// Size of a static tensor are constants.
#include <optional>

#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {
namespace {

using Ints = std::vector<int64_t>;

Status convert_shape(NodeView& node) {
  const Shape& s = node.value(0).shape;
  const int64_t rank = static_cast<int64_t>(s.size());
  POCK_ASSIGN_OR_RETURN(int64_t start, node.attrs().get_int("start", 0));
  POCK_ASSIGN_OR_RETURN(int64_t end, node.attrs().get_int("end", rank));
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  node.bind_constant(0, HostTensor::vector_ints(Ints(s.begin() + start, s.begin() + end)));
  return Status::ok();
}

Status convert_size(NodeView& node) {
  node.bind_constant(0, HostTensor::scalar_int(numel(node.value(0).shape)));
  return Status::ok();
}

// The target shape with 0 (copy) and -1 (infer) resolved here, so the emitted Reshape is explicit.
Status convert_reshape(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(Ints shape, node.const_ints(1, "shape"));
  POCK_ASSIGN_OR_RETURN(int64_t allowzero, node.attrs().get_int("allowzero", 0));
  const Shape& in = node.value(0).shape;
  int inferred = -1;
  int64_t known = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0 && !allowzero) {
      if (d >= in.size()) return node.error("shape " + shape_str(shape) + " copies dim " + std::to_string(d) + " of " + shape_str(in));
      shape[d] = in[d];
    }
    if (shape[d] == -1) {
      if (inferred >= 0) return node.error("shape " + shape_str(shape) + " has more than one -1");
      inferred = static_cast<int>(d);
    } else if (shape[d] < 0) {
      return node.error("shape " + shape_str(shape) + " has a negative dim");
    } else if (__builtin_mul_overflow(known, shape[d], &known)) {
      return node.error("shape " + shape_str(shape) + " is out of range");
    }
  }
  if (inferred >= 0) {
    if (known == 0 || numel(in) % known) return node.error("cannot infer -1 in " + shape_str(shape) + " for " + shape_str(in));
    shape[inferred] = numel(in) / known;
  }
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  if (shape == in) return node.bind_output(0, x);
  return node.emit_final("Reshape", {x}, Attrs{{"shape", shape}});
}

Status convert_flatten(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(int64_t axis, node.attrs().get_int("axis", 1));
  const Shape& in = node.value(0).shape;
  if (axis < 0) axis += static_cast<int64_t>(in.size());
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  // A 2-D x flattened at 1 is unchanged (the Softmax of opsets before 13 is imported through one).
  if (in.size() == 2 && axis == 1) return node.bind_output(0, x);
  return node.emit_final("Flatten", {x}, Attrs{{"axis", axis}});
}

// A Transpose's permutation (ONNX default: reversed axes), or nullopt when it is not a permutation
// of the input's axes (the emitted op then reports the error).
std::optional<Ints> transpose_perm(const NodeAttrs& attrs, size_t rank) {
  Ints reversed(rank);
  for (size_t d = 0; d < rank; ++d) reversed[d] = static_cast<int64_t>(rank - 1 - d);
  auto perm = attrs.get_ints("perm", reversed);
  if (!perm.is_ok() || perm->size() != rank) return std::nullopt;
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm.value()) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(p)]) return std::nullopt;
    seen[static_cast<size_t>(p)] = true;
  }
  return perm.value();
}

// tf2onnx runs each NHWC TensorFlow op in ONNX's NCHW between two Transposes and does not always
// cancel the pairs between neighbours (NHWC->NCHW right after NCHW->NHWC). A chain of Transposes
// is composed into one here, and dropped when it is the identity; an intermediate Transpose that
// nothing else reads is then dead and compacted away.
Status convert_transpose(NodeView& node) {
  if (!node.has_input(0)) return node.input_error(0, "is required");
  const size_t rank = node.value(0).shape.size();
  std::optional<Ints> perm = transpose_perm(node.attrs(), rank);
  if (!perm) {  // malformed: let the pock op name the problem
    POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
    Attrs attrs;
    if (node.attrs().has("perm")) {
      POCK_ASSIGN_OR_RETURN(Ints given, node.attrs().get_ints("perm", {}));
      attrs.set("perm", given);
    }
    return node.emit_final("Transpose", {x}, attrs);
  }
  ImportContext& ctx = node.ctx();
  std::string source = node.input_name(0);
  for (int p = ctx.producer_of(source); p >= 0 && ctx.proto.node(p).op_type() == "Transpose";
       p = ctx.producer_of(source)) {
    const onnx::NodeProto& prev = ctx.proto.node(p);
    const Value* in = prev.input_size() > 0 && !prev.input(0).empty() ? ctx.find(prev.input(0)) : nullptr;
    if (!in || in->shape.size() != rank) break;
    std::optional<Ints> first = transpose_perm(NodeAttrs(prev, prev.name()), rank);
    if (!first) break;
    Ints composed(rank);  // y[i] = t[perm[i]] = x[first[perm[i]]]
    for (size_t i = 0; i < rank; ++i) composed[i] = (*first)[static_cast<size_t>((*perm)[i])];
    perm = composed;
    source = prev.input(0);
  }
  auto x = ctx.materialize(source);
  if (!x.is_ok()) return node.input_error(0, "(through the Transposes before it, '" + source + "'): " + x.status().message());
  bool identity = true;
  for (size_t i = 0; i < rank; ++i) identity = identity && (*perm)[i] == static_cast<int64_t>(i);
  if (identity) return node.bind_output(0, x.value());
  return node.emit_final("Transpose", {x.value()}, Attrs{{"perm", *perm}});
}

Status convert_concat(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(int64_t axis, node.attrs().get_int("axis", 0));
  std::vector<TensorId> in;
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (!node.has_input(i)) continue;
    if (numel(node.value(i).shape) == 0) continue;  // exporters concatenate empty tensors
    POCK_ASSIGN_OR_RETURN(TensorId t, node.input(i));
    in.push_back(t);
  }
  if (in.empty()) return node.error("every input is empty");
  if (in.size() == 1) return node.bind_output(0, in[0]);
  return node.emit_final("Concat", in, Attrs{{"axis", axis}});
}

Status convert_slice(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(Ints starts, node.const_ints(1, "starts"));
  POCK_ASSIGN_OR_RETURN(Ints ends, node.const_ints(2, "ends"));
  Attrs attrs{{"starts", starts}, {"ends", ends}};
  if (node.has_input(3)) {
    POCK_ASSIGN_OR_RETURN(Ints axes, node.const_ints(3, "axes"));
    attrs.set("axes", axes);
  }
  if (node.has_input(4)) {
    POCK_ASSIGN_OR_RETURN(Ints steps, node.const_ints(4, "steps"));
    attrs.set("steps", steps);
  }
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  return node.emit_final("Slice", {x}, attrs);
}

Status convert_split(NodeView& node) {
  const Shape& s = node.value(0).shape;
  POCK_ASSIGN_OR_RETURN(int64_t axis, node.attrs().get_int("axis", 0));
  const int64_t rank = static_cast<int64_t>(s.size());
  if (axis < -rank || axis >= rank) return node.error("axis " + std::to_string(axis) + " out of range for " + shape_str(s));
  const int64_t dim = s[axis < 0 ? axis + rank : axis];
  Ints sizes;
  if (node.has_input(1)) {
    POCK_ASSIGN_OR_RETURN(sizes, node.const_ints(1, "split"));
  } else {
    POCK_ASSIGN_OR_RETURN(sizes, node.attrs().get_ints("split", {}));
  }
  if (sizes.empty()) {  // equal parts; the last may be smaller (opset 18 num_outputs)
    const int64_t parts = node.num_outputs();
    const int64_t each = (dim + parts - 1) / parts;
    for (int64_t p = 0, left = dim; p < parts; ++p, left -= each) sizes.push_back(std::min(each, left));
  }
  if (static_cast<int>(sizes.size()) != node.num_outputs()) {
    return node.error(std::to_string(sizes.size()) + " split sizes for " + std::to_string(node.num_outputs()) + " outputs");
  }
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  return node.emit_final("Split", {x}, Attrs{{"axis", axis}, {"split", sizes}});
}

Result<Ints> axes_operand(NodeView& node) {
  if (node.has_input(1)) return node.const_ints(1, "axes");
  return node.attrs().get_ints("axes", {});
}

Status convert_squeeze(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(Ints axes, axes_operand(node));
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  Attrs attrs;
  if (!axes.empty()) attrs.set("axes", axes);
  return node.emit_final("Squeeze", {x}, attrs);
}

Status convert_unsqueeze(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(Ints axes, axes_operand(node));
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  return node.emit_final("Unsqueeze", {x}, Attrs{{"axes", axes}});
}

Status convert_expand(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(Ints shape, node.const_ints(1, "shape"));
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  auto out = broadcast_shapes(node.value(0).shape, shape);
  if (out.is_ok() && out.value() == node.value(0).shape) return node.bind_output(0, x);
  return node.emit_final("Expand", {x}, Attrs{{"shape", shape}});
}

Status convert_gather(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(int64_t axis, node.attrs().get_int("axis", 0));
  const DType index_type = node.value(1).dtype;
  if (index_type != DType::kI64 && index_type != DType::kI32) return node.input_error(1, "(indices) must be int32 or int64");
  POCK_ASSIGN_OR_RETURN(TensorId data, node.input(0));
  POCK_ASSIGN_OR_RETURN(TensorId indices, node.input(1));
  return node.emit_final("Gather", {data, indices}, Attrs{{"axis", axis}});
}

Status convert_where(NodeView& node) {
  if (node.value(0).dtype != DType::kBool) return node.input_error(0, "(condition) must be bool");
  POCK_ASSIGN_OR_RETURN(TensorId c, node.input(0));
  POCK_ASSIGN_OR_RETURN(TensorId a, node.input(1));
  POCK_ASSIGN_OR_RETURN(TensorId b, node.input(2));
  return node.emit_final("Where", {c, a, b});
}

// Pad in constant, reflect or edge mode; pads come as an input since opset 11, optionally for
// listed axes (18).
Status convert_pad(NodeView& node) {
  auto mode = node.attrs().get_string("mode", "constant");
  if (!mode.is_ok()) return mode.status();
  if (mode.value() != "constant" && mode.value() != "reflect" && mode.value() != "edge") {
    return node.unsupported("mode '" + mode.value() + "' is not supported (constant, reflect and edge are)");
  }
  Ints pads;
  if (node.has_input(1)) {
    POCK_ASSIGN_OR_RETURN(pads, node.const_ints(1, "pads"));
  } else {
    POCK_ASSIGN_OR_RETURN(pads, node.attrs().get_ints("pads", {}));
  }
  const int64_t rank = static_cast<int64_t>(node.value(0).shape.size());
  if (node.has_input(3)) {  // pads for the listed axes only
    POCK_ASSIGN_OR_RETURN(Ints axes, node.const_ints(3, "axes"));
    if (pads.size() != 2 * axes.size()) return node.error("pads must hold 2 values per listed axis");
    Ints full(static_cast<size_t>(2 * rank), 0);
    for (size_t k = 0; k < axes.size(); ++k) {
      const int64_t a = axes[k] < 0 ? axes[k] + rank : axes[k];
      if (a < 0 || a >= rank) return node.error("axis " + std::to_string(axes[k]) + " out of range");
      full[a] = pads[k];
      full[a + rank] = pads[k + axes.size()];
    }
    pads = full;
  }
  double value = 0;
  if (node.has_input(2)) {
    POCK_ASSIGN_OR_RETURN(value, node.const_scalar(2, "constant_value"));
  }
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  Attrs attrs{{"pads", pads}, {"value", value}};
  if (mode.value() != "constant") attrs.set("mode", mode.value());
  return node.emit_final("Pad", {x}, attrs);
}

// Trilu of a run-time tensor (a constant one is folded). A constant k becomes the attribute; a
// run-time one stays an input.
Status convert_trilu(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(int64_t upper, node.attrs().get_int("upper", 1));
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  Attrs attrs{{"upper", upper}};
  if (!node.has_input(1)) return node.emit_final("Trilu", {x}, attrs);
  if (node.input_is_constant(1)) {
    POCK_ASSIGN_OR_RETURN(Ints ks, node.const_ints(1, "k"));
    if (ks.size() != 1) return node.input_error(1, "(k) must be a scalar, got " + std::to_string(ks.size()) + " values");
    attrs.set("k", ks[0]);
    return node.emit_final("Trilu", {x}, attrs);
  }
  POCK_ASSIGN_OR_RETURN(TensorId k, node.input(1));
  return node.emit_final("Trilu", {x, k}, attrs);
}

}  // namespace

void register_shape_converters(std::unordered_map<std::string, Converter>& t) {
  t["Shape"] = convert_shape;
  t["Size"] = convert_size;
  t["Reshape"] = convert_reshape;
  t["Flatten"] = convert_flatten;
  t["Transpose"] = convert_transpose;
  t["Concat"] = convert_concat;
  t["Slice"] = convert_slice;
  t["Split"] = convert_split;
  t["Squeeze"] = convert_squeeze;
  t["Unsqueeze"] = convert_unsqueeze;
  t["Expand"] = convert_expand;
  t["Gather"] = convert_gather;
  t["Where"] = convert_where;
  t["Pad"] = convert_pad;
  t["Trilu"] = convert_trilu;
}

}  // namespace pock::onnx_import
