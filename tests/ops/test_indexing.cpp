// indexing family: TopK, OneHot and ReverseSequence against ONNX's operator examples and
// hand-computed cases (ties, negative and out-of-range indices), and their errors; the cpu TopK
// against ref on random shapes, axes and k, with and without ties; the cpu ReverseSequence against
// ref on random shapes, lengths and both axis orders.
#include <catch2/catch.hpp>

#include <random>

#include "support/backend_compare.hpp"
#include "support/expect_close.hpp"
#include "support/infer_types.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;

namespace {

std::vector<float> iota_floats(int n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  return v;
}

}  // namespace

TEST_CASE("TopK returns the k largest or smallest and their indices (ONNX's examples)", "[ops][indexing]") {
  auto largest = run_op("TopK", {HostTensor::f32({3, 4}, iota_floats(12))}, {{"k", int64_t{3}}, {"axis", int64_t{1}}});
  REQUIRE(largest.is_ok());
  CHECK(largest.value()[0].shape == Shape{3, 3});
  CHECK(largest.value()[0].f32() == std::vector<float>{3, 2, 1, 7, 6, 5, 11, 10, 9});
  CHECK(largest.value()[1].values<int64_t>() == std::vector<int64_t>{3, 2, 1, 3, 2, 1, 3, 2, 1});

  auto smallest = run_op("TopK", {HostTensor::f32({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 11, 10, 9, 8})},
                         {{"k", int64_t{3}}, {"axis", int64_t{-1}}, {"largest", int64_t{0}}});
  REQUIRE(smallest.is_ok());
  CHECK(smallest.value()[0].f32() == std::vector<float>{0, 1, 2, 4, 5, 6, 8, 9, 10});
  CHECK(smallest.value()[1].values<int64_t>() == std::vector<int64_t>{0, 1, 2, 0, 1, 2, 3, 2, 1});
}

TEST_CASE("TopK breaks ties by the lower index and works along a middle axis", "[ops][indexing]") {
  auto ties = run_op("TopK", {HostTensor::f32({2, 4}, {1, 3, 3, 2, 2, 1, 1, 2})}, {{"k", int64_t{3}}});
  REQUIRE(ties.is_ok());
  CHECK(ties.value()[0].f32() == std::vector<float>{3, 3, 2, 2, 2, 1});
  CHECK(ties.value()[1].values<int64_t>() == std::vector<int64_t>{1, 2, 3, 0, 3, 1});

  // x[2][3][2]: the largest 2 along axis 1 of each column.
  auto middle = run_op("TopK", {HostTensor::i64({2, 3, 2}, {5, 0, 1, 9, 7, 4, 2, 2, 8, 3, 6, 1})},
                       {{"k", int64_t{2}}, {"axis", int64_t{1}}});
  REQUIRE(middle.is_ok());
  CHECK(middle.value()[0].values<int64_t>() == std::vector<int64_t>{7, 9, 5, 4, 8, 3, 6, 2});
  CHECK(middle.value()[1].values<int64_t>() == std::vector<int64_t>{2, 1, 0, 2, 1, 1, 2, 0});
}

TEST_CASE("OneHot places on_value at each index (ONNX's examples)", "[ops][indexing]") {
  // Negative indices count from depth: -7 and -8 of depth 10 are 3 and 2.
  auto negative = run_op("OneHot", {HostTensor::i64({3}, {0, -7, -8}), HostTensor::f32({2}, {1, 3})},
                         {{"depth", int64_t{10}}, {"axis", int64_t{1}}});
  REQUIRE(negative.is_ok());
  std::vector<float> want(30, 1.0f);
  want[0] = want[10 + 3] = want[20 + 2] = 3.0f;
  CHECK(negative.value()[0].f32() == want);

  // axis 0, float indices (truncated), an out-of-range index gives a column of off_value.
  auto axis0 = run_op("OneHot", {HostTensor::f32({3}, {1.0f, 2.7f, 5.0f}), HostTensor::i32({2}, {0, 7})},
                      {{"depth", int64_t{3}}, {"axis", int64_t{0}}});
  REQUIRE(axis0.is_ok());
  CHECK(axis0.value()[0].shape == Shape{3, 3});
  CHECK(axis0.value()[0].values<int32_t>() == std::vector<int32_t>{0, 0, 0, 7, 0, 0, 0, 7, 0});
}

