// GEMMs with bf16 operands and f32 sums (compute "bf16", recipe precision "bf16"), as kernels/ref
// defines them: each f32 operand rounded to the nearest bf16 (kernels/bf16_round.h), products and
// sums in f32. Two ways to get there, chosen once per process (bf16_isa):
//   kAvx512Bf16  oneDNN's matmul on bf16 copies of the operands (AVX512-BF16 dot products, AMX
//                tiles where the CPU has them): the rounding is the hardware's conversion.
//   kF32Fma      the operands rounded in f32 copies, then the f32 sgemm: the same values, no faster
//                than f32 (CPUs without AVX512-BF16, builds without oneDNN).
// POCK_BF16_ISA=fp32 forces the second (to compare the two on one machine).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "pock/status.hpp"

namespace pock::cpu {

enum class Bf16Isa { kAvx512Bf16, kF32Fma };
Bf16Isa bf16_isa();

// Writes each of n values rounded to the nearest bf16 (kept as f32).
void round_to_bf16(const float* in, int64_t n, float* out);

// Writes each of n bf16 values as the f32 it stands for (exact).
void widen_bf16(const uint16_t* in, int64_t n, float* out);

// Writes each of n values as its nearest bf16 (round to nearest even, as kernels/bf16_round.h):
// VCVTNEPS2BF16 on Bf16Isa::kAvx512Bf16, the portable rounding otherwise.
void convert_to_bf16(const float* in, int64_t n, uint16_t* out);

// One row-major product shape: y[M, N] = op(a)[M, K] op(b)[K, N] (+ bias[N] on every row), a and b
// stored with leading dimensions lda and ldb, repeated over pairs of offsets into a and b.
struct Bf16GemmShape {
  int64_t m = 0, n = 0, k = 0;
  bool transpose_a = false, transpose_b = false;
  int64_t lda = 1, ldb = 1;
  bool bias = false;
};

// The kAvx512Bf16 way: oneDNN primitives made once at prepare (never per step). The caller owns
// the bf16 operands (kernels/cpu/gemm_plan.hpp: the engine's scratch, or a weight's shared copy).
// Only with oneDNN (POCK_HAVE_DNNL); create() fails clearly without it.
class DnnlBf16Gemm {
 public:
  // num_threads: the op's (0: every core).
  static Result<std::unique_ptr<DnnlBf16Gemm>> create(const Bf16GemmShape& shape, int32_t num_threads);
  ~DnnlBf16Gemm();
  // y[i] = op(a + a_offsets[i]) op(b + b_offsets[i]) (+ bias), y[i] the i-th [M, N] block of y.
  Status run(const uint16_t* a, const uint16_t* b, const float* bias, float* y, const std::vector<int64_t>& a_offsets,
             const std::vector<int64_t>& b_offsets) const;

 private:
  struct Primitives;
  explicit DnnlBf16Gemm(std::unique_ptr<Primitives> p);
  std::unique_ptr<Primitives> p_;
};

}  // namespace pock::cpu
