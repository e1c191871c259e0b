// Shape family: every op on hand-computed cases, every op on every dtype (bytes checked against an
// element permutation computed here), shape inference and errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>

#include "ir/op_schema.hpp"
#include "support/infer_types.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;
using Ints = std::vector<int64_t>;

namespace {

Result<Shape> infer_shape(const std::string& op, const Shape& in, const Attrs& attrs) {
  auto outs = infer(op, {TensorType{DType::kF32, in}}, attrs);
  if (!outs.is_ok()) return outs.status();
  return outs.value()[0].shape;
}

std::vector<float> iota(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return v;
}

std::vector<int64_t> row_major_strides(const Shape& s) {
  std::vector<int64_t> st(s.size());
  int64_t acc = 1;
  for (size_t d = s.size(); d-- > 0;) {
    st[d] = acc;
    acc *= s[d];
  }
  return st;
}

// Calls f(index) for every multi-index of `shape` in row-major order.
void for_each_index(const Shape& shape, const std::function<void(const std::vector<int64_t>&)>& f) {
  if (numel(shape) == 0) return;
  std::vector<int64_t> idx(shape.size(), 0);
  while (true) {
    f(idx);
    size_t d = shape.size();
    while (d > 0) {
      --d;
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
      if (d == 0) return;
    }
    if (shape.empty()) return;
  }
}

// A tensor of `dtype` whose elements are distinguishable by their bytes (bool: alternating 0/1).
HostTensor patterned(DType dtype, Shape shape, uint8_t salt = 0) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  const size_t es = dtype_size(dtype);
  t.bytes.resize(static_cast<size_t>(numel(t.shape)) * es);
  for (size_t e = 0; e < t.bytes.size() / es; ++e) {
    for (size_t b = 0; b < es; ++b) {
      t.bytes[e * es + b] = dtype == DType::kBool ? static_cast<uint8_t>((e + salt) & 1)
                                                  : static_cast<uint8_t>(e * 7 + b * 131 + salt * 29 + 1);
    }
  }
  return t;
}

// Gathers elements of `sources` by (source, element) pairs: the expected output of a data-movement op.
std::vector<uint8_t> take(const std::vector<const HostTensor*>& sources, const std::vector<std::pair<int, int64_t>>& picks) {
  const size_t es = dtype_size(sources[0]->dtype);
  std::vector<uint8_t> out;
  for (const auto& [src, e] : picks) {
    const uint8_t* p = sources[src]->bytes.data() + e * es;
    out.insert(out.end(), p, p + es);
  }
  return out;
}

const std::vector<DType> kEveryDType = {DType::kF32, DType::kF16, DType::kBF16, DType::kI32,
                                        DType::kI64, DType::kI8,  DType::kU8,   DType::kBool};

}  // namespace

TEST_CASE("Reshape: 0 copies a dim, -1 is inferred", "[ops][shape]") {
  auto out = run_op("Reshape", {HostTensor::f32({2, 3, 4}, iota(24))}, {{"shape", Ints{0, -1, 2}}});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].shape == Shape{2, 6, 2});
  CHECK(out.value()[0].f32() == iota(24));
  CHECK(infer_shape("Reshape", {2, 3, 4}, {{"shape", Ints{-1}}}).value() == Shape{24});
  CHECK(infer_shape("Reshape", {2, 3, 4}, {{"shape", Ints{4, 0, 2}}}).value() == Shape{4, 3, 2});
  CHECK(infer_shape("Reshape", {1}, {{"shape", Ints{}}}).value() == Shape{});
}

