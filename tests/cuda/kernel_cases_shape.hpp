// Written cuda kernel cases of the shape family (every op at every dtype: cuda registers each
// dtype as its own kernel, one per element width underneath) and of layer_grad_shape (SliceGrad).
#pragma once
#include <vector>

#include "tests/cuda/case_operands.hpp"

namespace pock::test {

inline std::vector<DeviceCase> shape_cases_of(DType dt, uint32_t seed) {
  const auto x = [&](Shape shape) { return random_elements(dt, std::move(shape), seed++); };
  std::vector<DeviceCase> cases;
  cases.push_back({"Reshape", {x({2, 3, 4})}, {{"shape", Ints{4, -1}}}});
  cases.push_back({"Flatten", {x({2, 3, 4})}, {{"axis", int64_t{2}}}});
  cases.push_back({"Squeeze", {x({2, 1, 3, 1})}, {{"axes", Ints{1}}}});
  cases.push_back({"Unsqueeze", {x({2, 3})}, {{"axes", Ints{0, 3}}}});
  cases.push_back({"Copy", {x({5, 7})}, {}});
  cases.push_back({"Transpose", {x({2, 3, 4, 5})}, {{"perm", Ints{0, 2, 3, 1}}}});
  cases.push_back({"Transpose", {x({37, 70})}, {}});  // reversed dims: large enough for tiles
  // Axis 0 forwards by 2, axis 1 backwards by 2 from the last element (ONNX clamping of -8).
  cases.push_back({"Slice", {x({6, 7, 5})}, {{"starts", Ints{1, -1}}, {"ends", Ints{5, -8}}, {"axes", Ints{0, 1}}, {"steps", Ints{2, -2}}}});
  cases.push_back({"Expand", {x({3, 1, 5})}, {{"shape", Ints{2, 3, 4, 5}}}});
  cases.push_back({"Pad", {x({3, 4})}, {{"pads", Ints{1, 0, 2, 3}}, {"value", 2.0}}});
  cases.push_back({"Pad", {x({3, 4})}, {{"pads", Ints{-1, 1, 0, -2}}}});  // negative pads crop
  cases.push_back({"Concat", {x({2, 3, 4}), x({2, 1, 4}), x({2, 5, 4})}, {{"axis", int64_t{1}}}});
  cases.push_back({"Concat", {x({1, 6}), x({3, 6})}, {{"axis", int64_t{0}}}});
  cases.push_back({"Split", {x({4, 9})}, {{"axis", int64_t{-1}}, {"split", Ints{2, 3, 4}}}});
  return cases;
}

inline std::vector<DeviceCase> shape_cases() {
  std::vector<DeviceCase> cases;
  for (int i = 0; i < kNumDTypes; ++i) {
    for (DeviceCase& c : shape_cases_of(static_cast<DType>(i), 200 + 20 * static_cast<uint32_t>(i))) cases.push_back(std::move(c));
  }
  return cases;
}

// SliceGrad scatters dy into zeros at starts + i * steps (the rule resolved the forward clamping).
inline std::vector<DeviceCase> layer_grad_shape_cases() {
  std::vector<DeviceCase> cases;
  cases.push_back({"SliceGrad", {rnd({2, 4, 3}, 500)}, {{"shape", Ints{6, 7, 3}}, {"starts", Ints{1, 6, 0}}, {"steps", Ints{2, -2, 1}}}});
  cases.push_back({"SliceGrad", {rnd({3, 1}, 501)}, {{"shape", Ints{3, 5}}, {"starts", Ints{0, 4}}, {"steps", Ints{1, 1}}}});
  return cases;
}

}  // namespace pock::test
