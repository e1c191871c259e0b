// Recipe precision "bf16": one bf16 copy of each activation that bf16 GEMMs read, shared by all of
// them. A LayerNorm output read by the q, k and v projections and by their three weight gradients
// is converted once instead of six times, and a dy read by LinearInputGrad and LinearWeightGrad
// once instead of twice; an activation saved for the backward only as a GEMM operand is then
// saved in bf16, half its f32 bytes, and its f32 original dies with its forward readers.
// The copy is an explicit Cast (to "bf16"), so `pockc inspect` shows it and the memory planner
// owns its lifetime; the GEMMs read it as their operand (compute "bf16" takes f32 or bf16
// operands, src/ir/ops/schema_helpers.hpp gemm_output_dtype). The values are those the GEMMs
// rounded before (round to nearest even, kernels/bf16_round.h): only how often changes.
// Weights are left to the GEMMs' own copies (kernels/cpu/bf16_weight_copy.hpp).
#pragma once
#include "compiler/program.hpp"
#include "pock/compiler/compiler.hpp"

namespace pock {

// Whether the copies are made: for the cpu backend (requested, or the heuristic's choice), whose
// GEMMs take bf16 operands. Another requested backend keeps f32 operands that its GEMMs round
// themselves (cuda's cuBLAS GEMMs run compute "bf16" on f32 storage and take no mixed dtypes; a
// bf16 operand would send the GEMM back to the host).
bool bf16_operands_apply(const CompileOptions& options);

// Runs after the GEMMs are marked (lowering/bf16_compute.hpp); returns the Casts it inserted.
Result<int> share_bf16_operands(Graph& g, FunctionDef& fn);

}  // namespace pock