TEST_CASE("Reshape errors name the node", "[ops][shape][errors]") {
  auto two = infer_shape("Reshape", {2, 3, 4}, {{"shape", Ints{-1, -1}}});
  REQUIRE_FALSE(two.is_ok());
  CHECK_THAT(two.status().message(), Catch::Contains("the_node") && Catch::Contains("-1"));
  auto size = infer_shape("Reshape", {2, 3, 4}, {{"shape", Ints{5, -1}}});
  REQUIRE_FALSE(size.is_ok());
  CHECK(size.status().code() == Code::kShapeMismatch);
  CHECK_FALSE(infer_shape("Reshape", {2, 3, 4}, {{"shape", Ints{2, 3, 5}}}).is_ok());
  CHECK_FALSE(infer_shape("Reshape", {2, 3}, {{"shape", Ints{0, 0, 0}}}).is_ok());
  CHECK_FALSE(infer_shape("Reshape", {2, 3}, {}).is_ok());
}

TEST_CASE("Flatten", "[ops][shape]") {
  auto out = run_op("Flatten", {HostTensor::f32({2, 3, 4}, iota(24))}, {{"axis", int64_t{2}}});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].shape == Shape{6, 4});
  CHECK(out.value()[0].f32() == iota(24));
  CHECK(infer_shape("Flatten", {2, 3, 4, 5}, {}).value() == Shape{2, 60});
  CHECK(infer_shape("Flatten", {2, 3, 4, 5}, {{"axis", int64_t{0}}}).value() == Shape{1, 120});
  CHECK(infer_shape("Flatten", {2, 3, 4, 5}, {{"axis", int64_t{4}}}).value() == Shape{120, 1});
  CHECK(infer_shape("Flatten", {2, 3, 4, 5}, {{"axis", int64_t{-1}}}).value() == Shape{24, 5});
  auto bad = infer_shape("Flatten", {2, 3}, {{"axis", int64_t{3}}});
  REQUIRE_FALSE(bad.is_ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("the_node") && Catch::Contains("axis"));
}

TEST_CASE("Transpose", "[ops][shape]") {
  // [2, 3] -> [3, 2], default perm reverses.
  auto out = run_op("Transpose", {HostTensor::i64({2, 3}, {1, 2, 3, 4, 5, 6})});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].shape == Shape{3, 2});
  CHECK(out.value()[0].values<int64_t>() == std::vector<int64_t>{1, 4, 2, 5, 3, 6});
  CHECK(infer_shape("Transpose", {2, 3, 4, 5}, {{"perm", Ints{0, 2, 3, 1}}}).value() == Shape{2, 4, 5, 3});
  auto dup = infer_shape("Transpose", {2, 3, 4}, {{"perm", Ints{0, 1, 1}}});
  REQUIRE_FALSE(dup.is_ok());
  CHECK_THAT(dup.status().message(), Catch::Contains("the_node") && Catch::Contains("perm"));
  CHECK_FALSE(infer_shape("Transpose", {2, 3, 4}, {{"perm", Ints{0, 1}}}).is_ok());
  CHECK_FALSE(infer_shape("Transpose", {2, 3, 4}, {{"perm", Ints{0, 1, 3}}}).is_ok());
}

TEST_CASE("Concat", "[ops][shape]") {
  auto out = run_op("Concat",
                    {HostTensor::i32({2, 1}, {1, 2}), HostTensor::i32({2, 2}, {3, 4, 5, 6}), HostTensor::i32({2, 0}, {})},
                    {{"axis", int64_t{-1}}});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].shape == Shape{2, 3});
  CHECK(out.value()[0].values<int32_t>() == std::vector<int32_t>{1, 3, 4, 2, 5, 6});
  auto rows = run_op("Concat", {HostTensor::f32({1, 2}, {1, 2}), HostTensor::f32({2, 2}, {3, 4, 5, 6})},
                     {{"axis", int64_t{0}}});
  REQUIRE(rows.is_ok());
  CHECK(rows.value()[0].f32() == std::vector<float>{1, 2, 3, 4, 5, 6});

  auto mismatch = infer("Concat", {TensorType{DType::kF32, {2, 3}}, TensorType{DType::kF32, {3, 3}}},
                        {{"axis", int64_t{1}}});
  REQUIRE_FALSE(mismatch.is_ok());
  CHECK_THAT(mismatch.status().message(), Catch::Contains("the_node"));
  CHECK_FALSE(infer("Concat", {TensorType{DType::kF32, {2}}, TensorType{DType::kI64, {2}}}, {{"axis", int64_t{0}}})
                  .is_ok());
  CHECK_FALSE(infer("Concat", {TensorType{DType::kF32, {2}}}, {}).is_ok());  // axis is required
}

