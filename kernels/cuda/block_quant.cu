// The CUDA block_quant family, f32 compute on every block format (q8_0, q4_0, q4_1, q4_k, q6_k):
// GatherQ (a thread per decoded value) and LinearQ / LinearQInputGrad as tiled products that
// decode each weight tile into shared memory when it is needed (block_quant_logic.hpp, checked
// against ref on the host by tests/cuda_logic/test_block_quant_logic.cpp). Compute "int8"
// quantizes x or dy (and for the input gradient the weight's columns) into the workspace, a warp
// per 32 values, and multiplies integers with dp4a (block_quant_int8_logic.hpp).
// LinearQCrossEntropy (the LM head and its loss) is block_quant_head.cu's.
#include <memory>
#include <new>
#include <string_view>
#include <utility>

#include "kernels/cuda/block_quant_head.hpp"
#include "kernels/cuda/block_quant_launch.cuh"
#include "kernels/cuda/checked_kernel.hpp"
#include "kernels/cuda/cuda_families.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/kernel_launch.cuh"
#include "kernels/cuda/row_team.cuh"
#include "kernels/params/block_quant.hpp"

namespace pock::cuda {
namespace {

// compute "int8": the quantized x (LinearQ) or dy (LinearQInputGrad) and, for the input
// gradient, the quantized weight columns, laid out in the workspace (`base` null: measuring).
struct Int8Scratch {
  QuantizedBlocks rows, columns;
};

Int8Scratch int8_scratch(void* base, int64_t values, int64_t column_blocks, size_t* bytes) {
  ScratchLayout layout{static_cast<char*>(base)};
  Int8Scratch s{quantized_blocks(layout, values), quantized_blocks(layout, 32 * column_blocks)};
  *bytes = layout.bytes();
  return s;
}

// The quantized rows: x [rows, K] for LinearQ, dy [rows, N] for LinearQInputGrad (whose weight
// columns make N / 32 * K blocks).
int64_t quantized_values(const pock_op_desc& op) { return numel(op.inputs[0]); }
int64_t column_blocks(const pock_op_desc& op, const params::BlockQuantParams& p) {
  return std::string_view(op.op) == "LinearQInputGrad" ? op.inputs[1].dims[0] / 32 * p.in_features : 0;
}

// The parameters, and for compute "int8" the workspace.
Status prepare_block_linear(const pock_op_desc& op, void** state) {
  std::unique_ptr<params::BlockQuantParams> p(new (std::nothrow) params::BlockQuantParams);
  if (!p) return Status(Code::kOutOfMemory, std::string(op.op) + " '" + op.name + "': parameters");
  POCK_RETURN_IF_ERROR(parse(op, p.get()));
  if (p->int8) {
    size_t bytes = 0;
    int8_scratch(nullptr, quantized_values(op), column_blocks(op, *p), &bytes);
    POCK_RETURN_IF_ERROR(reserve_workspace(bytes));
  }
  *state = p.release();
  return Status::ok();
}

// The int8 input gradient needs whole 32-row chunks of the weight (ref's arithmetic leaves no
// remainder to define).
bool accepts_block_linear(const pock_op_desc& op) {
  params::BlockQuantParams p;
  if (!parse(op, &p).is_ok()) return false;
  return !p.int8 || std::string_view(op.op) != "LinearQInputGrad" || op.inputs[1].dims[0] % 32 == 0;
}

Status linear_q_int8(const KernelCall& c, const params::BlockQuantParams& p) {
  const int64_t rows = leading_rows(c.in(0)), k = p.in_features, n = c.in(1).dims[0];
  size_t bytes = 0;
  const Int8Scratch s = int8_scratch(workspace(), quantized_values(*c.desc), 0, &bytes);
  POCK_RETURN_IF_ERROR(quantize(c, c.in_data<float>(0), numel(c.in(0)), s.rows));
  const Int8Gemm<WeightInt8Blocks> g{s.rows.q, s.rows.scales, s.rows.sums, {quant_rows(c, 1, p), n},
                                     c.has_input(2) ? c.in_data<float>(2) : nullptr, c.out_data<float>(0), rows, n, k};
  return launch_gemm<Int8Tile>(c, g);
}

Status linear_q_input_grad_int8(const KernelCall& c, const params::BlockQuantParams& p) {
  const int64_t rows = leading_rows(c.in(0)), k = p.in_features, n = c.in(1).dims[0];
  size_t bytes = 0;
  const Int8Scratch s = int8_scratch(workspace(), quantized_values(*c.desc), column_blocks(*c.desc, p), &bytes);
  POCK_RETURN_IF_ERROR(quantize(c, c.in_data<float>(0), numel(c.in(0)), s.rows));
  POCK_RETURN_IF_ERROR(quantize_columns(c, quant_rows(c, 1, p), k, s.columns));
  const Int8Gemm<QuantizedColumns> g{s.rows.q, s.rows.scales, nullptr, {s.columns.q, s.columns.scales, k},
                                     nullptr, c.out_data<float>(0), rows, k, n};
  return launch_gemm<Int8Tile>(c, g);
}

// LinearQ(x [..., K], w [N, row_bytes], bias?) -> y [..., N].
Status linear_q(const KernelCall& c) {
  const params::BlockQuantParams& p = *static_cast<const params::BlockQuantParams*>(c.state);
  if (p.int8) return linear_q_int8(c, p);
  const QuantGemm<WeightRowsAsColumns> g{c.in_data<float>(0),
                                         {quant_rows(c, 1, p)},
                                         c.has_input(2) ? c.in_data<float>(2) : nullptr,
                                         c.out_data<float>(0),
                                         leading_rows(c.in(0)),
                                         c.in(1).dims[0],
                                         p.in_features};
  return launch_gemm<QuantTile>(c, g);
}

// LinearQInputGrad(dy [..., N], w [N, row_bytes]) -> dx [..., K].
Status linear_q_input_grad(const KernelCall& c) {
  const params::BlockQuantParams& p = *static_cast<const params::BlockQuantParams*>(c.state);
  if (p.int8) return linear_q_input_grad_int8(c, p);
  const QuantGemm<WeightRows> g{c.in_data<float>(0),
                                {quant_rows(c, 1, p), p.in_features},
                                nullptr,
                                c.out_data<float>(0),
                                leading_rows(c.in(0)),
                                p.in_features,
                                c.in(1).dims[0]};
  return launch_gemm<QuantTile>(c, g);
}

template <typename Index>
cudaError_t launch_gather_q(const KernelCall& c, const params::BlockQuantParams& p, ErrorSite error) {
  const GatherQElement<Index> element{quant_rows(c, 0, p), p.in_features, c.in_data<Index>(1), c.out_data<float>(0),
                                      error};
  return launch_map(numel(c.in(1)) * p.in_features, current_stream(), element);
}

// GatherQ(table [V, row_bytes], indices) -> [..., K].
Status gather_q(const KernelCall& c, const params::BlockQuantParams& p, ErrorSite error) {
  return launched(c, c.in(1).dtype == POCK_I32 ? launch_gather_q<int32_t>(c, p, error)
                                               : launch_gather_q<int64_t>(c, p, error));
}

// ref's words for an index outside the table's rows.
std::string gather_q_index_error(const pock_op_desc& op, const params::BlockQuantParams&) {
  const int64_t rows = op.inputs[0].dims[0];
  return "an index is out of range [" + std::to_string(-rows) + ", " + std::to_string(rows) + ")";
}

}  // namespace

void register_block_quant(KernelTable& t) {
  using params::BlockQuantParams;
  for (auto [op, run] : {std::pair<const char*, KernelFn>{"LinearQ", linear_q}, {"LinearQInputGrad", linear_q_input_grad}}) {
    KernelDef d;
    d.op = op;
    d.dtype = DType::kF32;
    d.run = run;
    d.prepare = prepare_block_linear;
    d.release = [](void* state) { delete static_cast<BlockQuantParams*>(state); };
    d.accepts = accepts_block_linear;
    t.add(d);
  }
  KernelDef head;
  head.op = "LinearQCrossEntropy";
  head.dtype = DType::kF32;
  head.run = linear_q_cross_entropy;
  head.prepare = prepare_linear_q_cross_entropy;
  head.release = release_linear_q_cross_entropy;
  t.add(head);
  // The same decode under either compute.
  t.add(checked_kernel<BlockQuantParams, gather_q_index_error, gather_q>("GatherQ", DType::kU8));
}

}  // namespace pock::cuda
