// The CUDA sequence family's element logic (kernels/cuda/sequence_logic.hpp) on the host against
// the reference kernels: Gather and its gradient's targets, Rope, CausalMask, and DropoutTrain's
// mask bit for bit (the contract every backend shares).
#include <catch2/catch.hpp>

#include <cmath>
#include <algorithm>
#include <cstring>
#include <tuple>
#include <utility>

#include "ir/splitmix64.hpp"
#include "kernels/cuda/sequence_logic.hpp"
#include "kernels/params/sequence.hpp"
#include "ref_case.hpp"

using namespace pock;
using namespace pock::test;

namespace {

template <typename T>
CaseTensor values(DType dtype, Shape shape, const std::vector<T>& v) {
  CaseTensor t = tensor(dtype, std::move(shape));
  REQUIRE(t.bytes.size() == v.size() * sizeof(T));
  std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
  return t;
}

template <typename Word, typename Index>
void gather_on_host(RefCase& c, const cuda::GatherLayout& l) {
  each_element(cuda::GatherElement<Word, Index>{c.inputs[0].data<Word>(), c.inputs[1].data<Index>(),
                                                c.outputs[0].data<Word>(), l},
               c.outputs[0].count());
}

}  // namespace

TEST_CASE("cuda Gather logic matches ref for every word size, index type and axis", "[cuda_logic][sequence]") {
  struct Variant {
    DType data_dtype;
    Shape data_shape;
    int axis;
    bool i32;
  };
  const std::vector<int64_t> idx = {0, 4, -1, 2, 2, -5};
  for (const Variant& v : {Variant{DType::kF32, {5, 7, 3}, 1, false}, Variant{DType::kF32, {5, 7, 3}, 0, true},
                           Variant{DType::kU8, {5, 9}, 0, false}, Variant{DType::kI64, {2, 5}, 1, true},
                           Variant{DType::kF16, {3, 5, 2}, 1, false}}) {
    RefCase expected;
    expected.op = "Gather";
    CaseTensor data = tensor(v.data_dtype, v.data_shape);
    for (size_t i = 0; i < data.bytes.size(); ++i) data.bytes[i] = static_cast<uint8_t>(i * 37 + 11);
    expected.inputs.push_back(data);
    expected.inputs.push_back(v.i32 ? values(DType::kI32, {2, 3}, std::vector<int32_t>(idx.begin(), idx.end()))
                                    : values(DType::kI64, {2, 3}, idx));
    Shape out_shape(v.data_shape.begin(), v.data_shape.begin() + v.axis);
    out_shape.insert(out_shape.end(), {2, 3});
    out_shape.insert(out_shape.end(), v.data_shape.begin() + v.axis + 1, v.data_shape.end());
    expected.outputs.push_back(tensor(v.data_dtype, out_shape));
    expected.set_int("axis", v.axis - static_cast<int>(v.data_shape.size()) * (v.i32 ? 1 : 0));  // negative axes too
    RefCase actual = expected;
    REQUIRE(run_ref(expected).is_ok());
    const cuda::GatherLayout l = cuda::gather_layout(v.data_shape.data(), static_cast<int>(v.data_shape.size()),
                                                     parsed<params::SequenceParams>(actual).axis, 6);
    const size_t word = dtype_size(v.data_dtype);
    if (word == 1) v.i32 ? gather_on_host<uint8_t, int32_t>(actual, l) : gather_on_host<uint8_t, int64_t>(actual, l);
    if (word == 2) v.i32 ? gather_on_host<uint16_t, int32_t>(actual, l) : gather_on_host<uint16_t, int64_t>(actual, l);
    if (word == 4) v.i32 ? gather_on_host<uint32_t, int32_t>(actual, l) : gather_on_host<uint32_t, int64_t>(actual, l);
    if (word == 8) v.i32 ? gather_on_host<uint64_t, int32_t>(actual, l) : gather_on_host<uint64_t, int64_t>(actual, l);
    INFO("dtype " << dtype_name(v.data_dtype) << " axis " << v.axis);
    CHECK(actual.outputs[0].bytes == expected.outputs[0].bytes);
  }
}

TEST_CASE("cuda Gather logic marks an index out of range, which ref refuses", "[cuda_logic][sequence]") {
  const cuda::GatherLayout l{1, 4, 3, 2};
  const int64_t indices[] = {3, 4, -5};
  CHECK(cuda::gather_source(l, indices, 0) == 6);
  CHECK(cuda::gather_source(l, indices, 2) == -1);
  CHECK(cuda::gather_source(l, indices, 5) == -1);
}