namespace {

// The indices an ONNX slice visits on one axis, by walking it (not by a count formula). Unlike
// numpy, ONNX clamps a backward start below 0 up to 0, so [-100:-200:-1] takes element 0.
std::vector<int64_t> visited(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  std::vector<int64_t> out;
  if (step > 0) {
    for (int64_t i = std::max<int64_t>(start, 0); i < std::min(end, dim); i += step) out.push_back(i);
  } else if (dim > 0) {
    for (int64_t i = std::clamp<int64_t>(start, 0, dim - 1); i > std::max<int64_t>(end, -1); i += step) out.push_back(i);
  }
  return out;
}

}  // namespace

TEST_CASE("Slice on one axis: ONNX clamping, negative indices and steps", "[ops][shape]") {
  const int64_t big = std::numeric_limits<int64_t>::max(), small = std::numeric_limits<int64_t>::min();
  struct Case {
    int64_t start, end, step;
    std::vector<float> expected;
  };
  const std::vector<Case> cases = {
      {2, 8, 3, {2, 5}},          {-3, big, 1, {7, 8, 9}},    {8, 2, -2, {8, 6, 4}},
      {-1, small, -1, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},        {20, 30, 1, {}},
      {-100, 3, 1, {0, 1, 2}},    {100, -100, -4, {9, 5, 1}}, {3, 3, 1, {}},
      {0, big, 4, {0, 4, 8}},     {5, -8, -1, {5, 4, 3}},     {-100, -200, -1, {0}},
  };
  for (const Case& c : cases) {
    INFO("start " << c.start << " end " << c.end << " step " << c.step);
    CHECK(visited(10, c.start, c.end, c.step).size() == c.expected.size());  // the test's own walk agrees
    auto out = run_op("Slice", {HostTensor::f32({10}, iota(10))},
                      {{"starts", Ints{c.start}}, {"ends", Ints{c.end}}, {"steps", Ints{c.step}}});
    REQUIRE(out.is_ok());
    CHECK(out.value()[0].shape == Shape{static_cast<int64_t>(c.expected.size())});
    CHECK(out.value()[0].f32() == c.expected);
  }
}

TEST_CASE("Slice on several axes matches a walk over each axis", "[ops][shape]") {
  const Shape shape{4, 5, 6};
  const auto x = iota(120);
  const Ints starts{-1, 1, 5}, ends{-100, 100, 0}, axes{0, -1, 1}, steps{-2, 2, -3};
  auto out = run_op("Slice", {HostTensor::f32(shape, x)},
                    {{"starts", starts}, {"ends", ends}, {"axes", axes}, {"steps", steps}});
  REQUIRE(out.is_ok());
  const auto i0 = visited(4, -1, -100, -2);  // axis 0
  const auto i2 = visited(6, 1, 100, 2);     // axis -1
  const auto i1 = visited(5, 5, 0, -3);      // axis 1
  CHECK(out.value()[0].shape == Shape{static_cast<int64_t>(i0.size()), static_cast<int64_t>(i1.size()),
                                      static_cast<int64_t>(i2.size())});
  std::vector<float> expected;
  for (int64_t a : i0)
    for (int64_t b : i1)
      for (int64_t c : i2) expected.push_back(x[(a * 5 + b) * 6 + c]);
  CHECK(out.value()[0].f32() == expected);

  // Axes not listed are kept whole.
  CHECK(infer_shape("Slice", {4, 5, 6}, {{"starts", Ints{1}}, {"ends", Ints{3}}, {"axes", Ints{1}}}).value() ==
        Shape{4, 2, 6});
}

