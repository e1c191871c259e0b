// Schemas of the block_quant family: frozen weights kept in a block-quantized source format
// (ir/block_format.hpp; recipe frozen_weights "source"). The weight is a u8 tensor of rows of
// blocks, [N, row_bytes]; attributes `format` and `in_features` say how a row decodes, and the
// schema checks that row_bytes is exactly what that format needs for in_features values, so a
// blob whose weight is too short for what the kernels will read is refused at load.
#include "ir/block_format.hpp"
#include "ir/ops/schema_helpers.hpp"

namespace pock {
namespace {

// The weight input `i`: u8 [N, row_bytes] rows of `format` blocks holding in_features values each.
// Returns in_features.
Result<int64_t> check_block_rows(const InferContext& ctx, size_t i) {
  const std::string_view name = ctx.attrs->get_string("format", "");
  const std::optional<BlockFormat> format = parse_block_format(name);
  if (!format) return ctx.error("attribute 'format' is '" + std::string(name) + "', not q8_0, q4_0, q4_1, q4_k or q6_k");
  const int64_t in_features = ctx.attrs->get_int("in_features", 0);
  const int64_t row_bytes = block_row_bytes(*format, in_features);
  if (row_bytes < 0) {
    return ctx.error("in_features " + std::to_string(in_features) + " is not a positive multiple of the " +
                     std::to_string(block_layout(*format).values) + "-value blocks of " + std::string(name));
  }
  const std::string_view compute = ctx.attrs->get_string("compute", "f32");
  if (compute != "f32" && compute != "int8") return ctx.error("attribute 'compute' is '" + std::string(compute) + "', not f32 or int8");
  if (compute == "int8" && !has_int8_view(*format)) {
    return ctx.error("compute int8 needs q8_0, q4_0 or q4_1 blocks, not " + std::string(name));
  }
  const TensorType& w = ctx.in(i);
  if (w.dtype != DType::kU8 || w.shape.size() != 2 || w.shape[1] != row_bytes) {
    return ctx.shape_error("the weight must be u8 [N, " + std::to_string(row_bytes) + "] (" + std::to_string(in_features) +
                           " values of " + std::string(name) + " per row), got " + dtype_name(w.dtype) + " " +
                           shape_str(w.shape));
  }
  return in_features;
}

Status require_f32(const InferContext& ctx, size_t i, const char* what) {
  if (ctx.in(i).dtype != DType::kF32) return ctx.error(std::string(what) + " must be f32, got " + dtype_name(ctx.in(i).dtype));
  if (ctx.in(i).shape.empty()) return ctx.shape_error(std::string(what) + " must have rank >= 1, got a scalar");
  return Status::ok();
}

// x f32 [..., K], w u8 [N, row_bytes], bias f32 [N]? -> y f32 [..., N]
Status linear_q(InferContext& ctx) {
  POCK_ASSIGN_OR_RETURN(const int64_t k, check_block_rows(ctx, 1));
  POCK_RETURN_IF_ERROR(require_f32(ctx, 0, "x"));
  const Shape& x = ctx.in(0).shape;
  const int64_t n = ctx.in(1).shape[0];
  if (x.back() != k) return ctx.shape_error("x " + shape_str(x) + " does not have in_features = " + std::to_string(k));
  if (ctx.has_in(2) && (ctx.in(2).dtype != DType::kF32 || ctx.in(2).shape != Shape{n})) {
    return ctx.shape_error("bias must be f32 [" + std::to_string(n) + "], got " + shape_str(ctx.in(2).shape));
  }
  Shape out = x;
  out.back() = n;
  ctx.outputs = {TensorType{DType::kF32, out}};
  return Status::ok();
}

// dy f32 [..., N], w u8 [N, row_bytes] -> dx f32 [..., K]
Status linear_q_input_grad(InferContext& ctx) {
  POCK_ASSIGN_OR_RETURN(const int64_t k, check_block_rows(ctx, 1));
  POCK_RETURN_IF_ERROR(require_f32(ctx, 0, "dy"));
  const Shape& dy = ctx.in(0).shape;
  if (dy.back() != ctx.in(1).shape[0]) {
    return ctx.shape_error("dy " + shape_str(dy) + " does not have the weight's " + std::to_string(ctx.in(1).shape[0]) + " outputs");
  }
  if (ctx.attrs->get_string("compute", "f32") == "int8" && dy.back() % 32 != 0) {
    return ctx.shape_error("compute int8 quantizes dy in 32-value blocks: its " + std::to_string(dy.back()) +
                           " outputs are not a multiple of 32");
  }
  Shape out = dy;
  out.back() = k;
  ctx.outputs = {TensorType{DType::kF32, out}};
  return Status::ok();
}

// x f32 [..., K], w u8 [N, row_bytes], labels i64 [...] -> loss f32 [], dx f32 [..., K]?
Status linear_q_cross_entropy(InferContext& ctx) {
  POCK_ASSIGN_OR_RETURN(const int64_t k, check_block_rows(ctx, 1));
  POCK_RETURN_IF_ERROR(require_f32(ctx, 0, "x"));
  const Shape& x = ctx.in(0).shape;
  if (x.back() != k) return ctx.shape_error("x " + shape_str(x) + " does not have in_features = " + std::to_string(k));
  if (x.size() < 2) return ctx.shape_error("x must be [N, K] or [N, S, K], got " + shape_str(x));
  const TensorType& labels = ctx.in(2);
  if (labels.dtype != DType::kI64 || labels.shape != Shape(x.begin(), x.end() - 1)) {
    return ctx.shape_error("labels must be i64 " + shape_str(Shape(x.begin(), x.end() - 1)) + ", got " + dtype_name(labels.dtype) +
                           " " + shape_str(labels.shape));
  }
  const double smoothing = ctx.attrs->get_float("label_smoothing", 0.0);
  if (!(smoothing >= 0.0 && smoothing < 1.0)) return ctx.error("label_smoothing must be in [0, 1)");
  if (ctx.attrs->get_string("compute", "f32") == "int8" && ctx.in(1).shape[0] % 32 != 0) {
    return ctx.shape_error("compute int8 quantizes the logits' gradient in 32-value blocks: " +
                           std::to_string(ctx.in(1).shape[0]) + " classes are not a multiple of 32");
  }
  ctx.outputs = {TensorType{DType::kF32, {}}};
  if (ctx.attrs->get_int("with_gradient", 1) != 0) ctx.outputs.push_back(TensorType{DType::kF32, x});
  return Status::ok();
}

// table u8 [V, row_bytes], indices i32/i64 [...] -> f32 [..., K]: the decoded rows (axis 0).
Status gather_q(InferContext& ctx) {
  POCK_ASSIGN_OR_RETURN(const int64_t k, check_block_rows(ctx, 0));
  const TensorType& indices = ctx.in(1);
  if (indices.dtype != DType::kI32 && indices.dtype != DType::kI64) {
    return ctx.error(std::string("indices must be i32 or i64, got ") + dtype_name(indices.dtype));
  }
  if (indices.shape.size() + 1 > static_cast<size_t>(kMaxRank)) {
    return ctx.shape_error("indices " + shape_str(indices.shape) + " leave no room for the feature dimension");
  }
  Shape out = indices.shape;
  out.push_back(k);
  ctx.outputs = {TensorType{DType::kF32, out}};
  return Status::ok();
}

}  // namespace

void register_block_quant_schemas(SchemaRegistry& r) {
  using schema::add;
  add(r, "LinearQ", 2, 3, 1, 1, linear_q,
      "x [..., K] f32, w u8 [N, row_bytes] (rows of `format` blocks, K = in_features), bias [N]?: "
      "y = x dequant(w)^T + bias; frozen block-quantized weights (recipe frozen_weights source); "
      "compute int8: x quantized per 32-value block, integer products with the blocks (recipe frozen_matmul)");
  add(r, "LinearQInputGrad", 2, 2, 1, 1, linear_q_input_grad,
      "(dy [..., N], w u8 [N, row_bytes]) -> dy dequant(w) [..., K], read from the same rows as LinearQ; "
      "compute int8: dy and the weight's columns quantized per 32 values of N");
  add(r, "LinearQCrossEntropy", 3, 3, 1, 2, linear_q_cross_entropy,
      "(x [..., K], w u8 [N, row_bytes], labels i64 [...]) -> SoftmaxCrossEntropy(LinearQ(x, w), labels) (attributes of "
      "both) and, with with_gradient (default 1), its gradient with respect to x for dloss = 1: the LM head and its loss in one op, "
      "over row chunks, so the [..., N] logits never exist whole");
  add(r, "GatherQ", 2, 2, 1, 1, gather_q,
      "table u8 [V, row_bytes] of `format` blocks, indices [...] -> the decoded rows [..., in_features] f32");
}

}  // namespace pock
