// LinearQCrossEntropy, the LM head and its loss in one op, a chunk of rows at a time so that the
// logits of a large vocabulary never exist for all rows at once: LinearQ's tiles make the chunk's
// logits in the workspace, a team per row turns them into the row's loss and, in place, into
// their gradient (block_quant_head_logic.hpp), and LinearQInputGrad's tiles carry that to dx.
// With compute "int8" the same steps use the integer tiles (block_quant_int8_logic.hpp). The loss
// is the rows' losses summed in a fixed order.
#include <algorithm>
#include <memory>
#include <new>

#include "kernels/cuda/block_quant_head.hpp"
#include "kernels/cuda/block_quant_head_logic.hpp"
#include "kernels/cuda/block_quant_launch.cuh"
#include "kernels/cuda/checked_kernel.hpp"

namespace pock::cuda {
namespace {

// Rows per chunk: a chunk's logits are kChunkRows x classes floats.
constexpr int64_t kChunkRows = 256;

struct HeadScratch {
  HeadCounts* counts;
  float* row_loss;
  float* logits;
  QuantizedBlocks x, grad, columns;  // compute "int8" only
};

// Rows, classes (N), in_features (K).
struct HeadShape {
  int64_t rows, classes, features, chunk;
};

HeadShape head_shape(const pock_op_desc& op, const params::BlockQuantParams& p) {
  const int64_t rows = leading_rows(op.inputs[0]);
  return {rows, op.inputs[1].dims[0], p.in_features, std::max<int64_t>(1, std::min(rows, kChunkRows))};
}

HeadScratch head_scratch(void* base, const HeadShape& s, bool int8, size_t* bytes) {
  ScratchLayout layout{static_cast<char*>(base)};
  HeadScratch h{};
  h.counts = layout.take<HeadCounts>(1);
  h.row_loss = layout.take<float>(s.rows);
  h.logits = layout.take<float>(s.chunk * s.classes);
  if (int8) {
    h.x = quantized_blocks(layout, s.chunk * s.features);
    h.grad = quantized_blocks(layout, s.chunk * s.classes);
    h.columns = quantized_blocks(layout, s.classes * s.features);
  }
  *bytes = layout.bytes();
  return h;
}

// The chunk's logits [rows, classes] from x's rows.
Status chunk_logits(const KernelCall& c, const params::BlockQuantParams& p, const HeadShape& s, const HeadScratch& h,
                    const float* x, int64_t rows) {
  const QuantRows w = quant_rows(c, 1, p);
  if (!p.int8) {
    return launch_gemm<QuantTile>(
        c, QuantGemm<WeightRowsAsColumns>{x, {w}, nullptr, h.logits, rows, s.classes, s.features});
  }
  POCK_RETURN_IF_ERROR(quantize(c, x, rows * s.features, h.x));
  return launch_gemm<Int8Tile>(c, Int8Gemm<WeightInt8Blocks>{h.x.q, h.x.scales, h.x.sums, {w, s.classes}, nullptr,
                                                             h.logits, rows, s.classes, s.features});
}

// dx's rows from the chunk's logit gradient.
Status chunk_input_grad(const KernelCall& c, const params::BlockQuantParams& p, const HeadShape& s,
                        const HeadScratch& h, float* dx, int64_t rows) {
  if (!p.int8) {
    return launch_gemm<QuantTile>(c, QuantGemm<WeightRows>{h.logits, {quant_rows(c, 1, p), s.features}, nullptr, dx,
                                                           rows, s.features, s.classes});
  }
  POCK_RETURN_IF_ERROR(quantize(c, h.logits, rows * s.classes, h.grad));
  return launch_gemm<Int8Tile>(c, Int8Gemm<QuantizedColumns>{h.grad.q, h.grad.scales, nullptr,
                                                             {h.columns.q, h.columns.scales, s.features}, nullptr, dx,
                                                             rows, s.features, s.classes});
}

// ref's words for a label outside the classes.
std::string label_error(const pock_op_desc& op, const params::BlockQuantParams& p) {
  return "a label is outside [0, " + std::to_string(head_shape(op, p).classes) + ") and is not ignore_index";
}

}  // namespace

Status prepare_linear_q_cross_entropy(const pock_op_desc& op, void** state) {
  std::unique_ptr<Checked<params::BlockQuantParams>> s;
  POCK_RETURN_IF_ERROR(prepare_checked<params::BlockQuantParams>(op, label_error, &s));
  size_t bytes = 0;
  head_scratch(nullptr, head_shape(op, s->params), s->params.int8, &bytes);
  POCK_RETURN_IF_ERROR(reserve_workspace(bytes));
  *state = s.release();
  return Status::ok();
}

void release_linear_q_cross_entropy(void* state) { delete static_cast<Checked<params::BlockQuantParams>*>(state); }

Status linear_q_cross_entropy(const KernelCall& c) {
  const auto& state = *static_cast<const Checked<params::BlockQuantParams>*>(c.state);
  const params::BlockQuantParams& p = state.params;
  const HeadShape s = head_shape(*c.desc, p);
  size_t bytes = 0;
  const HeadScratch h = head_scratch(workspace(), s, p.int8, &bytes);
  const int64_t* labels = c.in_data<int64_t>(2);
  const bool grad = c.num_outputs() > 1;
  const CountLabels count{labels, s.rows, s.classes, p.ignore_index, h.counts, state.error()};
  POCK_RETURN_IF_ERROR(launched(c, launch_rows(1, s.rows, current_stream(), count)));
  if (grad && p.int8) POCK_RETURN_IF_ERROR(quantize_columns(c, quant_rows(c, 1, p), s.features, h.columns));
  for (int64_t r0 = 0; r0 < s.rows; r0 += s.chunk) {
    const int64_t rows = std::min(s.chunk, s.rows - r0);
    POCK_RETURN_IF_ERROR(chunk_logits(c, p, s, h, c.in_data<float>(0) + r0 * s.features, rows));
    const CrossEntropyRow row{h.logits,  labels + r0,   h.row_loss + r0,
                              h.counts,  s.classes,     p.ignore_index,
                              static_cast<float>(p.label_smoothing)};
    POCK_RETURN_IF_ERROR(launched(c, launch_rows(rows, s.classes, current_stream(), row)));
    if (grad) POCK_RETURN_IF_ERROR(chunk_input_grad(c, p, s, h, c.out_data<float>(1) + r0 * s.features, rows));
  }
  const HeadLoss loss{h.row_loss, h.counts, s.rows, c.out_data<float>(0)};
  return launched(c, launch_rows(1, s.rows, current_stream(), loss));
}

}  // namespace pock::cuda
