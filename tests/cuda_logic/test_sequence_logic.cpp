// The CUDA sequence family's element logic (kernels/cuda/sequence_logic.hpp) on the host against
// the reference kernels: Gather and its gradient's targets, Rope, CausalMask, and DropoutTrain's
// mask bit for bit (the contract every backend shares).
#include <algorithm>
#include <tuple>
#include <utility>

#include "cuda_logic/logic_harness.hpp"
#include "ir/splitmix64.hpp"
#include "kernels/cuda/sequence_logic.hpp"
#include "kernels/params/sequence.hpp"

using namespace pock;
using namespace pock::test;

namespace {

HostBuffer i64(Shape shape, const std::vector<int64_t>& v) { return HostBuffer::i64(std::move(shape), v); }

template <typename Word, typename Index>
void gather_on_host(const pock_op_desc& d, const cuda::GatherLayout& l) {
  each_element(cuda::GatherElement<Word, Index>{data_of<Word>(d.inputs[0]), data_of<Index>(d.inputs[1]),
                                                data_of<Word>(d.outputs[0]), l},
               numel(d.outputs[0]));
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
    std::vector<uint8_t> bytes(static_cast<size_t>(numel(v.data_shape)) * dtype_size(v.data_dtype));
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 37 + 11);
    const HostBuffer data{v.data_dtype, v.data_shape, bytes};
    const HostBuffer indices =
        v.i32 ? HostBuffer::i32({2, 3}, std::vector<int32_t>(idx.begin(), idx.end())) : i64({2, 3}, idx);
    const int64_t axis = v.axis - static_cast<int>(v.data_shape.size()) * (v.i32 ? 1 : 0);  // negative axes too
    BoundOp bound("Gather", {data, indices}, {{"axis", axis}});
    REQUIRE(bound.status().is_ok());
    const std::vector<HostBuffer> want = bound.run_ref();
    std::vector<HostBuffer> got = bound.fresh_outputs();
    const pock_op_desc d = bound.bind(got);
    const cuda::GatherLayout l = cuda::gather_layout(v.data_shape.data(), static_cast<int>(v.data_shape.size()),
                                                     parsed<params::SequenceParams>(d).axis, 6);
    const size_t word = dtype_size(v.data_dtype);
    if (word == 1) v.i32 ? gather_on_host<uint8_t, int32_t>(d, l) : gather_on_host<uint8_t, int64_t>(d, l);
    if (word == 2) v.i32 ? gather_on_host<uint16_t, int32_t>(d, l) : gather_on_host<uint16_t, int64_t>(d, l);
    if (word == 4) v.i32 ? gather_on_host<uint32_t, int32_t>(d, l) : gather_on_host<uint32_t, int64_t>(d, l);
    if (word == 8) v.i32 ? gather_on_host<uint64_t, int32_t>(d, l) : gather_on_host<uint64_t, int64_t>(d, l);
    INFO("dtype " << dtype_name(v.data_dtype) << " axis " << v.axis);
    CHECK(got[0].bytes == want[0].bytes);
  }
}

TEST_CASE("cuda Gather logic reports an index out of range, which ref refuses", "[cuda_logic][sequence]") {
  const cuda::GatherLayout l{1, 4, 3, 2};
  const int64_t indices[] = {3, 4, -5};
  CHECK(cuda::gather_source(l, indices, 0) == 6);
  CHECK(cuda::gather_source(l, indices, 2) == -1);
  CHECK(cuda::gather_source(l, indices, 5) == -1);
  const float data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  for (const bool bad : {false, true}) {
    const int64_t picked[] = {3, bad ? 4 : -4, 0};
    float out[6];
    int32_t word = 0;  // the instance's error word, on the host
    each_element(cuda::GatherElement<float, int64_t>{data, picked, out, l, {&word, 7}}, 6);
    INFO("bad " << bad);
    CHECK(word == (bad ? 7 : 0));
    CHECK(out[2] == (bad ? 0.0f : 1.0f));  // a bad index reads nothing
    CHECK(out[0] == 7.0f);
  }
  // With no word (no instance) the report is dropped.
  const int64_t bad_index[] = {9};
  float out[2];
  each_element(cuda::GatherElement<float, int64_t>{data, bad_index, out, {1, 4, 1, 2}, {}}, 2);
  CHECK(out[0] == 0.0f);
}