TEST_CASE("ReverseSequence reverses each batch entry's first steps (ONNX's examples)", "[ops][indexing]") {
  const HostTensor x = HostTensor::f32({4, 4}, iota_floats(16));
  auto time_major = run_op("ReverseSequence", {x, HostTensor::i64({4}, {4, 3, 2, 1})},
                           {{"batch_axis", int64_t{1}}, {"time_axis", int64_t{0}}});
  REQUIRE(time_major.is_ok());
  CHECK(time_major.value()[0].f32() == std::vector<float>{12, 9, 6, 3, 8, 5, 2, 7, 4, 1, 10, 11, 0, 13, 14, 15});
  auto batch_major = run_op("ReverseSequence", {x, HostTensor::i32({4}, {1, 2, 3, 4})},
                            {{"batch_axis", int64_t{0}}, {"time_axis", int64_t{1}}});
  REQUIRE(batch_major.is_ok());
  CHECK(batch_major.value()[0].f32() == std::vector<float>{0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 15, 14, 13, 12});

  auto too_long = run_op("ReverseSequence", {x, HostTensor::i64({4}, {1, 5, 1, 1})},
                         {{"batch_axis", int64_t{0}}, {"time_axis", int64_t{1}}});
  REQUIRE_FALSE(too_long.is_ok());
  CHECK(too_long.status().message().find("sequence_lens[1] = 5") != std::string::npos);
}

TEST_CASE("indexing shape inference and errors", "[ops][indexing][errors]") {
  auto top = infer("TopK", {f32({2, 5, 3})}, {{"k", int64_t{2}}, {"axis", int64_t{1}}});
  REQUIRE(top.is_ok());
  CHECK(top.value()[0].shape == Shape{2, 2, 3});
  CHECK(top.value()[1].dtype == DType::kI64);
  CHECK_FALSE(infer("TopK", {f32({2, 5})}, {{"k", int64_t{6}}}).is_ok());                        // k > dim
  CHECK_FALSE(infer("TopK", {f32({2, 5})}, {{"k", int64_t{0}}}).is_ok());                        // k < 1
  CHECK_FALSE(infer("TopK", {f32({2, 5})}, {{"k", int64_t{1}}, {"axis", int64_t{2}}}).is_ok());  // axis

  auto hot = infer("OneHot", {TensorType{DType::kI64, {2, 3}}, f32({2})}, {{"depth", int64_t{4}}, {"axis", int64_t{-2}}});
  REQUIRE(hot.is_ok());
  CHECK(hot.value()[0].shape == Shape{2, 4, 3});
  CHECK_FALSE(infer("OneHot", {TensorType{DType::kI64, {2}}, f32({3})}, {{"depth", int64_t{4}}}).is_ok());  // values
  CHECK_FALSE(infer("OneHot", {TensorType{DType::kI64, {2}}, f32({2})}, {{"depth", int64_t{0}}}).is_ok());  // depth
  CHECK_FALSE(infer("OneHot", {TensorType{DType::kI64, {2}}, f32({2})}, {{"depth", int64_t{4}}, {"axis", int64_t{2}}}).is_ok());

  const TensorType lens{DType::kI64, {3}};
  CHECK(infer("ReverseSequence", {f32({4, 3, 2}), lens}, {}).is_ok());
  CHECK_FALSE(infer("ReverseSequence", {f32({3, 4}), lens}, {}).is_ok());  // batch is axis 1: 4 lengths
  CHECK_FALSE(infer("ReverseSequence", {f32({3, 4, 2}), lens}, {{"batch_axis", int64_t{2}}}).is_ok());
}

