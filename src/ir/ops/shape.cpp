// Shape family schemas: ops that move elements without reading them, so every dtype is accepted.
#include <algorithm>
#include <string>
#include <string_view>
#include <variant>

#include "ir/ops/schema_helpers.hpp"

namespace pock {
namespace {

constexpr int kMaxSplitOutputs = 1024;

// An int-list attribute that must be present; a scalar int reads as a one-element list.
Result<std::vector<int64_t>> required_ints(const InferContext& ctx, const char* name) {
  const AttrValue* v = ctx.attrs->find(name);
  if (!v) return ctx.error(std::string("attribute '") + name + "' is required");
  if (const auto* list = std::get_if<std::vector<int64_t>>(v)) return *list;
  if (const auto* one = std::get_if<int64_t>(v)) return std::vector<int64_t>{*one};
  return ctx.error(std::string("attribute '") + name + "' must be a list of ints");
}

Result<std::vector<int64_t>> optional_ints(const InferContext& ctx, const char* name, std::vector<int64_t> fallback) {
  if (!ctx.attrs->has(name)) return fallback;
  return required_ints(ctx, name);
}

// Normalizes each axis against `rank`; rejects out-of-range and repeated axes.
Result<std::vector<int>> normalize_axes(const InferContext& ctx, const char* name, const std::vector<int64_t>& axes,
                                        int rank) {
  std::vector<int> out;
  for (int64_t axis : axes) {
    auto a = normalize_axis(axis, rank);
    if (!a.is_ok() || rank == 0) {
      return ctx.error(std::string("attribute '") + name + "': axis " + std::to_string(axis) +
                       " out of range for rank " + std::to_string(rank));
    }
    if (std::find(out.begin(), out.end(), a.value()) != out.end()) {
      return ctx.error(std::string("attribute '") + name + "' repeats axis " + std::to_string(axis));
    }
    out.push_back(a.value());
  }
  return out;
}

Result<int> single_axis(const InferContext& ctx, int64_t axis, int rank) {
  auto a = normalize_axis(axis, rank);
  if (!a.is_ok() || rank == 0) {
    return ctx.error("axis " + std::to_string(axis) + " out of range for input " + shape_str(ctx.in(0).shape));
  }
  return a.value();
}

Status set_output(InferContext& ctx, Shape shape) {
  if (static_cast<int>(shape.size()) > kMaxRank) {
    return ctx.shape_error("output rank " + std::to_string(shape.size()) + " exceeds the maximum " +
                           std::to_string(kMaxRank));
  }
  ctx.outputs = {TensorType{ctx.in(0).dtype, std::move(shape)}};
  return Status::ok();
}

// ONNX Reshape (allowzero = 0): 0 copies the input's dim at that index, one -1 is inferred.
Status reshape(InferContext& ctx) {
  POCK_ASSIGN_OR_RETURN(Shape shape, required_ints(ctx, "shape"));
  const Shape& in = ctx.in(0).shape;
  int inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (inferred >= 0) return ctx.error("shape " + shape_str(shape) + " has more than one -1");
      inferred = static_cast<int>(i);
      continue;
    }
    if (shape[i] < -1) return ctx.error("shape " + shape_str(shape) + " has a negative dim");
    if (shape[i] == 0) {
      if (i >= in.size()) {
        return ctx.shape_error("shape " + shape_str(shape) + " copies dim " + std::to_string(i) + " (0) but input " +
                               shape_str(in) + " has rank " + std::to_string(in.size()));
      }
      shape[i] = in[i];
    }
    if (__builtin_mul_overflow(known, shape[i], &known)) return ctx.shape_error("shape " + shape_str(shape) + " is out of range");
  }
  if (inferred >= 0) {
    if (known == 0 || numel(in) % known != 0) {
      return ctx.shape_error("cannot infer the -1 of " + shape_str(shape) + " for input " + shape_str(in));
    }
    shape[inferred] = numel(in) / known;
  }
  POCK_ASSIGN_OR_RETURN(const int64_t count, schema::checked_numel(ctx, shape));
  if (count != numel(in)) {
    return ctx.shape_error("cannot reshape " + shape_str(in) + " to " + shape_str(shape));
  }
  return set_output(ctx, std::move(shape));
}

