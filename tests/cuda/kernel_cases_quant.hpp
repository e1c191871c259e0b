// Written cuda kernel cases of the block_quant family: each 32-value format the repo's quantizer
// writes, under compute f32 and int8 (the int8 forms quantize 32-value blocks of N, hence N a
// multiple of 32).
#pragma once
#include <vector>

#include "tests/cuda/case_operands.hpp"

namespace pock::test {

inline std::vector<DeviceCase> block_quant_cases() {
  std::vector<DeviceCase> cases;
  uint32_t seed = 1000;
  for (BlockFormat format : {BlockFormat::kQ8_0, BlockFormat::kQ4_0, BlockFormat::kQ4_1}) {
    cases.push_back({"GatherQ", {quantized_rows(format, 10, 64, seed), i32s({2, 3}, {0, 9, -1, 4, 4, -10})}, quant_attrs(format, 64)});
    cases.push_back({"GatherQ", {quantized_rows(format, 3, 32, seed + 1), i64s({4}, {2, 0, -3, 1})}, quant_attrs(format, 32)});
    for (const char* compute : {"f32", "int8"}) {
      const Attrs attrs = quant_attrs(format, 64, compute);
      cases.push_back({"LinearQ", {rnd({2, 3, 64}, seed + 2), quantized_rows(format, 48, 64, seed + 3), rnd({48}, seed + 4)}, attrs});
      cases.push_back({"LinearQ", {rnd({5, 64}, seed + 5), quantized_rows(format, 40, 64, seed + 6)}, attrs});
      cases.push_back({"LinearQInputGrad", {rnd({2, 3, 64}, seed + 7), quantized_rows(format, 64, 96, seed + 8)},
                       quant_attrs(format, 96, compute)});
      // The LM head and its loss: -100 rows are ignored; the gradient with respect to x, or not.
      const HostOperand labels = i64s({6}, {3, -100, 0, 95, 17, 50});
      Attrs smoothed = attrs;
      smoothed.set("label_smoothing", 0.1);
      cases.push_back({"LinearQCrossEntropy", {rnd({6, 64}, seed + 9), quantized_rows(format, 96, 64, seed + 10), labels}, smoothed});
      Attrs loss_only = attrs;
      loss_only.set("with_gradient", int64_t{0});
      cases.push_back({"LinearQCrossEntropy", {rnd({2, 3, 64}, seed + 11), quantized_rows(format, 96, 64, seed + 12),
                                               i64s({2, 3}, {1, 2, 3, 4, 5, 95})}, loss_only});
      seed += 13;
    }
  }
  return cases;
}

}  // namespace pock::test