TEST_CASE("cuda GatherGrad and DropoutGrad logic match ref", "[cuda_logic][layer_grad_sequence]") {
  // Repeated and negative indices: the same rows receive several additions.
  const Shape data_shape{6, 7, 4};
  for (int axis : {1, 0}) {
    RefCase expected;
    expected.op = "GatherGrad";
    const std::vector<int64_t> idx = {1, -1, 1, 0, 5, 1};  // row 5 of 6 twice (as -1), row 1 three times
    Shape dy_shape = data_shape;
    dy_shape[axis] = 6;
    expected.inputs = {random_f32(dy_shape, 600 + axis), values(DType::kI64, {6}, idx)};
    expected.outputs.push_back(random_f32(data_shape, 610));  // garbage the kernel must clear
    expected.set_int("axis", axis);
    RefCase actual = expected;
    REQUIRE(run_ref(expected).is_ok());
    const cuda::GatherLayout l = cuda::gather_layout(data_shape.data(), 3, axis, 6);
    // The device's steps: keys, CUB's stable radix sort (std::stable_sort here), the runs.
    std::vector<uint32_t> rows(6);
    std::vector<int32_t> positions(6);
    each_element(cuda::GatherGradKeys<int64_t>{actual.inputs[1].data<int64_t>(), l.extent, rows.data(), positions.data()}, 6);
    std::vector<std::pair<uint32_t, int32_t>> pairs;
    for (size_t i = 0; i < rows.size(); ++i) pairs.emplace_back(rows[i], positions[i]);
    std::stable_sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < pairs.size(); ++i) std::tie(rows[i], positions[i]) = pairs[i];
    float* dx = actual.outputs[0].f32();
    std::fill(dx, dx + actual.outputs[0].count(), 0.0f);  // the kernel's memset
    each_element(cuda::GatherGradRuns{rows.data(), positions.data(), actual.inputs[0].f32(), dx, l}, l.outer * 6 * l.inner);
    INFO("axis " << axis);
    CHECK(actual.outputs[0].bytes == expected.outputs[0].bytes);  // ref's order of additions: bit for bit
  }

  RefCase expected;
  expected.op = "DropoutGrad";
  CaseTensor mask = tensor(DType::kU8, {257});
  for (int64_t i = 0; i < mask.count(); ++i) mask.data<uint8_t>()[i] = (i * 7) % 3 != 0;
  expected.inputs = {random_f32({257}, 620), mask};
  expected.outputs.push_back(tensor(DType::kF32, {257}));
  expected.set_float("ratio", 0.3);
  RefCase actual = expected;
  REQUIRE(run_ref(expected).is_ok());
  const params::SequenceParams p = parsed<params::SequenceParams>(actual);
  each_element(cuda::DropoutGradElement{actual.inputs[0].f32(), actual.inputs[1].data<uint8_t>(),
                                        actual.outputs[0].f32(), 1.0 / (1.0 - p.ratio)},
               257);
  CHECK(actual.outputs[0].bytes == expected.outputs[0].bytes);
}

TEST_CASE("cuda Rope logic matches ref, far positions included", "[cuda_logic][sequence]") {
  uint32_t seed = 700;
  for (int variant = 0; variant < 8; ++variant) {
    const bool interleaved = variant & 1, inverse = variant & 2, positioned = variant & 4;
    const Shape shape{2, 3, 5, 16};
    RefCase expected;
    expected.op = "Rope";
    expected.inputs.push_back(random_f32(shape, ++seed));
    if (positioned) expected.inputs.push_back(values(DType::kI64, {1}, std::vector<int64_t>{5000 + variant}));
    expected.outputs.push_back(tensor(DType::kF32, shape));
    expected.set_int("interleaved", interleaved);
    expected.set_int("inverse", inverse);
    if (variant % 3 == 0) expected.set_float("theta", 500000.0);
    RefCase actual = expected;
    REQUIRE(run_ref(expected).is_ok());
    const params::SequenceParams p = parsed<params::SequenceParams>(actual);
    each_element(cuda::RopePair{actual.inputs[0].f32(), actual.outputs[0].f32(),
                                positioned ? actual.inputs[1].data<int64_t>() : nullptr, shape[2], shape[3],
                                std::log(p.theta), p.interleaved, p.inverse ? -1.0f : 1.0f},
                 numel(shape) / 2);
    INFO("interleaved " << interleaved << " inverse " << inverse << " positioned " << positioned);
    expect_close(actual.outputs[0], expected.outputs[0], "y", 1e-5f, 2e-6f);
  }
}

TEST_CASE("cuda CausalMask logic matches ref with a cache offset", "[cuda_logic][sequence]") {
  for (const Shape& shape : {Shape{2, 3, 4, 4}, Shape{3, 5, 9}}) {
    RefCase expected;
    expected.op = "CausalMask";
    expected.inputs.push_back(random_f32(shape, 800));
    expected.outputs.push_back(tensor(DType::kF32, shape));
    if (shape.size() == 3) expected.set_float("value", -1e4);
    RefCase actual = expected;
    REQUIRE(run_ref(expected).is_ok());
    const params::SequenceParams p = parsed<params::SequenceParams>(actual);
    each_element(cuda::CausalMaskElement{actual.inputs[0].f32(), actual.outputs[0].f32(), shape[shape.size() - 2],
                                         shape.back(), static_cast<float>(p.value)},
                 numel(shape));
    CHECK(actual.outputs[0].bytes == expected.outputs[0].bytes);
  }
}