// ONNX Flatten: dims before `axis` become the rows, the rest the columns; axis may equal rank.
Status flatten(InferContext& ctx) {
  const Shape& in = ctx.in(0).shape;
  const int rank = static_cast<int>(in.size());
  const int64_t attr = ctx.attrs->get_int("axis", 1);
  const int64_t axis = attr < 0 ? attr + rank : attr;
  if (axis < 0 || axis > rank) {
    return ctx.error("axis " + std::to_string(attr) + " out of range for input " + shape_str(in));
  }
  const Shape rows(in.begin(), in.begin() + axis), cols(in.begin() + axis, in.end());
  return set_output(ctx, {numel(rows), numel(cols)});
}

// Absent perm reverses the dims (ONNX).
Status transpose(InferContext& ctx) {
  const Shape& in = ctx.in(0).shape;
  const int rank = static_cast<int>(in.size());
  std::vector<int64_t> reversed(in.size());
  for (int i = 0; i < rank; ++i) reversed[i] = rank - 1 - i;
  POCK_ASSIGN_OR_RETURN(auto perm, optional_ints(ctx, "perm", reversed));
  std::vector<bool> seen(in.size(), false);
  if (perm.size() != in.size()) {
    return ctx.error("perm " + shape_str(perm) + " does not match input rank " + std::to_string(rank));
  }
  Shape out(in.size());
  for (int i = 0; i < rank; ++i) {
    if (perm[i] < 0 || perm[i] >= rank || seen[perm[i]]) {
      return ctx.error("perm " + shape_str(perm) + " is not a permutation of 0.." + std::to_string(rank - 1));
    }
    seen[perm[i]] = true;
    out[i] = in[perm[i]];
  }
  POCK_RETURN_IF_ERROR(set_output(ctx, std::move(out)));
  return schema::apply_output_dtype(ctx);  // a bf16 GEMM operand's copy, written as it moves
}

Status concat(InferContext& ctx) {
  if (!ctx.attrs->has("axis")) return ctx.error("attribute 'axis' is required");
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    if (!ctx.has_in(i)) return ctx.error("input " + std::to_string(i) + " is missing");
  }
  POCK_RETURN_IF_ERROR(schema::require_same_dtype(ctx));
  const Shape& first = ctx.in(0).shape;
  POCK_ASSIGN_OR_RETURN(int axis, single_axis(ctx, ctx.attrs->get_int("axis", 0), static_cast<int>(first.size())));
  Shape out = first;
  for (size_t i = 1; i < ctx.inputs.size(); ++i) {
    const Shape& s = ctx.in(i).shape;
    bool compatible = s.size() == first.size();
    for (size_t d = 0; compatible && d < s.size(); ++d) compatible = static_cast<int>(d) == axis || s[d] == first[d];
    if (!compatible) {
      return ctx.shape_error("input " + std::to_string(i) + " " + shape_str(s) + " does not match input 0 " +
                             shape_str(first) + " outside axis " + std::to_string(axis));
    }
    out[axis] += s[axis];
  }
  return set_output(ctx, std::move(out));
}

// ONNX Slice clamping: negative starts/ends count from the end, then clamp to the valid range for
// the step's direction. Returns the number of elements taken.
int64_t slice_count(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (dim == 0) return 0;
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    return end > start ? (end - start + step - 1) / step : 0;
  }
  start = std::clamp<int64_t>(start, 0, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  return start > end ? (start - end - step - 1) / -step : 0;
}

Status slice(InferContext& ctx) {
  const Shape& in = ctx.in(0).shape;
  const int rank = static_cast<int>(in.size());
  POCK_ASSIGN_OR_RETURN(auto starts, required_ints(ctx, "starts"));
  POCK_ASSIGN_OR_RETURN(auto ends, required_ints(ctx, "ends"));
  std::vector<int64_t> default_axes(starts.size()), default_steps(starts.size(), 1);
  for (size_t i = 0; i < default_axes.size(); ++i) default_axes[i] = static_cast<int64_t>(i);
  POCK_ASSIGN_OR_RETURN(auto axes_attr, optional_ints(ctx, "axes", default_axes));
  POCK_ASSIGN_OR_RETURN(auto steps, optional_ints(ctx, "steps", default_steps));
  if (ends.size() != starts.size() || axes_attr.size() != starts.size() || steps.size() != starts.size()) {
    return ctx.error("starts, ends, axes and steps must have the same length");
  }
  POCK_ASSIGN_OR_RETURN(auto axes, normalize_axes(ctx, "axes", axes_attr, rank));
  Shape out = in;
  for (size_t i = 0; i < axes.size(); ++i) {
    if (steps[i] == 0) return ctx.error("steps must be nonzero");
    // Bounds past the int64 range mean "to the end"; keep them away from overflow.
    const int64_t limit = int64_t{1} << 62;
    out[axes[i]] = slice_count(in[axes[i]], std::clamp(starts[i], -limit, limit), std::clamp(ends[i], -limit, limit),
                               std::clamp(steps[i], -limit, limit));
  }
  return set_output(ctx, std::move(out));
}