TEST_CASE("Slice errors", "[ops][shape][errors]") {
  auto zero = infer_shape("Slice", {4}, {{"starts", Ints{0}}, {"ends", Ints{4}}, {"steps", Ints{0}}});
  REQUIRE_FALSE(zero.is_ok());
  CHECK_THAT(zero.status().message(), Catch::Contains("the_node") && Catch::Contains("steps"));
  CHECK_FALSE(infer_shape("Slice", {4}, {{"starts", Ints{0}}, {"ends", Ints{4, 4}}}).is_ok());
  CHECK_FALSE(infer_shape("Slice", {4, 4}, {{"starts", Ints{0, 0}}, {"ends", Ints{1, 1}}, {"axes", Ints{1, -1}}}).is_ok());
  CHECK_FALSE(infer_shape("Slice", {4}, {{"starts", Ints{0}}, {"ends", Ints{1}}, {"axes", Ints{1}}}).is_ok());
  CHECK_FALSE(infer_shape("Slice", {4}, {{"starts", Ints{0}}}).is_ok());
}

TEST_CASE("Split", "[ops][shape]") {
  auto out = run_op("Split", {HostTensor::f32({2, 6}, iota(12))}, {{"axis", int64_t{1}}, {"split", Ints{1, 2, 3}}});
  REQUIRE(out.is_ok());
  REQUIRE(out.value().size() == 3);
  CHECK(out.value()[0].shape == Shape{2, 1});
  CHECK(out.value()[0].f32() == std::vector<float>{0, 6});
  CHECK(out.value()[1].f32() == std::vector<float>{1, 2, 7, 8});
  CHECK(out.value()[2].f32() == std::vector<float>{3, 4, 5, 9, 10, 11});

  auto sum = infer("Split", {TensorType{DType::kF32, {2, 6}}}, {{"axis", int64_t{1}}, {"split", Ints{1, 2}}});
  REQUIRE_FALSE(sum.is_ok());
  CHECK_THAT(sum.status().message(), Catch::Contains("the_node") && Catch::Contains("split"));
  CHECK_FALSE(infer("Split", {TensorType{DType::kF32, {2, 6}}}, {{"axis", int64_t{2}}, {"split", Ints{2}}}).is_ok());
  CHECK_FALSE(infer("Split", {TensorType{DType::kF32, {2, 6}}}, {{"split", Ints{3, -1}}}).is_ok());
}

TEST_CASE("Squeeze and Unsqueeze", "[ops][shape]") {
  auto out = run_op("Squeeze", {HostTensor::f32({1, 3, 1, 2}, iota(6))}, {{"axes", Ints{0, -2}}});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].shape == Shape{3, 2});
  CHECK(out.value()[0].f32() == iota(6));
  CHECK(infer_shape("Squeeze", {1, 3, 1, 2}, {}).value() == Shape{3, 2});
  CHECK(infer_shape("Squeeze", {1, 3, 1, 2}, {{"axes", Ints{2}}}).value() == Shape{1, 3, 2});
  auto not_one = infer_shape("Squeeze", {1, 3, 1, 2}, {{"axes", Ints{1}}});
  REQUIRE_FALSE(not_one.is_ok());
  CHECK_THAT(not_one.status().message(), Catch::Contains("the_node"));

  auto un = run_op("Unsqueeze", {HostTensor::f32({3, 2}, iota(6))}, {{"axes", Ints{0, -1}}});
  REQUIRE(un.is_ok());
  CHECK(un.value()[0].shape == Shape{1, 3, 2, 1});
  CHECK(un.value()[0].f32() == iota(6));
  CHECK(infer_shape("Unsqueeze", {3, 2}, {{"axes", Ints{1}}}).value() == Shape{3, 1, 2});
  CHECK(infer_shape("Unsqueeze", {3, 2}, {{"axes", Ints{3, 1}}}).value() == Shape{3, 1, 2, 1});
  CHECK(infer_shape("Unsqueeze", {}, {{"axes", Ints{0}}}).value() == Shape{1});
  CHECK_FALSE(infer_shape("Unsqueeze", {3, 2}, {{"axes", Ints{3}}}).is_ok());
  CHECK_FALSE(infer_shape("Unsqueeze", {3, 2}, {{"axes", Ints{1, 1}}}).is_ok());
  CHECK_FALSE(infer_shape("Unsqueeze", {3, 2}, {}).is_ok());
}

