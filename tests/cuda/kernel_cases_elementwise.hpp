// Written cuda kernel cases of the element-wise families: elementwise (attributes, broadcasting,
// Cast, Identity, Where), reduce (axes, keepdims), activation_mask and elementwise_grad.
#pragma once
#include <cstring>
#include <string>
#include <vector>

#include "tests/cuda/case_operands.hpp"

namespace pock::test {

// The dtypes cuda registers Cast and Identity for.
inline constexpr DType kCastDTypes[] = {DType::kF32, DType::kI32, DType::kI64, DType::kI8, DType::kU8, DType::kBool};

inline std::vector<DeviceCase> elementwise_cases() {
  std::vector<DeviceCase> cases;
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Maximum", "Minimum"}) {
    cases.push_back({op, {rnd_in({3, 1, 7}, 600, 0.1f, 2.0f), rnd({5, 1}, 601)}, {}});  // both sides broadcast
  }
  cases.push_back({"Add", {rnd({0, 4}, 602), rnd({4}, 603)}, {}});  // nothing to launch
  cases.push_back({"Clip", {rnd({4, 9}, 604)}, {{"min", -0.3}, {"max", 0.5}}});
  cases.push_back({"Clip", {rnd({4, 9}, 605)}, {{"max", 0.2}}});
  cases.push_back({"LeakyRelu", {rnd({4, 9}, 606)}, {{"alpha", 0.2}}});
  cases.push_back({"ScaleShift", {rnd({4, 9}, 607)}, {{"alpha", 2.5}, {"beta", -0.5}}});
  cases.push_back({"Gelu", {rnd({4, 9}, 608)}, {{"approximate", std::string("tanh")}}});
  uint32_t seed = 610;
  for (DType from : kCastDTypes) {
    for (int i = 0; i < kNumDTypes; ++i) {
      const DType to = static_cast<DType>(i);
      if (to == DType::kF16 || to == DType::kBF16) continue;  // cuda casts no half dtype
      const Attrs attrs{{"to", std::string(dtype_name(to))}};
      cases.push_back({"Cast", {small_values(from, {3, 7}, seed++)}, attrs});
      if (from == DType::kF32 || from == DType::kI64) cases.push_back({"Cast", {cast_edges(from)}, attrs});
    }
    cases.push_back({"Identity", {random_elements(from, {3, 7}, seed++)}, {}});
  }
  // Where's branches move without being read: a dtype of each width both cuda and ref carry.
  for (DType branch : {DType::kF32, DType::kI64, DType::kU8}) {
    cases.push_back({"Where", {random_elements(DType::kBool, {3, 1, 5}, seed), random_elements(branch, {3, 4, 5}, seed + 1),
                               random_elements(branch, {4, 1}, seed + 2)}, {}});
    seed += 3;
  }
  return cases;
}

inline std::vector<DeviceCase> reduce_cases() {
  std::vector<DeviceCase> cases;
  cases.push_back({"ReduceSum", {rnd({3, 5, 7}, 650)}, {{"axes", Ints{1}}, {"keepdims", int64_t{0}}}});
  cases.push_back({"ReduceSum", {rnd({2, 3000}, 651)}, {{"axes", Ints{-1}}}});  // long rows
  cases.push_back({"ReduceMean", {rnd({3, 5, 7}, 652)}, {{"axes", Ints{0, 2}}}});
  cases.push_back({"ReduceMean", {rnd({3000, 2}, 653)}, {{"axes", Ints{0}}, {"keepdims", int64_t{0}}}});  // long columns
  cases.push_back({"ReduceMax", {rnd({3, 5, 7}, 654)}, {{"axes", Ints{-1}}}});
  cases.push_back({"ReduceMax", {rnd({4, 6, 5}, 655)}, {{"axes", Ints{1}}, {"keepdims", int64_t{0}}}});
  return cases;
}

// ClipMask bounds (strict and inclusive, on values that sit on them) and MaskGrad with u8 and bool
// masks, on sizes that are not a multiple of the four elements a thread packs.
inline std::vector<DeviceCase> activation_mask_cases() {
  std::vector<DeviceCase> cases;
  const HostOperand on_bounds = operand_of(DType::kF32, {7}, std::vector<float>{-1.0f, -0.5f, 0.0f, 0.25f, 0.5f, 6.0f, 7.0f});
  cases.push_back({"ClipMask", {rnd({5, 7}, 660)}, {{"min", -0.2}, {"max", 0.4}}});
  cases.push_back({"ClipMask", {on_bounds}, {{"min", -0.5}, {"max", 6.0}}});
  cases.push_back({"ClipMask", {on_bounds}, {{"min", -0.5}, {"max", 6.0}, {"inclusive", int64_t{1}}}});
  cases.push_back({"MaskGrad", {rnd({37}, 661), random_mask({37}, 662)}, {}});
  cases.push_back({"MaskGrad", {rnd({4, 8}, 663), random_mask({4, 8}, 664, DType::kBool)}, {}});
  return cases;
}

inline std::vector<DeviceCase> elementwise_grad_cases() {
  std::vector<DeviceCase> cases;
  cases.push_back({"LeakyReluGrad", {rnd({4, 9}, 670), rnd({4, 9}, 671)}, {{"alpha", 0.2}}});
  cases.push_back({"ClipGrad", {rnd({4, 9}, 672), rnd({4, 9}, 673)}, {{"min", -0.3}, {"max", 0.5}}});
  cases.push_back({"GeluGrad", {rnd({4, 9}, 674), rnd({4, 9}, 675)}, {{"approximate", std::string("tanh")}}});
  // a and b broadcast to dy's shape; b copies a's first row, so the first elements tie.
  HostOperand a = rnd({3, 4, 5}, 676), b = rnd({4, 5}, 677);
  std::memcpy(b.bytes.data(), a.bytes.data(), 5 * sizeof(float));
  cases.push_back({"MaximumGrad", {rnd({3, 4, 5}, 678), a, b}, {}});
  cases.push_back({"MinimumGrad", {rnd({3, 4, 5}, 679), a, b}, {}});
  cases.push_back({"PowGrad", {rnd({3, 4, 5}, 680), rnd_in({3, 4, 5}, 681, 0.2f, 2.0f), rnd({4, 1}, 682)}, {}});
  cases.push_back({"SumToShape", {rnd({3, 4, 5}, 683)}, {{"shape", Ints{4, 1}}}});
  cases.push_back({"SumToShape", {rnd({3, 4, 5}, 684)}, {{"shape", Ints{3, 1, 5}}}});
  cases.push_back({"ReduceSumGrad", {rnd({3, 1, 5}, 685)}, {{"shape", Ints{3, 4, 5}}, {"axes", Ints{1}}, {"scale", 0.25}}});
  cases.push_back({"ReduceSumGrad", {rnd({5}, 686)}, {{"shape", Ints{3, 4, 5}}, {"axes", Ints{0, 1}}, {"keepdims", int64_t{0}}}});
  const RowsWithMax rows = rows_with_max(4, 6, 687);
  cases.push_back({"ReduceMaxGrad", {rnd({4, 1}, 688), rows.x, rows.max}, {{"axes", Ints{1}}}});
  return cases;
}

}  // namespace pock::test