Status split(InferContext& ctx) {
  const Shape& in = ctx.in(0).shape;
  POCK_ASSIGN_OR_RETURN(int axis, single_axis(ctx, ctx.attrs->get_int("axis", 0), static_cast<int>(in.size())));
  POCK_ASSIGN_OR_RETURN(auto sizes, required_ints(ctx, "split"));
  if (sizes.empty() || sizes.size() > kMaxSplitOutputs) {
    return ctx.error("split must list 1.." + std::to_string(kMaxSplitOutputs) + " sizes");
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) return ctx.error("split " + shape_str(sizes) + " has a negative size");
    total += s;
  }
  if (total != in[axis]) {
    return ctx.shape_error("split " + shape_str(sizes) + " sums to " + std::to_string(total) + ", but axis " +
                           std::to_string(axis) + " of " + shape_str(in) + " is " + std::to_string(in[axis]));
  }
  ctx.outputs.clear();
  for (int64_t s : sizes) {
    Shape part = in;
    part[axis] = s;
    ctx.outputs.push_back(TensorType{ctx.in(0).dtype, std::move(part)});
  }
  return Status::ok();
}

// Absent or empty axes squeeze every dim of size 1 (ONNX).
Status squeeze(InferContext& ctx) {
  const Shape& in = ctx.in(0).shape;
  POCK_ASSIGN_OR_RETURN(auto axes_attr, optional_ints(ctx, "axes", {}));
  POCK_ASSIGN_OR_RETURN(auto axes, normalize_axes(ctx, "axes", axes_attr, static_cast<int>(in.size())));
  Shape out;
  for (size_t d = 0; d < in.size(); ++d) {
    const bool listed = std::find(axes.begin(), axes.end(), static_cast<int>(d)) != axes.end();
    if (listed && in[d] != 1) {
      return ctx.shape_error("cannot squeeze axis " + std::to_string(d) + " of " + shape_str(in) + ": size is not 1");
    }
    const bool drop = axes.empty() ? in[d] == 1 : listed;
    if (!drop) out.push_back(in[d]);
  }
  return set_output(ctx, std::move(out));
}

// Axes index the output (ONNX), so negative axes count from the end of the output.
Status unsqueeze(InferContext& ctx) {
  const Shape& in = ctx.in(0).shape;
  POCK_ASSIGN_OR_RETURN(auto axes_attr, required_ints(ctx, "axes"));
  const int out_rank = static_cast<int>(in.size() + axes_attr.size());
  if (out_rank > kMaxRank) {
    return ctx.shape_error("output rank " + std::to_string(out_rank) + " exceeds the maximum " +
                           std::to_string(kMaxRank));
  }
  POCK_ASSIGN_OR_RETURN(auto axes, normalize_axes(ctx, "axes", axes_attr, out_rank));
  Shape out;
  size_t next = 0;
  for (int d = 0; d < out_rank; ++d) {
    const bool inserted = std::find(axes.begin(), axes.end(), d) != axes.end();
    out.push_back(inserted ? 1 : in[next++]);
  }
  return set_output(ctx, std::move(out));
}

// Bidirectional numpy broadcast of the input with `shape` (ONNX Expand).
Status expand(InferContext& ctx) {
  POCK_ASSIGN_OR_RETURN(Shape shape, required_ints(ctx, "shape"));
  for (int64_t d : shape) {
    if (d < 0) return ctx.error("shape " + shape_str(shape) + " has a negative dim");
  }
  auto out = broadcast_shapes(ctx.in(0).shape, shape);
  if (!out.is_ok()) return ctx.shape_error(out.status().message());
  return set_output(ctx, out.value());
}

// Reflect and edge padding read the input's border, so they neither crop nor pad an empty axis;
// reflect mirrors about the end element, so a pad reaches at most n - 1 elements in.
Status check_border_pads(const InferContext& ctx, std::string_view mode, const Shape& in, const std::vector<int64_t>& pads) {
  for (size_t d = 0; d < in.size(); ++d) {
    for (int64_t p : {pads[d], pads[d + in.size()]}) {
      if (p == 0) continue;
      if (p < 0) return ctx.error("mode '" + std::string(mode) + "' cannot crop: pads " + shape_str(pads) + " are negative");
      const int64_t limit = mode == "reflect" ? in[d] - 1 : (in[d] > 0 ? p : 0);
      if (p > limit) {
        return ctx.shape_error("mode '" + std::string(mode) + "' pads axis " + std::to_string(d) + " of " + shape_str(in) +
                               " by " + std::to_string(p) +
                               (mode == "reflect" ? ", more than its size - 1" : ", which is empty"));
      }
    }
  }
  return Status::ok();
}