TEST_CASE("Expand broadcasts to a shape", "[ops][shape]") {
  auto out = run_op("Expand", {HostTensor::i64({3, 1}, {1, 2, 3})}, {{"shape", Ints{2, 1, 4}}});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].shape == Shape{2, 3, 4});
  CHECK(out.value()[0].values<int64_t>() ==
        std::vector<int64_t>{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3});
  CHECK(infer_shape("Expand", {2, 1}, {{"shape", Ints{3}}}).value() == Shape{2, 3});
  auto bad = infer_shape("Expand", {2, 3}, {{"shape", Ints{4, 3}}});
  REQUIRE_FALSE(bad.is_ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("the_node"));
}

TEST_CASE("Pad with a constant; negative pads crop", "[ops][shape]") {
  // [2, 3] with one row before and two columns after.
  auto out = run_op("Pad", {HostTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {{"pads", Ints{1, 0, 0, 2}}, {"value", 7.0}});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].shape == Shape{3, 5});
  CHECK(out.value()[0].f32() == std::vector<float>{7, 7, 7, 7, 7, 1, 2, 3, 7, 7, 4, 5, 6, 7, 7});

  auto crop = run_op("Pad", {HostTensor::i32({2, 3}, {1, 2, 3, 4, 5, 6})}, {{"pads", Ints{0, -1, 1, 1}}, {"value", -2.0}});
  REQUIRE(crop.is_ok());
  CHECK(crop.value()[0].shape == Shape{3, 3});
  CHECK(crop.value()[0].values<int32_t>() == std::vector<int32_t>{2, 3, -2, 5, 6, -2, -2, -2, -2});

  auto neg_inf = run_op("Pad", {HostTensor::f32({1}, {0.5f})},
                        {{"pads", Ints{1, 0}}, {"value", -std::numeric_limits<double>::infinity()}});
  REQUIRE(neg_inf.is_ok());
  CHECK(neg_inf.value()[0].f32() == std::vector<float>{-std::numeric_limits<float>::infinity(), 0.5f});

  auto bad = infer_shape("Pad", {2, 3}, {{"pads", Ints{1, 1}}});
  REQUIRE_FALSE(bad.is_ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("the_node") && Catch::Contains("pads"));
  CHECK_FALSE(infer_shape("Pad", {2, 3}, {{"pads", Ints{-2, 0, -1, 0}}}).is_ok());
}

TEST_CASE("Pad encodes its value in 16-bit float dtypes", "[ops][shape]") {
  struct Case {
    DType dtype;
    double value;
    uint16_t bits;
  };
  // IEEE half: 1.0 = 0x3C00, -2.0 = 0xC000, 65504 = 0x7BFF (max), 1e6 overflows to inf 0x7C00,
  // 2^-24 = 0x0001 (smallest subnormal), 1/3 rounds to 0x3555. bfloat16: 0.5 = 0x3F00, 1/3 = 0x3EAB.
  const std::vector<Case> cases = {{DType::kF16, 1.0, 0x3C00},         {DType::kF16, -2.0, 0xC000},
                                   {DType::kF16, 65504.0, 0x7BFF},     {DType::kF16, 1e6, 0x7C00},
                                   {DType::kF16, 0x1p-24, 0x0001},     {DType::kF16, 1.0 / 3.0, 0x3555},
                                   {DType::kBF16, 0.5, 0x3F00},        {DType::kBF16, 1.0 / 3.0, 0x3EAB}};
  for (const Case& c : cases) {
    INFO(dtype_name(c.dtype) << " value " << c.value);
    auto out = run_op("Pad", {HostTensor::make<uint16_t>(c.dtype, {1}, {0x1234})}, {{"pads", Ints{0, 1}}, {"value", c.value}});
    REQUIRE(out.is_ok());
    CHECK(out.value()[0].values<uint16_t>() == std::vector<uint16_t>{0x1234, c.bits});
  }
}

