// Written cuda kernel cases of the layer families: conv (Conv2d through cuDNN with strides, pads
// cuDNN takes and pads it cannot, dilations, groups, depthwise, NHWC, fused activations; the
// pools), norm (BatchNorm inference and training, LayerNorm, RMSNorm, softmax over any axis) and
// sequence (Gather at every dtype, Rope, CausalMask, CachedAttention at each head-dim tier of its
// kernel, DropoutTrain with its seed).
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "tests/cuda/case_operands.hpp"

namespace pock::test {

// The windows the conv cases and their gradients (kernel_cases_layer_grads.hpp) share.
inline const Ints kPad1{1, 1, 1, 1}, kStride2{2, 2};
// A 3x3 pool window of stride 2: padded by 1, or unpadded and rounding its extent up.
inline Attrs padded_pool() { return {{"kernel", Ints{3, 3}}, {"strides", kStride2}, {"pads", kPad1}}; }
inline Attrs ceil_pool() { return {{"kernel", Ints{3, 3}}, {"strides", kStride2}, {"ceil_mode", int64_t{1}}}; }

inline std::vector<DeviceCase> conv_cases() {
  std::vector<DeviceCase> cases;
  cases.push_back({"Conv2d", {rnd({2, 4, 9, 9}, 700), rnd({6, 4, 3, 3}, 701), rnd({6}, 702)}, {{"strides", kStride2}, {"pads", kPad1}}});
  cases.push_back({"Conv2d", {rnd({2, 4, 7, 7}, 703), rnd({6, 2, 3, 3}, 704), rnd({6}, 705)}, {{"pads", kPad1}, {"groups", int64_t{2}}}});
  cases.push_back({"Conv2d", {rnd({1, 4, 8, 8}, 706), rnd({4, 1, 3, 3}, 707)},  // depthwise
                   {{"pads", kPad1}, {"groups", int64_t{4}}, {"activation", std::string("relu")}}});
  cases.push_back({"Conv2d", {rnd({1, 4, 8, 8}, 708), rnd({8, 1, 3, 3}, 709), rnd({8}, 710)},  // depthwise, 2 per channel
                   {{"strides", kStride2}, {"pads", kPad1}, {"groups", int64_t{4}}}});
  cases.push_back({"Conv2d", {rnd({1, 3, 10, 10}, 711), rnd({5, 3, 3, 3}, 712)}, {{"dilations", Ints{2, 2}}}});
  // Uneven pads: cuDNN takes one pad per axis, so x goes through a zero-padded copy.
  cases.push_back({"Conv2d", {rnd({1, 3, 6, 6}, 713), rnd({4, 3, 3, 3}, 714), rnd({4}, 715)},
                   {{"pads", Ints{0, 1, 2, 0}}, {"activation", std::string("relu6")}}});
  cases.push_back({"Conv2d", {rnd({2, 7, 7, 4}, 716), rnd({6, 4, 3, 3}, 717), rnd({6}, 718)},  // x and y [N, H, W, C]
                   {{"pads", kPad1}, {"layout", std::string("NHWC")}}});
  cases.push_back({"Conv2d", {rnd({2, 8, 5, 5}, 719), rnd({16, 8, 1, 1}, 720)}, {}});
  const Attrs pool = padded_pool(), ceil = ceil_pool();
  Attrs include_pad = pool;
  include_pad.set("count_include_pad", int64_t{1});
  cases.push_back({"MaxPool2d", {rnd({2, 3, 9, 9}, 721)}, pool});
  cases.push_back({"MaxPool2d", {rnd({1, 2, 8, 8}, 722)}, ceil});
  cases.push_back({"MaxPool2d", {rnd({1, 2, 6, 6}, 723)}, {{"kernel", Ints{2, 2}}}});  // strides default to the kernel
  cases.push_back({"AvgPool2d", {rnd({2, 3, 9, 9}, 724)}, pool});
  cases.push_back({"AvgPool2d", {rnd({2, 3, 9, 9}, 725)}, include_pad});
  cases.push_back({"AvgPool2d", {rnd({1, 2, 8, 8}, 726)}, ceil});
  cases.push_back({"GlobalAvgPool", {rnd({2, 3, 5, 7}, 727)}, {}});
  cases.push_back({"GlobalAvgPool", {rnd({1, 2, 40, 40}, 728)}, {}});  // planes larger than a warp takes
  return cases;
}

inline std::vector<DeviceCase> norm_cases() {
  std::vector<DeviceCase> cases;
  const auto channels = [](uint32_t seed) {
    return std::vector<HostOperand>{rnd({3}, seed), rnd({3}, seed + 1), rnd({3}, seed + 2), positive({3}, seed + 3)};
  };
  for (Shape x : {Shape{2, 3, 4, 5}, Shape{8, 3}}) {
    std::vector<HostOperand> in{rnd(x, 730)};
    for (HostOperand& c : channels(731)) in.push_back(c);
    cases.push_back({"BatchNorm", in, {{"eps", 1e-3}}});
    cases.push_back({"BatchNormTrain", in, {{"momentum", 0.2}}});  // running mean and var move in place
  }
  cases.push_back({"LayerNorm", {rnd({4, 6, 8}, 740), rnd({8}, 741), rnd({8}, 742)}, {}});
  cases.push_back({"LayerNorm", {rnd({3, 4, 5}, 743), rnd({4, 5}, 744)}, {{"axis", int64_t{1}}, {"eps", 1e-3}}});
  cases.push_back({"LayerNorm", {rnd({2, 3000}, 745)}, {}});  // rows longer than a block
  cases.push_back({"RMSNorm", {rnd({4, 10}, 746), rnd({10}, 747)}, {}});
  cases.push_back({"RMSNorm", {rnd({3, 4, 5}, 748)}, {{"axis", int64_t{1}}}});
  cases.push_back({"Softmax", {rnd({3, 5, 7}, 749)}, {{"axis", int64_t{1}}}});
  cases.push_back({"Softmax", {rnd_in({2, 3000}, 750, -8.0f, 8.0f)}, {}});
  cases.push_back({"LogSoftmax", {rnd({3, 5, 7}, 751)}, {{"axis", int64_t{0}}}});
  return cases;
}

// CachedAttention(q [B, H, S, D], k, v [B, KV, S, D], key and value caches [B, KV, T, D], position):
// the new rows land in the caches (in place) at position..position+S-1.
inline DeviceCase attention_case(int64_t heads, int64_t kv_heads, int64_t seq, int64_t dim, int64_t capacity,
                                 int64_t at, uint32_t seed) {
  const Shape kv{1, kv_heads, seq, dim}, cache{1, kv_heads, capacity, dim};
  return {"CachedAttention",
          {rnd({1, heads, seq, dim}, seed), rnd(kv, seed + 1), rnd(kv, seed + 2), rnd(cache, seed + 3), rnd(cache, seed + 4),
           position(at)},
          {{"scale", 1.0 / std::sqrt(static_cast<double>(dim))}}};
}

inline std::vector<DeviceCase> sequence_cases() {
  std::vector<DeviceCase> cases;
  for (int i = 0; i < kNumDTypes; ++i) {
    const DType dt = static_cast<DType>(i);
    const uint32_t seed = 760 + 2 * static_cast<uint32_t>(i);
    cases.push_back({"Gather", {random_elements(dt, {5, 4, 3}, seed), i64s({2, 3}, {0, -1, 3, 2, -4, 1})}, {{"axis", int64_t{1}}}});
    cases.push_back({"Gather", {random_elements(dt, {5, 2}, seed + 1), i32s({4}, {4, 0, -5, 2})}, {}});
  }
  cases.push_back({"Rope", {rnd({2, 3, 5, 8}, 790)}, {}});
  cases.push_back({"Rope", {rnd({2, 5, 8}, 791), position(4)}, {{"interleaved", int64_t{1}}, {"theta", 500.0}}});
  cases.push_back({"Rope", {rnd({3, 6}, 792), position(2)}, {{"inverse", int64_t{1}}}});
  cases.push_back({"CausalMask", {rnd({2, 4, 6}, 793)}, {}});
  cases.push_back({"CausalMask", {rnd({3, 3}, 794)}, {{"value", -1e4}}});
  cases.push_back(attention_case(4, 2, 2, 16, 8, 3, 795));    // grouped query heads
  cases.push_back(attention_case(2, 1, 1, 200, 4, 2, 800));   // the middle head-dim tier
  cases.push_back(attention_case(2, 2, 3, 320, 3, 0, 805));   // the top tier; the cache filled exactly
  cases.push_back({"DropoutTrain", {rnd({4, 33}, 810), position(7)}, {{"ratio", 0.3}, {"seed", int64_t{1234}}}});
  cases.push_back({"DropoutTrain", {rnd({5, 5}, 811), position(0)}, {}});
  return cases;
}

}  // namespace pock::test