TEST_CASE("cuda GatherGrad keys report an index out of range and sort it last", "[cuda_logic][layer_grad_sequence]") {
  for (const bool bad : {false, true}) {
    const int64_t indices[] = {1, bad ? -7 : -6, 5};
    uint32_t rows[3];
    int32_t positions[3];
    int32_t word = 0;
    each_element(cuda::GatherGradKeys<int64_t>{indices, 6, rows, positions, {&word, 3}}, 3);
    INFO("bad " << bad);
    CHECK(word == (bad ? 3 : 0));
    CHECK(rows[1] == (bad ? 6u : 0u));  // the sentinel row `extent`: skipped by the runs
  }
}

TEST_CASE("cuda GatherGrad and DropoutGrad logic match ref", "[cuda_logic][layer_grad_sequence]") {
  // Repeated and negative indices: the same rows receive several additions.
  const Shape data_shape{6, 7, 4};
  for (int axis : {1, 0}) {
    const std::vector<int64_t> idx = {1, -1, 1, 0, 5, 1};  // row 5 of 6 twice (as -1), row 1 three times
    Shape dy_shape = data_shape;
    dy_shape[axis] = 6;
    BoundOp bound("GatherGrad", {random_f32(dy_shape, 600 + axis), i64({6}, idx)},
                  {{"axis", int64_t{axis}}, {"shape", data_shape}});
    REQUIRE(bound.status().is_ok());
    const std::vector<HostBuffer> want = bound.run_ref();
    std::vector<HostBuffer> got = bound.fresh_outputs();  // poison the kernel must clear
    REQUIRE(got[0].shape == data_shape);
    const pock_op_desc d = bound.bind(got);
    const cuda::GatherLayout l = cuda::gather_layout(data_shape.data(), 3, axis, 6);
    // The device's steps: keys, CUB's stable radix sort (std::stable_sort here), the runs.
    std::vector<uint32_t> rows(6);
    std::vector<int32_t> positions(6);
    each_element(cuda::GatherGradKeys<int64_t>{data_of<int64_t>(d.inputs[1]), l.extent, rows.data(), positions.data()}, 6);
    std::vector<std::pair<uint32_t, int32_t>> pairs;
    for (size_t i = 0; i < rows.size(); ++i) pairs.emplace_back(rows[i], positions[i]);
    std::stable_sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < pairs.size(); ++i) std::tie(rows[i], positions[i]) = pairs[i];
    float* dx = data_of(d.outputs[0]);
    std::fill(dx, dx + numel(d.outputs[0]), 0.0f);  // the kernel's memset
    each_element(cuda::GatherGradRuns{rows.data(), positions.data(), data_of(d.inputs[0]), dx, l}, l.outer * 6 * l.inner);
    INFO("axis " << axis);
    CHECK(got[0].bytes == want[0].bytes);  // ref's order of additions: bit for bit
  }

  std::vector<uint8_t> mask(257);
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = (i * 7) % 3 != 0;
  BoundOp bound("DropoutGrad", {random_f32({257}, 620), HostBuffer::make(DType::kU8, {257}, mask)}, {{"ratio", 0.3}});
  REQUIRE(bound.status().is_ok());
  const std::vector<HostBuffer> want = bound.run_ref();
  std::vector<HostBuffer> got = bound.fresh_outputs();
  const pock_op_desc d = bound.bind(got);
  const params::SequenceParams p = parsed<params::SequenceParams>(d);
  each_element(cuda::DropoutGradElement{data_of(d.inputs[0]), data_of<uint8_t>(d.inputs[1]), data_of(d.outputs[0]),
                                        1.0 / (1.0 - p.ratio)},
               257);
  CHECK(got[0].bytes == want[0].bytes);
}