// Constant, reflect or edge padding (ONNX's modes); a negative pad crops in constant mode.
Status pad(InferContext& ctx) {
  const Shape& in = ctx.in(0).shape;
  POCK_ASSIGN_OR_RETURN(auto pads, required_ints(ctx, "pads"));
  if (pads.size() != 2 * in.size()) {
    return ctx.error("pads " + shape_str(pads) + " must hold 2 * rank = " + std::to_string(2 * in.size()) +
                     " values (all begins, then all ends)");
  }
  const std::string_view mode = ctx.attrs->get_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") {
    return ctx.error("mode must be 'constant', 'reflect' or 'edge', got '" + std::string(mode) + "'");
  }
  if (mode != "constant") POCK_RETURN_IF_ERROR(check_border_pads(ctx, mode, in, pads));
  Shape out = in;
  for (size_t d = 0; d < in.size(); ++d) {
    out[d] = in[d] + pads[d] + pads[d + in.size()];
    if (out[d] < 0) {
      return ctx.shape_error("pads " + shape_str(pads) + " crop axis " + std::to_string(d) + " of " + shape_str(in) +
                             " below zero");
    }
  }
  return set_output(ctx, std::move(out));
}

// Trilu keeps x's shape; the last two dims are the matrices it masks.
Status trilu(InferContext& ctx) {
  const Shape& x = ctx.in(0).shape;
  if (x.size() < 2) return ctx.shape_error("x must have rank >= 2 (matrices in its last two dims), got " + shape_str(x));
  const int64_t upper = ctx.attrs->get_int("upper", 1);
  if (upper != 0 && upper != 1) return ctx.error("upper must be 0 or 1, got " + std::to_string(upper));
  if (ctx.has_in(1) && (ctx.in(1).dtype != DType::kI64 || numel(ctx.in(1).shape) != 1)) {
    return ctx.error(std::string("k must be an i64 scalar, got ") + dtype_name(ctx.in(1).dtype) + " " + shape_str(ctx.in(1).shape));
  }
  ctx.outputs = {ctx.in(0)};
  return Status::ok();
}

}  // namespace

void register_shape_schemas(SchemaRegistry& r) {
  using schema::add;
  add(r, "Reshape", 1, 1, 1, 1, reshape, "new shape; one -1 is inferred, 0 copies the input dim");
  add(r, "Flatten", 1, 1, 1, 1, flatten, "2-D [prod(dims[:axis]), prod(dims[axis:])], axis=1");
  add(r, "Transpose", 1, 1, 1, 1, transpose, "permute dims by perm (absent: reverse); output_dtype = 'f32' or 'bf16'");
  add(r, "Concat", 1, 1024, 1, 1, concat, "join inputs along axis");
  r.set_variadic("Concat");
  add(r, "Slice", 1, 1, 1, 1, slice, "starts, ends, axes, steps with ONNX clamping; negative steps walk backwards");
  add(r, "Split", 1, 1, 1, kMaxSplitOutputs, split, "cut along axis into pieces of the sizes in split");
  add(r, "Squeeze", 1, 1, 1, 1, squeeze, "drop size-1 dims listed in axes (absent: all size-1 dims)");
  add(r, "Unsqueeze", 1, 1, 1, 1, unsqueeze, "insert size-1 dims at axes (indices of the output)");
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze"}) r.set_view(op);
  add(r, "Expand", 1, 1, 1, 1, expand, "broadcast to shape (numpy rules)");
  // Inserted by the compiler where a tensor crosses memory spaces (host <-> a device backend); the
  // runtime runs it through the owning backend's copy(), or as a plain copy when both sides are host.
  add(r, "Copy", 1, 1, 1, 1, schema::same_as_first, "the same bytes in another memory space");
  add(r, "Pad", 1, 1, 1, 1, pad,
      "pad: pads = all begins then all ends; mode 'constant' (fill value=0; negative pads crop), 'reflect' or 'edge'");
  add(r, "Trilu", 1, 2, 1, 1, trilu,
      "(x, k i64 scalar?) upper=1: keeps x[..., i, j] with j - i >= k, else j - i <= k; k from the input, else the "
      "attribute (0); the rest becomes 0");
}

}  // namespace pock
