// Schemas of the shape family's backward-only ops. Most shape gradients are other shape ops
// (Reshape back, the inverse Transpose, Slice for Concat); Slice and the border modes of Pad need
// ops of their own.
#include <algorithm>
#include <string>
#include <string_view>
#include <variant>

#include "ir/ops/layer_grad_schemas.hpp"
#include "ir/ops/schema_helpers.hpp"

namespace pock {
namespace {

Result<std::vector<int64_t>> rank_list(const InferContext& ctx, const char* name, size_t rank) {
  const AttrValue* v = ctx.attrs->find(name);
  const auto* list = v ? std::get_if<std::vector<int64_t>>(v) : nullptr;
  if (!list || list->size() != rank) {
    return ctx.error(std::string("attribute '") + name + "' must be a list of " + std::to_string(rank) + " ints");
  }
  return *list;
}

// SliceGrad(dy) -> dx of `shape`, zero except dx[starts + i * steps] = dy[i]. The rule resolves
// the forward Slice's ONNX clamping into one start and one non-zero step per axis, so the kernel
// only scatters.
Status slice_grad(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  const Shape& dy = ctx.in(0).shape;
  POCK_ASSIGN_OR_RETURN(auto shape, rank_list(ctx, "shape", dy.size()));
  POCK_ASSIGN_OR_RETURN(auto starts, rank_list(ctx, "starts", dy.size()));
  POCK_ASSIGN_OR_RETURN(auto steps, rank_list(ctx, "steps", dy.size()));
  for (size_t d = 0; d < dy.size(); ++d) {
    if (shape[d] < 0 || steps[d] == 0) return ctx.error("shape must be >= 0 and steps non-zero");
    if (dy[d] == 0) continue;
    const int64_t last = starts[d] + (dy[d] - 1) * steps[d];
    if (starts[d] < 0 || starts[d] >= shape[d] || last < 0 || last >= shape[d]) {
      return ctx.shape_error("dy " + shape_str(dy) + " with starts " + shape_str(starts) + " and steps " +
                             shape_str(steps) + " leaves the shape " + shape_str(shape) + " on axis " +
                             std::to_string(d));
    }
  }
  ctx.outputs = {TensorType{ctx.in(0).dtype, shape}};
  return Status::ok();
}

// PadGrad(dy) -> dx with dy's shape less the pads: the gradient of reflect and edge padding, where
// each border element of dy adds to the input element it copied.
Status pad_grad(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  const Shape& dy = ctx.in(0).shape;
  POCK_ASSIGN_OR_RETURN(auto pads, rank_list(ctx, "pads", 2 * dy.size()));
  const std::string_view mode = ctx.attrs->get_string("mode", "");
  if (mode != "reflect" && mode != "edge") return ctx.error("mode must be 'reflect' or 'edge', got '" + std::string(mode) + "'");
  Shape dx = dy;
  for (size_t d = 0; d < dy.size(); ++d) {
    const int64_t begin = pads[d], end = pads[d + dy.size()];
    dx[d] = dy[d] - begin - end;
    const int64_t limit = mode == "reflect" ? dx[d] - 1 : (dx[d] > 0 ? std::max(begin, end) : 0);
    if (begin < 0 || end < 0 || dx[d] < 0 || std::max(begin, end) > limit) {
      if (begin == 0 && end == 0 && dx[d] >= 0) continue;
      return ctx.shape_error("pads " + shape_str(pads) + " in mode '" + std::string(mode) + "' do not fit dy " + shape_str(dy) +
                             " on axis " + std::to_string(d));
    }
  }
  ctx.outputs = {TensorType{ctx.in(0).dtype, dx}};
  return Status::ok();
}

}  // namespace

void register_shape_grad_schemas(SchemaRegistry& r) {
  schema::add(r, "SliceGrad", 1, 1, 1, 1, slice_grad,
              "Slice backward: zeros of `shape` with dy scattered to starts + i * steps (one per axis)");
  schema::add(r, "PadGrad", 1, 1, 1, 1, pad_grad,
              "reflect / edge Pad backward: dy's interior, plus each border element added to the element it copied");
}

}  // namespace pock
