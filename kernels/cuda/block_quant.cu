// The CUDA block_quant family, f32 compute on every block format (q8_0, q4_0, q4_1, q4_k, q6_k):
// GatherQ (a thread per decoded value) and LinearQ / LinearQInputGrad as tiled products that
// decode each weight tile into shared memory when it is needed (block_quant_logic.hpp, checked
// against ref on the host by tests/cuda_logic/test_block_quant_logic.cpp). LinearQ's compute
// "int8" quantizes x's blocks into the workspace (a warp per block) and multiplies integers with
// dp4a (block_quant_int8_logic.hpp); LinearQInputGrad's int8 and LinearQCrossEntropy are
// declined, so they run where a kernel for them exists.
#include <memory>
#include <new>

#include "kernels/cuda/block_quant_int8_logic.hpp"
#include "kernels/cuda/block_quant_logic.hpp"
#include "kernels/cuda/cuda_families.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/launch_status.hpp"
#include "kernels/cuda/row_team.cuh"
#include "kernels/params/block_quant.hpp"

namespace pock::cuda {
namespace {

// LinearQInputGrad's int8 arithmetic (columns of the decoded weight quantized per 32 rows) is not
// implemented here: compute "int8" is declined for it.
bool f32_compute(const pock_op_desc& op) {
  params::BlockQuantParams p;
  return parse(op, &p).is_ok() && !p.int8;
}

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

// compute "int8": x's blocks quantized into the workspace (integers, then scales and sums).
struct Int8Rows {
  int8_t* q;
  float* scales;
  int32_t* sums;
};

Int8Rows int8_rows(void* base, int64_t rows, int64_t k) {
  const int64_t values = rows * k, blocks = values / 32;
  auto* bytes = static_cast<char*>(base);
  const int64_t scales_at = (values + 255) / 256 * 256;
  return {reinterpret_cast<int8_t*>(bytes), reinterpret_cast<float*>(bytes + scales_at),
          reinterpret_cast<int32_t*>(bytes + scales_at + blocks * 4)};
}

size_t int8_scratch(int64_t rows, int64_t k) { return static_cast<size_t>((rows * k + 255) / 256 * 256 + rows * k / 32 * 8); }

// LinearQ's parameters, and for compute "int8" the workspace its quantized x needs.
Status prepare_linear_q(const pock_op_desc& op, void** state) {
  std::unique_ptr<params::BlockQuantParams> p(new (std::nothrow) params::BlockQuantParams);
  if (!p) return Status(Code::kOutOfMemory, std::string(op.op) + " '" + op.name + "': parameters");
  POCK_RETURN_IF_ERROR(parse(op, p.get()));
  if (p->int8) POCK_RETURN_IF_ERROR(reserve_workspace(int8_scratch(leading_rows(op.inputs[0]), p->in_features)));
  *state = p.release();
  return Status::ok();
}

Status linear_q_int8(const KernelCall& c, const params::BlockQuantParams& p) {
  const int64_t rows = leading_rows(c.in(0)), k = p.in_features;
  const Int8Rows q = int8_rows(workspace(), rows, k);
  const QuantizeBlocks quantize{c.in_data<float>(0), q.q, q.scales, q.sums};
  POCK_RETURN_IF_ERROR(launched(c, launch_rows(rows * k / 32, 32, current_stream(), quantize)));
  const Int8Gemm g{q.q,
                   q.scales,
                   q.sums,
                   quant_rows(c, 1, p),
                   c.has_input(2) ? c.in_data<float>(2) : nullptr,
                   c.out_data<float>(0),
                   rows,
                   c.in(1).dims[0],
                   k};
  return launch_gemm<Int8Tile>(c, g);
}

// LinearQ(x [..., K], w [N, row_bytes], bias?) -> y [..., N].
Status linear_q(const KernelCall& c) {
  const auto& p = *static_cast<const params::BlockQuantParams*>(c.state);
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
Status linear_q_input_grad(const KernelCall& c, const params::BlockQuantParams& p) {
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
  KernelDef linear;
  linear.op = "LinearQ";
  linear.dtype = DType::kF32;
  linear.run = linear_q;
  linear.prepare = prepare_linear_q;
  linear.release = [](void* state) { delete static_cast<BlockQuantParams*>(state); };
  t.add(linear);
  t.add(typed_kernel<BlockQuantParams, linear_q_input_grad>("LinearQInputGrad", DType::kF32, 1, f32_compute));
  t.add(typed_kernel<BlockQuantParams, gather_q>("GatherQ", DType::kU8));  // the same decode under either compute
}

}  // namespace pock::cuda