TEST_CASE("cpu TopK matches ref on random shapes, axes, k and ties", "[ops][cpu][indexing]") {
  std::mt19937 gen(37);
  uint32_t seed = 1100;
  for (int rank = 1; rank <= 4; ++rank) {
    for (int trial = 0; trial < 4; ++trial) {
      const Shape shape = random_shape(gen, rank, 1, 9);
      const int axis = static_cast<int>(random_dim(gen, 0, rank - 1));
      const Attrs attrs{{"k", random_dim(gen, 1, shape[static_cast<size_t>(axis)])},
                        {"axis", trial % 2 ? int64_t{axis - rank} : int64_t{axis}},
                        {"largest", int64_t{trial / 2 % 2}}};
      INFO(shape_str(shape) << " axis " << axis);
      check_against_ref("cpu", {"TopK", {input(shape, ++seed)}, attrs});
      // Few distinct values: ties everywhere, broken by the lower index.
      Operand ties = input(shape, ++seed);
      for (float& v : ties.values) v = static_cast<float>(static_cast<int>((v + 1.0f) * 1.5f));
      check_against_ref("cpu", {"TopK", {ties}, attrs});
      std::vector<int64_t> ints(ties.values.begin(), ties.values.end());
      check_against_ref("cpu", {"TopK", {int64s(shape, ints)}, attrs});
    }
  }
  // Many lines of a long inner axis, split over threads.
  check_against_ref("cpu", {"TopK", {input({40, 300}, ++seed)}, {{"k", int64_t{7}}, {"axis", int64_t{1}}}});
  check_against_ref("cpu", {"TopK", {input({300, 40}, ++seed)}, {{"k", int64_t{5}}, {"axis", int64_t{0}}}});
}

TEST_CASE("cpu ReverseSequence matches ref on random shapes and lengths, time or batch first", "[ops][cpu][indexing]") {
  std::mt19937 gen(41);
  uint32_t seed = 900;
  for (int rank = 2; rank <= 4; ++rank) {
    for (int64_t time_axis : {0, 1}) {
      const Shape shape = random_shape(gen, rank, 1, 6);
      const int64_t batch = shape[static_cast<size_t>(1 - time_axis)], steps = shape[static_cast<size_t>(time_axis)];
      std::vector<int64_t> lens(static_cast<size_t>(batch));
      for (int64_t& l : lens) l = random_dim(gen, 0, steps);
      INFO("x " << shape_str(shape) << " time_axis " << time_axis);
      check_against_ref("cpu", {"ReverseSequence", {input(shape, ++seed), int64s({batch}, lens)},
                                {{"time_axis", time_axis}, {"batch_axis", 1 - time_axis}}});
    }
  }
  // Many rows, split over threads; every length from 0 to all steps.
  std::vector<int64_t> lens(40);
  for (size_t b = 0; b < lens.size(); ++b) lens[b] = static_cast<int64_t>(b % 31);
  check_against_ref("cpu", {"ReverseSequence", {input({30, 40, 64}, ++seed), int64s({40}, lens)}, {}}, "", 4);
  check_against_ref("cpu", {"ReverseSequence", {input({40, 30, 64}, ++seed), int64s({40}, lens)},
                            {{"time_axis", int64_t{1}}, {"batch_axis", int64_t{0}}}}, "", 4);
}

TEST_CASE("cpu ReverseSequence refuses a length out of range, naming it", "[ops][cpu][indexing][errors]") {
  const OpCase c{"ReverseSequence", {input({3, 2, 2}, 1), int64s({2}, {1, 4})}, {}};
  BoundCase bound = BoundCase::open(c, "cpu");
  REQUIRE(bound.backend_of(c.op) == "cpu");
  const Status s = bound.try_infer();
  REQUIRE_FALSE(s.is_ok());
  CHECK_THAT(s.message(), Catch::Contains("sequence_lens[1] = 4 is out of range [0, 3]"));
}