TEST_CASE("Shape ops move the bytes of every dtype", "[ops][shape][dtypes]") {
  for (DType dt : kEveryDType) {
    INFO("dtype " << dtype_name(dt));
    const HostTensor x = patterned(dt, {2, 3, 4});
    const auto x_strides = row_major_strides(x.shape);
    auto run = [&](const std::string& op, const std::vector<HostTensor>& ins, const Attrs& attrs) {
      auto out = run_op(op, ins, attrs);
      INFO(op);
      REQUIRE(out.is_ok());
      return out.value();
    };

    // Reshape, Flatten, Squeeze, Unsqueeze keep the bytes.
    CHECK(run("Reshape", {x}, {{"shape", Ints{4, -1}}})[0].bytes == x.bytes);
    CHECK(run("Flatten", {x}, {})[0].bytes == x.bytes);
    CHECK(run("Unsqueeze", {x}, {{"axes", Ints{1}}})[0].bytes == x.bytes);
    CHECK(run("Squeeze", {patterned(dt, {1, 6})}, {})[0].bytes == patterned(dt, {1, 6}).bytes);

    // Transpose [2,3,4] by perm [2,0,1]: out[a,b,c] = x[b,c,a].
    std::vector<std::pair<int, int64_t>> picks;
    for_each_index({4, 2, 3}, [&](const std::vector<int64_t>& i) {
      picks.push_back({0, i[1] * x_strides[0] + i[2] * x_strides[1] + i[0] * x_strides[2]});
    });
    CHECK(run("Transpose", {x}, {{"perm", Ints{2, 0, 1}}})[0].bytes == take({&x}, picks));

    // Slice axis 2 backwards by 2, axis 0 from 1: out[a,b,c] = x[1+a, b, 3-2c].
    picks.clear();
    for_each_index({1, 3, 2}, [&](const std::vector<int64_t>& i) {
      picks.push_back({0, (1 + i[0]) * x_strides[0] + i[1] * x_strides[1] + (3 - 2 * i[2]) * x_strides[2]});
    });
    CHECK(run("Slice", {x}, {{"starts", Ints{1, -1}}, {"ends", Ints{2, -100}}, {"axes", Ints{0, 2}}, {"steps", Ints{1, -2}}})[0]
              .bytes == take({&x}, picks));

    // Concat with a second tensor along axis 1: [2,3,4] + [2,1,4].
    const HostTensor y = patterned(dt, {2, 1, 4}, 5);
    picks.clear();
    for_each_index({2, 4, 4}, [&](const std::vector<int64_t>& i) {
      if (i[1] < 3) picks.push_back({0, i[0] * 12 + i[1] * 4 + i[2]});
      else picks.push_back({1, i[0] * 4 + i[2]});
    });
    CHECK(run("Concat", {x, y}, {{"axis", int64_t{1}}})[0].bytes == take({&x, &y}, picks));

    // Split along axis 2 into [1, 3].
    auto parts = run("Split", {x}, {{"axis", int64_t{2}}, {"split", Ints{1, 3}}});
    REQUIRE(parts.size() == 2);
    std::vector<std::pair<int, int64_t>> first, second;
    for_each_index({2, 3, 4}, [&](const std::vector<int64_t>& i) {
      (i[2] < 1 ? first : second).push_back({0, i[0] * 12 + i[1] * 4 + i[2]});
    });
    CHECK(parts[0].bytes == take({&x}, first));
    CHECK(parts[1].bytes == take({&x}, second));

    // Expand [3,1] to [2,3,4]: out[a,b,c] = z[b].
    const HostTensor z = patterned(dt, {3, 1}, 3);
    picks.clear();
    for_each_index({2, 3, 4}, [&](const std::vector<int64_t>& i) { picks.push_back({0, i[1]}); });
    CHECK(run("Expand", {z}, {{"shape", Ints{2, 3, 4}}})[0].bytes == take({&z}, picks));

    // Pad [3,1] by one row before with 0: zero bytes then z (0 encodes as all-zero in every dtype).
    std::vector<uint8_t> padded(dtype_size(dt), 0);
    padded.insert(padded.end(), z.bytes.begin(), z.bytes.end());
    CHECK(run("Pad", {z}, {{"pads", Ints{1, 0, 0, 0}}})[0].bytes == padded);
  }
}

