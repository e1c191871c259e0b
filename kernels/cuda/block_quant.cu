// The CUDA block_quant family, f32 compute on every block format (q8_0, q4_0, q4_1, q4_k, q6_k):
// GatherQ (a thread per decoded value) and LinearQ / LinearQInputGrad as tiled products that
// decode each weight tile into shared memory when it is needed (block_quant_logic.hpp, checked
// against ref on the host by tests/cuda_logic/test_block_quant_logic.cpp). Compute "int8" and
// LinearQCrossEntropy are declined, so they run where a kernel for them exists.
#include "kernels/cuda/block_quant_logic.hpp"
#include "kernels/cuda/cuda_families.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/launch_status.hpp"
#include "kernels/params/block_quant.hpp"

namespace pock::cuda {
namespace {

// Every block format; the int8 arithmetic of compute "int8" is not implemented here.
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

template <typename G>
__global__ void __launch_bounds__(kTileThreads) quant_gemm_kernel(G g) {
  __shared__ QuantTile tile;
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

template <typename G>
Status launch_gemm(const KernelCall& c, const G& g) {
  if (g.m == 0 || g.n == 0) return Status::ok();
  const int64_t row_tiles = (g.m + kTileM - 1) / kTileM;
  if (row_tiles > 65535) return c.error("more rows than one launch covers");
  const dim3 grid(static_cast<unsigned>((g.n + kTileN - 1) / kTileN), static_cast<unsigned>(row_tiles));
  quant_gemm_kernel<<<grid, kTileThreads, 0, current_stream()>>>(g);
  return launched(c, cudaGetLastError());
}

// LinearQ(x [..., K], w [N, row_bytes], bias?) -> y [..., N].
Status linear_q(const KernelCall& c, const params::BlockQuantParams& p) {
  const QuantGemm<WeightRowsAsColumns> g{c.in_data<float>(0),
                                         {quant_rows(c, 1, p)},
                                         c.has_input(2) ? c.in_data<float>(2) : nullptr,
                                         c.out_data<float>(0),
                                         leading_rows(c.in(0)),
                                         c.in(1).dims[0],
                                         p.in_features};
  return launch_gemm(c, g);
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
  return launch_gemm(c, g);
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
  t.add(typed_kernel<BlockQuantParams, linear_q>("LinearQ", DType::kF32, 1, f32_compute));
  t.add(typed_kernel<BlockQuantParams, linear_q_input_grad>("LinearQInputGrad", DType::kF32, 1, f32_compute));
  t.add(typed_kernel<BlockQuantParams, gather_q>("GatherQ", DType::kU8, 1, f32_compute));
}

}  // namespace pock::cuda
