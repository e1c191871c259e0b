// Gradient rules of the shape family. Shape ops only move elements, so each gradient moves dy back:
// a reshape back, the inverse permutation, slices of a concatenation, a scatter for a slice.
#include <algorithm>

#include "compiler/autodiff/grad_rule.hpp"

namespace pock {
namespace {

Shape shape_of(const GradContext& ctx, TensorId id) { return ctx.desc(id).shape; }

int normalized_axis(int64_t axis, size_t rank) {
  return static_cast<int>(axis < 0 ? axis + static_cast<int64_t>(rank) : axis);
}

// Reshape, Flatten, Squeeze, Unsqueeze: dy reshaped to x's shape.
Status reshape_back(GradContext& ctx) {
  if (ctx.dy(0) == kNoTensor || !ctx.needs(0)) return Status::ok();
  const Shape x = shape_of(ctx, ctx.x(0));
  // Reshape reads a 0 as "copy the input dim", so an empty x gets its (empty) gradient directly.
  if (std::find(x.begin(), x.end(), 0) != x.end()) {
    ctx.set_dx(0, ctx.constant(0.0f, x));
    return ctx.status();
  }
  ctx.set_dx(0, ctx.emit1("Reshape", {ctx.dy(0)}, {{"shape", x}}));
  return ctx.status();
}

// Transpose by perm: dx = Transpose(dy, inverse perm). An absent perm reverses, its own inverse.
Status transpose(GradContext& ctx) {
  if (ctx.dy(0) == kNoTensor || !ctx.needs(0)) return Status::ok();
  const size_t rank = shape_of(ctx, ctx.x(0)).size();
  std::vector<int64_t> reversed(rank);
  for (size_t i = 0; i < rank; ++i) reversed[i] = static_cast<int64_t>(rank - 1 - i);
  const std::vector<int64_t>& perm = ctx.attrs().get_ints("perm", reversed);
  std::vector<int64_t> inverse(rank);
  for (size_t i = 0; i < rank; ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  ctx.set_dx(0, ctx.emit1("Transpose", {ctx.dy(0)}, {{"perm", inverse}}));
  return ctx.status();
}

// Concat along axis: input i's gradient is its own stretch of dy.
Status concat(GradContext& ctx) {
  if (ctx.dy(0) == kNoTensor) return Status::ok();
  const size_t rank = shape_of(ctx, ctx.x(0)).size();
  const int64_t axis = normalized_axis(ctx.attrs().get_int("axis", 0), rank);
  int64_t offset = 0;
  for (size_t i = 0; i < ctx.node().inputs.size(); ++i) {
    const int64_t size = shape_of(ctx, ctx.x(i))[static_cast<size_t>(axis)];
    if (ctx.needs(i)) {
      ctx.set_dx(i, ctx.emit1("Slice", {ctx.dy(0)},
                              {{"starts", std::vector<int64_t>{offset}},
                               {"ends", std::vector<int64_t>{offset + size}},
                               {"axes", std::vector<int64_t>{axis}}}));
    }
    offset += size;
  }
  return ctx.status();
}

// Split along axis: dx is the pieces' gradients concatenated; an unused piece contributes zeros.
Status split(GradContext& ctx) {
  if (!ctx.needs(0)) return Status::ok();
  std::vector<TensorId> pieces;
  bool any = false;
  for (size_t i = 0; i < ctx.node().outputs.size(); ++i) {
    any = any || ctx.dy(i) != kNoTensor;
    pieces.push_back(ctx.dy(i) != kNoTensor ? ctx.dy(i) : ctx.constant(0.0f, shape_of(ctx, ctx.y(i))));
  }
  if (!any) return Status::ok();
  const size_t rank = shape_of(ctx, ctx.x(0)).size();
  ctx.set_dx(0, ctx.emit1("Concat", pieces,
                          {{"axis", static_cast<int64_t>(normalized_axis(ctx.attrs().get_int("axis", 0), rank))}}));
  return ctx.status();
}

// Slice: dy scattered back into zeros. The forward's ONNX clamping is resolved here, the same way
// the Slice schema resolves it, into one start and one step per axis of x.
Status slice(GradContext& ctx) {
  if (ctx.dy(0) == kNoTensor || !ctx.needs(0)) return Status::ok();
  const Shape x = shape_of(ctx, ctx.x(0));
  const size_t rank = x.size();
  const Attrs& a = ctx.attrs();
  const std::vector<int64_t> starts = a.get_ints("starts", {});
  const std::vector<int64_t> ends = a.get_ints("ends", {});
  std::vector<int64_t> default_axes(starts.size()), ones(starts.size(), 1);
  for (size_t i = 0; i < starts.size(); ++i) default_axes[i] = static_cast<int64_t>(i);
  const std::vector<int64_t> axes = a.get_ints("axes", default_axes);
  const std::vector<int64_t> steps = a.get_ints("steps", ones);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    return Status(Code::kInvalidArgument,
                  "Slice '" + ctx.node().name + "': starts, ends, axes, steps differ in length");
  }

  std::vector<int64_t> first(rank, 0), stride(rank, 1);
  const int64_t limit = int64_t{1} << 62;  // as the schema: far bounds mean "to the end"
  for (size_t i = 0; i < axes.size(); ++i) {
    const size_t d = static_cast<size_t>(normalized_axis(axes[i], rank));
    const int64_t dim = x[d], step = std::clamp(steps[i], -limit, limit);
    int64_t start = std::clamp(starts[i], -limit, limit);
    if (start < 0) start += dim;
    first[d] =
        step > 0 ? std::clamp<int64_t>(start, 0, dim) : std::clamp<int64_t>(start, 0, std::max<int64_t>(dim - 1, 0));
    stride[d] = step;
  }
  ctx.set_dx(0, ctx.emit1("SliceGrad", {ctx.dy(0)}, {{"starts", first}, {"steps", stride}, {"shape", x}}));
  return ctx.status();
}

// Expand broadcasts x: dx sums dy over the broadcast axes.
Status expand(GradContext& ctx) {
  if (ctx.dy(0) == kNoTensor || !ctx.needs(0)) return Status::ok();
  ctx.set_dx(0, ctx.sum_to_shape(ctx.dy(0), shape_of(ctx, ctx.x(0))));
  return ctx.status();
}

// Pad by pads (negative crops): the gradient is the opposite pad, which crops the padding away
// and pads zeros where the forward cropped.
// Reflect and edge padding copy border elements: PadGrad adds their gradients back in.
Status pad(GradContext& ctx) {
  if (ctx.dy(0) == kNoTensor || !ctx.needs(0)) return Status::ok();
  const std::string mode(ctx.attrs().get_string("mode", "constant"));
  if (mode != "constant") {
    ctx.set_dx(0, ctx.emit1("PadGrad", {ctx.dy(0)}, {{"pads", ctx.attrs().get_ints("pads", {})}, {"mode", mode}}));
    return ctx.status();
  }
  std::vector<int64_t> opposite = ctx.attrs().get_ints("pads", {});
  for (int64_t& p : opposite) p = -p;
  ctx.set_dx(0, ctx.emit1("Pad", {ctx.dy(0)}, {{"pads", opposite}, {"value", 0.0}}));
  return ctx.status();
}

// Trilu is a fixed mask: the gradient is the same mask of dy.
Status trilu(GradContext& ctx) {
  if (ctx.dy(0) == kNoTensor || !ctx.needs(0)) return Status::ok();
  std::vector<TensorId> in{ctx.dy(0)};
  if (ctx.node().inputs.size() > 1 && ctx.x(1) != kNoTensor) in.push_back(ctx.x(1));  // the same k
  ctx.set_dx(0, ctx.emit1("Trilu", in, ctx.attrs()));
  return ctx.status();
}

}  // namespace

void register_shape_gradients(GradRegistry& r) {
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Copy"}) r.add(op, reshape_back);
  r.add("Transpose", transpose);
  r.add("Concat", concat);
  r.add("Split", split);
  r.add("Slice", slice);
  r.add("Expand", expand);
  r.add("Pad", pad);
  r.add("Trilu", trilu);
}

}  // namespace pock
