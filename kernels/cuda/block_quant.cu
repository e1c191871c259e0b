// The CUDA block_quant family, f32 compute on every block format (q8_0, q4_0, q4_1, q4_k, q6_k):
// GatherQ (a thread per decoded value) and LinearQ / LinearQInputGrad as tiled products that
// decode each weight tile into shared memory when it is needed (block_quant_logic.hpp, checked
// against ref on the host by tests/cuda_logic/test_block_quant_logic.cpp). Compute "int8"
// quantizes x or dy (and for the input gradient the weight's columns) into the workspace, a warp
// per 32 values, and multiplies integers with dp4a (block_quant_int8_logic.hpp).
// LinearQCrossEntropy is not implemented here: it runs where a kernel for it exists.
#include <memory>
#include <new>
#include <string_view>
#include <utility>

#include "kernels/cuda/block_quant_int8_logic.hpp"
#include "kernels/cuda/block_quant_logic.hpp"
#include "kernels/cuda/cuda_families.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/launch_status.hpp"
#include "kernels/cuda/row_team.cuh"
#include "kernels/params/block_quant.hpp"

namespace pock::cuda {
namespace {

int64_t leading_rows(const pock_tensor_desc& t) {
  int64_t rows = 1;
  for (int d = 0; d + 1 < t.rank; ++d) rows *= t.dims[d];
  return rows;
}

QuantRows quant_rows(const KernelCall& c, int input, const params::BlockQuantParams& p) {
  return {c.in_data<uint8_t>(input), c.in(input).dims[0], p.row_bytes, p.format};
}

template <typename Tile, typename G>
__global__ void __launch_bounds__(kTileThreads) quant_gemm_kernel(G g) {
  __shared__ Tile tile;
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * kTileM, n0 = static_cast<int64_t>(blockIdx.x) * kTileN;
  float acc[4][4] = {};
  for (int64_t k0 = 0; k0 < g.k; k0 += kTileK) {
    g.load(tile, m0, n0, k0, threadIdx.x);
    __syncthreads();
    g.accumulate(tile, threadIdx.x, acc);
    __syncthreads();
  }
  g.store(m0, n0, threadIdx.x, acc);
}

template <typename Tile, typename G>
Status launch_gemm(const KernelCall& c, const G& g) {
  if (g.m == 0 || g.n == 0) return Status::ok();
  const int64_t row_tiles = (g.m + kTileM - 1) / kTileM;
  if (row_tiles > 65535) return c.error("more rows than one launch covers");
  const dim3 grid(static_cast<unsigned>((g.n + kTileN - 1) / kTileN), static_cast<unsigned>(row_tiles));
  quant_gemm_kernel<Tile><<<grid, kTileThreads, 0, current_stream()>>>(g);
  return launched(c, cudaGetLastError());
}

// compute "int8": the workspace holds the quantized x (LinearQ) or dy (LinearQInputGrad) blocks,
// their scales and sums, and for the input gradient the quantized weight columns and scales.
struct Int8Scratch {
  int8_t* q;
  float* scales;
  int32_t* sums;
  int8_t* columns;
  float* column_scales;
};

constexpr int64_t kAlign = 256;
int64_t aligned(int64_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// `values` quantized values (a multiple of 32) and, for LinearQInputGrad, `columns` weight
// column blocks; `base` null measures the bytes.
Int8Scratch int8_scratch(void* base, int64_t values, int64_t columns, size_t* bytes) {
  const int64_t blocks = values / 32;
  const int64_t at_scales = aligned(values), at_sums = at_scales + aligned(4 * blocks);
  const int64_t at_columns = at_sums + aligned(4 * blocks), at_column_scales = at_columns + aligned(32 * columns);
  *bytes = static_cast<size_t>(at_column_scales + aligned(4 * columns));
  auto* b = static_cast<char*>(base);
  if (!b) return {};
  return {reinterpret_cast<int8_t*>(b), reinterpret_cast<float*>(b + at_scales), reinterpret_cast<int32_t*>(b + at_sums),
          reinterpret_cast<int8_t*>(b + at_columns), reinterpret_cast<float*>(b + at_column_scales)};
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

Status quantize_rows(const KernelCall& c, const Int8Scratch& s) {
  const QuantizeBlocks quantize{c.in_data<float>(0), s.q, s.scales, s.sums};
  return launched(c, launch_rows(numel(c.in(0)) / 32, 32, current_stream(), quantize));
}

Status linear_q_int8(const KernelCall& c, const params::BlockQuantParams& p) {
  const int64_t rows = leading_rows(c.in(0)), k = p.in_features, n = c.in(1).dims[0];
  size_t bytes = 0;
  const Int8Scratch s = int8_scratch(workspace(), quantized_values(*c.desc), 0, &bytes);
  POCK_RETURN_IF_ERROR(quantize_rows(c, s));
  const Int8Gemm<WeightInt8Blocks> g{s.q, s.scales, s.sums, {quant_rows(c, 1, p), n},
                                     c.has_input(2) ? c.in_data<float>(2) : nullptr, c.out_data<float>(0), rows, n, k};
  return launch_gemm<Int8Tile>(c, g);
}

Status linear_q_input_grad_int8(const KernelCall& c, const params::BlockQuantParams& p) {
  const int64_t rows = leading_rows(c.in(0)), k = p.in_features, n = c.in(1).dims[0];
  size_t bytes = 0;
  const Int8Scratch s = int8_scratch(workspace(), quantized_values(*c.desc), column_blocks(*c.desc, p), &bytes);
  POCK_RETURN_IF_ERROR(quantize_rows(c, s));
  const QuantizeColumns columns{quant_rows(c, 1, p), k, s.columns, s.column_scales};
  POCK_RETURN_IF_ERROR(launched(c, launch_rows(n / 32 * k, 32, current_stream(), columns)));
  const Int8Gemm<QuantizedColumns> g{s.q, s.scales, nullptr, {s.columns, s.column_scales, k},
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
cudaError_t launch_gather_q(const KernelCall& c, const params::BlockQuantParams& p) {
  const GatherQElement<Index> element{quant_rows(c, 0, p), p.in_features, c.in_data<Index>(1), c.out_data<float>(0)};
  return launch_map(numel(c.in(1)) * p.in_features, current_stream(), element);
}

// GatherQ(table [V, row_bytes], indices) -> [..., K].
Status gather_q(const KernelCall& c, const params::BlockQuantParams& p) {
  return launched(c, c.in(1).dtype == POCK_I32 ? launch_gather_q<int32_t>(c, p) : launch_gather_q<int64_t>(c, p));
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
  t.add(typed_kernel<BlockQuantParams, gather_q>("GatherQ", DType::kU8));  // the same decode under either compute
}

}  // namespace pock::cuda
