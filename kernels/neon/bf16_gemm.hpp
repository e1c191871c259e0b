// GEMMs with compute "bf16" (recipe precision "bf16": MatMul, Linear, LinearInputGrad,
// LinearWeightGrad) on the neon backend, with ARMv8.6-A's BF16 extension: BFMMLA multiplies a
// 2x4 block of bf16 values by the transpose of another into a 2x2 block of f32 sums.
//
// Values, against kernels/ref (the definition, docs/ops.md "bf16 compute"): each f32 operand is
// rounded to the nearest bf16 with the portable rounding of kernels/bf16_round.h, done in integer
// lanes, so the operands are ref's bit for bit (also under a run's flush-to-zero, which a
// hardware conversion such as BFCVT would honour); an operand that is a bf16 tensor is read as it
// is; the bias is added unrounded, then the fused activation. BFMMLA ignores FPCR: by the
// architecture it reads denormal bf16 operands (0 < |v| < 2^-126) as 0, which is what every
// kernel reads during a run anyway, ref included (the engine flushes denormals to zero,
// runtime/denormals.hpp), so the results agree there too. What differs from ref is the sums:
// f32 with round-to-odd steps, where ref's are double.
//
// Where the CPU does not report BF16 (bf16_gemm_available) the ops go to another backend: the cpu
// backend's f32 rounding where the build has OpenBLAS, ref otherwise. Only the micro-kernel is
// compiled for armv8.6-a+bf16 (a function target attribute); the rest of the build keeps the base
// ARMv8-A ISA. The cpu backend's twin is kernels/cpu/bf16_gemm.hpp (oneDNN on AVX512-BF16).
#pragma once
#include "runtime/kernel.hpp"

namespace pock::neon {

// BF16 reported by the kernel (Linux: getauxval(AT_HWCAP2) & HWCAP2_BF16) and a compiler able to
// emit BFMMLA; POCK_BF16_ISA=fp32 turns it off, to compare the two ways on one machine as on the
// cpu backend. Asked when ops are bound and prepared, never during a run.
bool bf16_gemm_available();

// Whether the neon kernel takes `op` (one of the four GEMMs, shapes checked by the schema):
// compute "bf16" on a CPU with BF16, operands f32 or bf16, an f32 output and an f32 bias if any.
bool bf16_gemm_accepts(const pock_op_desc& op);

// The kernel of any of the four ops, keyed by its first operand's dtype (bf16 when that is the
// compiler's bf16 copy of an activation). Operands are packed each run into the engine's scratch
// (a constant b once, at prepare, shared by the ops over it); tiles split over the cpu backend's
// thread pool.
KernelDef bf16_gemm_kernel(const char* op, DType first_operand);

}  // namespace pock::neon