TEST_CASE("cuda Rope logic matches ref, far positions included", "[cuda_logic][sequence]") {
  uint32_t seed = 700;
  for (int variant = 0; variant < 8; ++variant) {
    const bool interleaved = variant & 1, inverse = variant & 2, positioned = variant & 4;
    const Shape shape{2, 3, 5, 16};
    std::vector<InputSlot> inputs = {random_f32(shape, ++seed)};
    if (positioned) inputs.push_back(i64({1}, {5000 + variant}));
    Attrs attrs{{"interleaved", int64_t{interleaved}}, {"inverse", int64_t{inverse}}};
    if (variant % 3 == 0) attrs.set("theta", 500000.0);
    BoundOp bound("Rope", std::move(inputs), attrs);
    REQUIRE(bound.status().is_ok());
    const std::vector<HostBuffer> want = bound.run_ref();
    std::vector<HostBuffer> got = bound.fresh_outputs();
    const pock_op_desc d = bound.bind(got);
    const params::SequenceParams p = parsed<params::SequenceParams>(d);
    each_element(cuda::RopePair{data_of(d.inputs[0]), data_of(d.outputs[0]),
                                positioned ? data_of<int64_t>(d.inputs[1]) : nullptr, shape[2], shape[3],
                                std::log(p.theta), p.interleaved, p.inverse ? -1.0f : 1.0f},
                 numel(shape) / 2);
    INFO("interleaved " << interleaved << " inverse " << inverse << " positioned " << positioned);
    expect_close(got[0], want[0], "y", 1e-5, 2e-6);
  }
}

TEST_CASE("cuda CausalMask logic matches ref with a cache offset", "[cuda_logic][sequence]") {
  for (const Shape& shape : {Shape{2, 3, 4, 4}, Shape{3, 5, 9}}) {
    Attrs attrs;
    if (shape.size() == 3) attrs.set("value", -1e4);
    BoundOp bound("CausalMask", {random_f32(shape, 800)}, attrs);
    REQUIRE(bound.status().is_ok());
    const std::vector<HostBuffer> want = bound.run_ref();
    std::vector<HostBuffer> got = bound.fresh_outputs();
    const pock_op_desc d = bound.bind(got);
    const params::SequenceParams p = parsed<params::SequenceParams>(d);
    each_element(cuda::CausalMaskElement{data_of(d.inputs[0]), data_of(d.outputs[0]), shape[shape.size() - 2],
                                         shape.back(), static_cast<float>(p.value)},
                 numel(shape));
    CHECK(got[0].bytes == want[0].bytes);
  }
}