TEST_CASE("Trilu keeps one triangle from diagonal k", "[ops][shape]") {
  // [[1, 2, 3], [4, 5, 6]]: upper k=0 keeps j >= i, lower k=-1 keeps j <= i - 1, upper k=1 j >= i + 1.
  const HostTensor x = HostTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6});
  const auto trilu = [&](int64_t upper, int64_t k) {
    auto out = run_op("Trilu", {x}, {{"upper", upper}, {"k", k}});
    REQUIRE(out.is_ok());
    return out.value()[0].f32();
  };
  CHECK(trilu(1, 0) == std::vector<float>{1, 2, 3, 0, 5, 6});
  CHECK(trilu(0, 0) == std::vector<float>{1, 0, 0, 4, 5, 0});
  CHECK(trilu(0, -1) == std::vector<float>{0, 0, 0, 4, 0, 0});
  CHECK(trilu(1, 1) == std::vector<float>{0, 2, 3, 0, 0, 6});
  CHECK(trilu(1, 5) == std::vector<float>{0, 0, 0, 0, 0, 0});  // past the last diagonal
  CHECK(trilu(0, -5) == std::vector<float>{0, 0, 0, 0, 0, 0});

  // k as an i64 input overrides the attribute (ONNX passes it as a tensor).
  auto run_time_k = run_op("Trilu", {x, HostTensor::i64({}, {-1})}, {{"upper", int64_t{0}}, {"k", int64_t{3}}});
  REQUIRE(run_time_k.is_ok());
  CHECK(run_time_k.value()[0].f32() == std::vector<float>{0, 0, 0, 4, 0, 0});
  auto bad_k = infer("Trilu", {TensorType{DType::kF32, {2, 3}}, TensorType{DType::kI32, {}}}, {});
  REQUIRE_FALSE(bad_k.is_ok());
  CHECK_THAT(bad_k.status().message(), Catch::Contains("k must be an i64 scalar"));

  auto vector = infer_shape("Trilu", {4}, {});
  REQUIRE_FALSE(vector.is_ok());
  CHECK_THAT(vector.status().message(), Catch::Contains("the_node") && Catch::Contains("rank >= 2"));
  CHECK_FALSE(infer_shape("Trilu", {2, 2}, {{"upper", int64_t{2}}}).is_ok());
}

TEST_CASE("Trilu masks every matrix of a batch in every dtype", "[ops][shape][dtypes]") {
  for (DType dt : kEveryDType) {
    INFO("dtype " << dtype_name(dt));
    const HostTensor x = patterned(dt, {2, 3, 4});
    auto out = run_op("Trilu", {x}, {{"upper", int64_t{0}}, {"k", int64_t{1}}});
    REQUIRE(out.is_ok());
    // Lower triangle from diagonal 1: element [b, i, j] kept when j - i <= 1, else all-zero bytes.
    std::vector<uint8_t> want = x.bytes;
    const size_t es = dtype_size(dt);
    for_each_index({2, 3, 4}, [&](const std::vector<int64_t>& i) {
      if (i[2] - i[1] <= 1) return;
      std::fill_n(want.begin() + static_cast<std::ptrdiff_t>(((i[0] * 3 + i[1]) * 4 + i[2]) * es), es, uint8_t{0});
    });
    CHECK(out.value()[0].bytes == want);
  }
}