TEST_CASE("cuda DropoutTrain logic reproduces ref's mask and values bit for bit", "[cuda_logic][sequence]") {
  for (uint64_t x : {0ull, 1ull, 0x123456789abcdefull, ~0ull}) CHECK(cuda::splitmix64_hd(x) == splitmix64(x));
  for (const double ratio : {0.1, 0.5, 0.9}) {
    for (const int64_t step : {int64_t{0}, int64_t{7}, int64_t{1} << 40}) {
      RefCase expected;
      expected.op = "DropoutTrain";
      expected.inputs = {random_f32({3, 1001}, 900), values(DType::kI64, {1}, std::vector<int64_t>{step})};
      expected.inputs[0].f32()[5] = NAN;
      expected.outputs = {tensor(DType::kF32, {3, 1001}), tensor(DType::kU8, {3, 1001})};
      expected.set_float("ratio", ratio);
      expected.set_int("seed", 1234);
      RefCase actual = expected;
      REQUIRE(run_ref(expected).is_ok());
      const params::SequenceParams p = parsed<params::SequenceParams>(actual);
      each_element(cuda::DropoutTrainElement{actual.inputs[0].f32(), actual.inputs[1].data<int64_t>(),
                                             actual.outputs[0].f32(), actual.outputs[1].data<uint8_t>(),
                                             cuda::splitmix64_hd(p.seed), static_cast<uint64_t>(p.ratio * 16777216.0),
                                             1.0 / (1.0 - p.ratio)},
                   3 * 1001);
      INFO("ratio " << ratio << " step " << step);
      CHECK(actual.outputs[1].bytes == expected.outputs[1].bytes);
      CHECK(actual.outputs[0].bytes == expected.outputs[0].bytes);
    }
  }
}

TEST_CASE("cuda CachedAttention logic (cache write, online softmax shares merged) matches ref",
          "[cuda_logic][sequence]") {
  constexpr int kHostPerLane = 64;  // a SoloTeam owns every value column
  uint32_t seed = 1000;
  for (const int64_t dim : {int64_t{8}, int64_t{40}}) {
    for (const int64_t position : {int64_t{0}, int64_t{3}}) {
      const cuda::AttentionShape a{2, 4, 2, 3, 8, dim};
      const Shape q_shape{a.batch, a.heads, a.seq, dim}, kv_shape{a.batch, a.kv_heads, a.seq, dim},
          cache_shape{a.batch, a.kv_heads, a.capacity, dim};
      RefCase expected;
      expected.op = "CachedAttention";
      expected.inputs = {random_f32(q_shape, ++seed, -2.0f, 2.0f), random_f32(kv_shape, ++seed),
                         random_f32(kv_shape, ++seed), random_f32(cache_shape, ++seed),
                         random_f32(cache_shape, ++seed), values(DType::kI64, {1}, std::vector<int64_t>{position})};
      expected.outputs.push_back(tensor(DType::kF32, q_shape));
      expected.set_float("scale", 0.35);
      RefCase actual = expected;
      REQUIRE(run_ref(expected).is_ok());
      std::vector<CaseTensor>& in = actual.inputs;
      const int64_t* p = in[5].data<int64_t>();
      each_element(cuda::CacheWriteElement{in[1].f32(), in[2].f32(), in[3].f32(), in[4].f32(), p, a}, in[1].count());
      const float scale = static_cast<float>(parsed<params::SequenceParams>(actual).scale);
      // Three shares over interleaved keys, as three warps of a block take them, then merged.
      constexpr int kShares = 3;
      for (int64_t row = 0; row < a.batch * a.heads * a.seq; ++row) {
        const cuda::AttentionRows r = cuda::attention_rows(a, in[3].f32(), in[4].f32(), *p, row);
        cuda::AttentionShare<kHostPerLane> shares[kShares];
        for (int w = 0; w < kShares; ++w) {
          cuda::attend(cuda::SoloTeam{}, in[0].f32() + row * dim, r.keys, r.values, r.visible, w, kShares, dim, scale,
                       shares[w]);
        }
        for (int w = 1; w < kShares; ++w) shares[0].merge(shares[w]);
        for (int64_t e = 0; e < dim; ++e) actual.outputs[0].f32()[row * dim + e] = shares[0].acc[e] / shares[0].total;
      }
      INFO("dim " << dim << " position " << position);
      expect_close(actual.outputs[0], expected.outputs[0], "out", 1e-4f, 1e-5f);
      CHECK(in[3].bytes == expected.inputs[3].bytes);  // the caches, written in place
      CHECK(in[4].bytes == expected.inputs[4].bytes);
    }
  }
  // A position past the cache: ref refuses; the device logic writes nothing.
  const cuda::AttentionShape a{1, 1, 1, 2, 4, 2};
  CHECK(a.position_fits(2));
  CHECK_FALSE(a.position_fits(3));
  CHECK_FALSE(a.position_fits(-1));
}