TEST_CASE("cuda DropoutTrain logic reproduces ref's mask and values bit for bit", "[cuda_logic][sequence]") {
  for (uint64_t x : {0ull, 1ull, 0x123456789abcdefull, ~0ull}) CHECK(cuda::splitmix64_hd(x) == splitmix64(x));
  for (const double ratio : {0.1, 0.5, 0.9}) {
    for (const int64_t step : {int64_t{0}, int64_t{7}, int64_t{1} << 40}) {
      std::vector<float> x = random_values({3, 1001}, 900, -1.0f, 1.0f, false);
      x[5] = NAN;
      BoundOp bound("DropoutTrain", {f32({3, 1001}, x), i64({1}, {step})}, {{"ratio", ratio}, {"seed", int64_t{1234}}});
      REQUIRE(bound.status().is_ok());
      const std::vector<HostBuffer> want = bound.run_ref();
      std::vector<HostBuffer> got = bound.fresh_outputs();
      const pock_op_desc d = bound.bind(got);
      const params::SequenceParams p = parsed<params::SequenceParams>(d);
      each_element(cuda::DropoutTrainElement{data_of(d.inputs[0]), data_of<int64_t>(d.inputs[1]), data_of(d.outputs[0]),
                                             data_of<uint8_t>(d.outputs[1]), cuda::splitmix64_hd(p.seed),
                                             static_cast<uint64_t>(p.ratio * 16777216.0), 1.0 / (1.0 - p.ratio)},
                   3 * 1001);
      INFO("ratio " << ratio << " step " << step);
      CHECK(got[1].bytes == want[1].bytes);
      CHECK(got[0].bytes == want[0].bytes);
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
      BoundOp bound("CachedAttention",
                    {random_f32(q_shape, ++seed, -2.0f, 2.0f), random_f32(kv_shape, ++seed), random_f32(kv_shape, ++seed),
                     random_f32(cache_shape, ++seed), random_f32(cache_shape, ++seed), i64({1}, {position})},
                    {{"scale", 0.35}});
      REQUIRE(bound.status().is_ok());
      std::vector<HostBuffer> want_in;
      const std::vector<HostBuffer> want = bound.run_ref(&want_in);
      std::vector<HostBuffer> in = bound.fresh_inputs(), got = bound.fresh_outputs();
      const pock_op_desc d = bound.bind(in, got);
      auto x = [&](int i) { return data_of(d.inputs[i]); };
      const int64_t* p = data_of<int64_t>(d.inputs[5]);
      each_element(cuda::CacheWriteElement{x(1), x(2), x(3), x(4), p, a}, numel(d.inputs[1]));
      const float scale = static_cast<float>(parsed<params::SequenceParams>(d).scale);
      // Three shares over interleaved keys, as three warps of a block take them, then merged.
      constexpr int kShares = 3;
      for (int64_t row = 0; row < a.batch * a.heads * a.seq; ++row) {
        const cuda::AttentionRows r = cuda::attention_rows(a, x(3), x(4), *p, row);
        cuda::AttentionShare<kHostPerLane> shares[kShares];
        for (int w = 0; w < kShares; ++w) {
          cuda::attend(cuda::SoloTeam{}, x(0) + row * dim, r.keys, r.values, r.visible, w, kShares, dim, scale, shares[w]);
        }
        for (int w = 1; w < kShares; ++w) shares[0].merge(shares[w]);
        for (int64_t e = 0; e < dim; ++e) data_of(d.outputs[0])[row * dim + e] = shares[0].acc[e] / shares[0].total;
      }
      INFO("dim " << dim << " position " << position);
      expect_close(got[0], want[0], "out", 1e-4, 1e-5);
      CHECK(in[3].bytes == want_in[3].bytes);  // the caches, written in place
      CHECK(in[4].bytes == want_in[4].bytes);
    }
  }
  // A position past the cache: ref refuses; the device logic reports it and writes nothing.
  const cuda::AttentionShape a{1, 1, 1, 2, 4, 2};
  CHECK(a.position_fits(2));
  CHECK_FALSE(a.position_fits(3));
  CHECK_FALSE(a.position_fits(-1));
  const float k[4] = {1, 2, 3, 4}, v[4] = {5, 6, 7, 8};
  for (const int64_t position : {int64_t{2}, int64_t{3}, int64_t{-1}}) {
    float key_cache[8] = {}, value_cache[8] = {};
    int32_t word = 0;
    each_element(cuda::CacheWriteElement{k, v, key_cache, value_cache, &position, a, {&word, 5}}, 4);
    const bool fits = a.position_fits(position);
    INFO("position " << position);
    CHECK(word == (fits ? 0 : 5));
    CHECK(key_cache[7] == (fits ? 4.0f : 0.0f));
    CHECK(value_cache[4] == (fits ? 5.0f : 0.0f));
  }
}
