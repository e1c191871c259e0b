// Written cuda kernel cases of the layers' backward families: layer_grad_conv (the windows of
// conv_cases, with dy of the forward output's shape), layer_grad_norm (with and without gamma, at
// an inner axis) and layer_grad_sequence (GatherGrad with repeated and negative indices,
// DropoutGrad with u8 and bool masks).
#pragma once
#include <string>
#include <vector>

#include "tests/cuda/kernel_cases_layers.hpp"

namespace pock::test {

inline std::vector<DeviceCase> layer_grad_conv_cases() {
  std::vector<DeviceCase> cases;
  // (x, w, dy shapes; the forward's window attributes)
  struct Conv {
    Shape x, w, dy;
    Attrs window;
  };
  const Conv convs[] = {
      {{2, 4, 9, 9}, {6, 4, 3, 3}, {2, 6, 5, 5}, {{"strides", kStride2}, {"pads", kPad1}}},
      {{2, 4, 7, 7}, {6, 2, 3, 3}, {2, 6, 7, 7}, {{"pads", kPad1}, {"groups", int64_t{2}}}},
      {{1, 4, 8, 8}, {4, 1, 3, 3}, {1, 4, 8, 8}, {{"pads", kPad1}, {"groups", int64_t{4}}}},  // depthwise
      {{1, 3, 6, 6}, {4, 3, 3, 3}, {1, 4, 6, 5}, {{"pads", Ints{0, 1, 2, 0}}}},                 // uneven pads
      {{1, 3, 10, 10}, {5, 3, 3, 3}, {1, 5, 6, 6}, {{"dilations", Ints{2, 2}}}},
  };
  uint32_t seed = 900;
  for (const Conv& c : convs) {
    Attrs input = c.window, weight = c.window;
    input.set("input_shape", Ints(c.x.begin(), c.x.end()));
    weight.set("kernel", Ints{c.w[2], c.w[3]});
    cases.push_back({"Conv2dGradInput", {rnd(c.dy, seed), rnd(c.w, seed + 1)}, input});
    cases.push_back({"Conv2dGradWeight", {rnd(c.x, seed + 2), rnd(c.dy, seed + 3)}, weight});
    seed += 4;
  }
  Attrs leading{{"kernel", Ints{3, 3}}, {"strides", kStride2}, {"pads", kPad1}, {"channels", int64_t{4}}};
  cases.push_back({"Conv2dGradWeight", {rnd({2, 4, 9, 9}, 930), rnd({2, 6, 5, 5}, 931)}, leading});  // 4 of 6 channels
  cases.push_back({"Conv2dGradBias", {rnd({2, 6, 5, 5}, 932)}, {}});
  cases.push_back({"Conv2dGradBias", {rnd({2, 6, 5, 5}, 933)}, {{"channels", int64_t{4}}}});
  const Attrs pool = padded_pool(), ceil = ceil_pool();
  cases.push_back({"MaxPool2dGrad", {rnd({2, 3, 5, 5}, 934), rnd({2, 3, 9, 9}, 935)}, pool});
  cases.push_back({"MaxPool2dGrad", {rnd({1, 2, 4, 4}, 936), rnd({1, 2, 8, 8}, 937)}, ceil});
  for (int64_t include_pad : {0, 1}) {
    Attrs avg = pool;
    avg.set("input_shape", Ints{2, 3, 9, 9});
    avg.set("count_include_pad", include_pad);
    cases.push_back({"AvgPool2dGrad", {rnd({2, 3, 5, 5}, 938)}, avg});
  }
  Attrs avg_ceil = ceil;
  avg_ceil.set("input_shape", Ints{1, 2, 8, 8});
  cases.push_back({"AvgPool2dGrad", {rnd({1, 2, 4, 4}, 939)}, avg_ceil});
  return cases;
}

inline std::vector<DeviceCase> layer_grad_norm_cases() {
  std::vector<DeviceCase> cases;
  // Batch norm: dy, x [N, C, ...], the saved mean and inverse std [C], gamma [C]?.
  const Shape image{2, 3, 4, 5};
  cases.push_back({"BatchNormTrainGrad", {rnd(image, 950), rnd(image, 951), rnd({3}, 952), positive({3}, 953), rnd({3}, 954)}, {}});
  cases.push_back({"BatchNormTrainGrad", {rnd({8, 3}, 955), rnd({8, 3}, 956), rnd({3}, 957), positive({3}, 958)}, {}});
  cases.push_back({"BatchNormParamGrad", {rnd(image, 959), rnd(image, 960), rnd({3}, 961), positive({3}, 962)}, {}});
  // Row norms: dy, x, the saved statistics per row, gamma over the normalized dims?.
  cases.push_back({"LayerNormGrad", {rnd({4, 8}, 963), rnd({4, 8}, 964), rnd({4}, 965), positive({4}, 966), rnd({8}, 967)}, {}});
  cases.push_back({"LayerNormGrad", {rnd({3, 4, 5}, 968), rnd({3, 4, 5}, 969), rnd({3}, 970), positive({3}, 971)}, {{"axis", int64_t{1}}}});
  cases.push_back({"LayerNormGrad", {rnd({300, 16}, 972), rnd({300, 16}, 973), rnd({300}, 974), positive({300}, 975), rnd({16}, 976)}, {}});  // many rows per column sum
  cases.push_back({"RMSNormGrad", {rnd({4, 10}, 977), rnd({4, 10}, 978), positive({4}, 979), rnd({10}, 980)}, {}});
  cases.push_back({"RMSNormGrad", {rnd({3, 4, 5}, 981), rnd({3, 4, 5}, 982), positive({3}, 983)}, {{"axis", int64_t{1}}}});
  cases.push_back({"SoftmaxGrad", {rnd({3, 5, 7}, 984), rnd_in({3, 5, 7}, 985, 0.0f, 1.0f)}, {{"axis", int64_t{1}}}});
  cases.push_back({"LogSoftmaxGrad", {rnd({3, 5, 7}, 986), rnd_in({3, 5, 7}, 987, -3.0f, 0.0f)}, {{"axis", int64_t{0}}}});
  return cases;
}

inline std::vector<DeviceCase> layer_grad_sequence_cases() {
  std::vector<DeviceCase> cases;
  // Repeated rows accumulate; a negative index counts from the end.
  cases.push_back({"GatherGrad", {rnd({2, 3, 3}, 990), i64s({2, 3}, {0, 4, -1, 0, 2, 4})}, {{"shape", Ints{5, 3}}}});
  cases.push_back({"GatherGrad", {rnd({2, 4, 3}, 991), i32s({4}, {5, 0, 5, -6})}, {{"shape", Ints{2, 6, 3}}, {"axis", int64_t{1}}}});
  cases.push_back({"DropoutGrad", {rnd({4, 33}, 992), random_mask({4, 33}, 993)}, {{"ratio", 0.3}}});
  cases.push_back({"DropoutGrad", {rnd({5, 5}, 994), random_mask({5, 5}, 995, DType::kBool)}, {}});
  return cases;
}

}  // namespace pock::test
