// gather_scatter family: GatherElements and ScatterElements (every reduction) against ONNX's
// operator examples and hand-computed cases, and their errors; the cpu kernels of all four ops
// against ref on random shapes, axes, reductions and indices (negative and repeated ones among them).
#include <catch2/catch.hpp>

#include <random>

#include "support/backend_compare.hpp"
#include "support/expect_close.hpp"
#include "support/infer_types.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;

TEST_CASE("GatherElements takes one element per index (ONNX's examples)", "[ops][gather_scatter]") {
  auto axis1 = run_op("GatherElements", {HostTensor::f32({2, 2}, {1, 2, 3, 4}), HostTensor::i64({2, 2}, {0, 0, 1, 0})},
                      {{"axis", int64_t{1}}});
  REQUIRE(axis1.is_ok());
  CHECK(axis1.value()[0].f32() == std::vector<float>{1, 1, 4, 3});

  // Fewer rows of indices than data, negative indices counting from the end, i32 indices.
  auto axis0 = run_op("GatherElements",
                      {HostTensor::i64({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), HostTensor::i32({2, 3}, {-1, -2, 0, 2, 0, 0})},
                      {{"axis", int64_t{0}}});
  REQUIRE(axis0.is_ok());
  CHECK(axis0.value()[0].shape == Shape{2, 3});
  CHECK(axis0.value()[0].values<int64_t>() == std::vector<int64_t>{7, 5, 3, 7, 2, 3});
}

TEST_CASE("ScatterElements writes, or reduces, at the indices", "[ops][gather_scatter]") {
  const HostTensor data = HostTensor::f32({1, 5}, {1, 2, 3, 4, 5});
  const HostTensor indices = HostTensor::i64({1, 2}, {1, -2});  // -2 is column 3
  const HostTensor updates = HostTensor::f32({1, 2}, {1.1f, 2.1f});
  auto none = run_op("ScatterElements", {data, indices, updates}, {{"axis", int64_t{1}}});
  REQUIRE(none.is_ok());
  CHECK(none.value()[0].f32() == std::vector<float>{1, 1.1f, 3, 2.1f, 5});

  // Repeated index 1: the reductions fold both updates into the value there.
  const HostTensor twice = HostTensor::i64({1, 2}, {1, 1});
  const std::vector<std::pair<const char*, float>> cases = {
      {"add", 2 + 1.1f + 2.1f}, {"mul", 2 * 1.1f * 2.1f}, {"max", 2.1f}, {"min", 1.1f}};
  for (const auto& [reduction, expected] : cases) {
    DYNAMIC_SECTION("reduction " << reduction) {
      auto out = run_op("ScatterElements", {data, twice, updates},
                        {{"axis", int64_t{1}}, {"reduction", std::string(reduction)}});
      REQUIRE(out.is_ok());
      CHECK(out.value()[0].f32() == std::vector<float>{1, expected, 3, 4, 5});
    }
  }
}

TEST_CASE("ScatterElements along axis 0 of int data (ONNX's example)", "[ops][gather_scatter]") {
  auto out = run_op("ScatterElements",
                    {HostTensor::i64({3, 3}, std::vector<int64_t>(9, 0)), HostTensor::i64({2, 3}, {1, 0, 2, 0, 2, 1}),
                     HostTensor::i64({2, 3}, {10, 11, 12, 20, 21, 22})},
                    {});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].values<int64_t>() == std::vector<int64_t>{20, 11, 0, 10, 0, 22, 0, 21, 12});
}

TEST_CASE("gather_scatter shape inference and errors", "[ops][gather_scatter][errors]") {
  auto shape = infer("GatherElements", {f32({3, 4}), TensorType{DType::kI64, {2, 6}}}, {{"axis", int64_t{1}}});
  REQUIRE(shape.is_ok());
  CHECK(shape.value()[0].shape == Shape{2, 6});
  CHECK_FALSE(infer("GatherElements", {f32({3, 4}), TensorType{DType::kI64, {4}}}, {}).is_ok());          // rank
  CHECK_FALSE(infer("GatherElements", {f32({3, 4}), TensorType{DType::kI64, {2, 5}}}, {}).is_ok());       // 5 > 4
  CHECK_FALSE(infer("GatherElements", {f32({3, 4}), f32({2, 4})}, {}).is_ok());                           // float indices
  CHECK_FALSE(infer("GatherElements", {f32({3, 4}), TensorType{DType::kI64, {2, 4}}}, {{"axis", int64_t{2}}}).is_ok());
  const TensorType idx{DType::kI64, {2, 4}};
  CHECK_FALSE(infer("ScatterElements", {f32({3, 4}), idx, f32({2, 3})}, {}).is_ok());  // updates != indices
  auto bad = infer("ScatterElements", {f32({3, 4}), idx, f32({2, 4})}, {{"reduction", std::string("mean")}});
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message().find("reduction") != std::string::npos);
  CHECK_FALSE(infer("ScatterElements", {TensorType{DType::kU8, {3, 4}}, idx, TensorType{DType::kU8, {2, 4}}},
                    {{"reduction", std::string("add")}})
                  .is_ok());

  auto out_of_range = run_op("GatherElements", {HostTensor::f32({2, 2}, {1, 2, 3, 4}), HostTensor::i64({1, 2}, {0, 2})});
  REQUIRE_FALSE(out_of_range.is_ok());
  CHECK(out_of_range.status().message().find("index 2") != std::string::npos);
}

TEST_CASE("GatherND takes the slices index tuples address (ONNX's examples)", "[ops][gather_scatter]") {
  const HostTensor data = HostTensor::i32({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  auto rows = run_op("GatherND", {data, HostTensor::i64({2, 1, 2}, {0, 1, 1, 0})});
  REQUIRE(rows.is_ok());
  CHECK(rows.value()[0].shape == Shape{2, 1, 2});
  CHECK(rows.value()[0].values<int32_t>() == std::vector<int32_t>{2, 3, 4, 5});
  // batch_dims 1: batch b reads data[b][indices[b]] (-1 counts from the end).
  auto batched = run_op("GatherND", {data, HostTensor::i64({2, 1}, {1, -2})}, {{"batch_dims", int64_t{1}}});
  REQUIRE(batched.is_ok());
  CHECK(batched.value()[0].shape == Shape{2, 2});
  CHECK(batched.value()[0].values<int32_t>() == std::vector<int32_t>{2, 3, 4, 5});
}

TEST_CASE("ScatterND writes or reduces whole slices (ONNX's examples)", "[ops][gather_scatter]") {
  const HostTensor data = HostTensor::f32({8}, {1, 2, 3, 4, 5, 6, 7, 8});
  const HostTensor indices = HostTensor::i64({4, 1}, {4, 3, 1, 7});
  const HostTensor updates = HostTensor::f32({4}, {9, 10, 11, 12});
  auto none = run_op("ScatterND", {data, indices, updates});
  REQUIRE(none.is_ok());
  CHECK(none.value()[0].f32() == std::vector<float>{1, 11, 3, 10, 9, 6, 7, 12});
  auto mul = run_op("ScatterND", {data, HostTensor::i64({2, 1}, {1, 1}), HostTensor::f32({2}, {2, 3})},
                    {{"reduction", std::string("mul")}});
  REQUIRE(mul.is_ok());
  CHECK(mul.value()[0].f32() == std::vector<float>{1, 12, 3, 4, 5, 6, 7, 8});
  // A row slice of a matrix.
  auto rows = run_op("ScatterND", {HostTensor::f32({2, 2}, {1, 2, 3, 4}), HostTensor::i64({1, 1}, {1}),
                                   HostTensor::f32({1, 2}, {7, 8})});
  REQUIRE(rows.is_ok());
  CHECK(rows.value()[0].f32() == std::vector<float>{1, 2, 7, 8});
  CHECK_FALSE(infer("ScatterND", {f32({2, 2}), TensorType{DType::kI64, {1, 1}}, f32({2})}, {}).is_ok());
  // batch_dims 1 (pock's): batch b writes into data[b] at indices[b].
  auto batched = run_op("ScatterND", {HostTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6}), HostTensor::i64({2, 1}, {2, 0}),
                                      HostTensor::f32({2}, {7, 8})},
                        {{"batch_dims", int64_t{1}}});
  REQUIRE(batched.is_ok());
  CHECK(batched.value()[0].f32() == std::vector<float>{1, 2, 7, 8, 5, 6});
  CHECK_FALSE(infer("ScatterND", {f32({2, 3}), TensorType{DType::kI64, {2, 1}}, f32({2, 3})}, {{"batch_dims", int64_t{1}}}).is_ok());
  CHECK_FALSE(infer("GatherND", {f32({2, 2}), TensorType{DType::kI64, {1, 3}}}, {}).is_ok());
}

namespace {

const char* const kReductions[] = {"none", "add", "mul", "max", "min"};

// Random indices into an axis of length `dim`, negative ones included; repeats are likely.
Operand random_indices(std::mt19937& gen, Shape shape, int64_t dim) {
  std::vector<int64_t> v(static_cast<size_t>(numel(shape)));
  for (int64_t& i : v) i = std::uniform_int_distribution<int64_t>(-dim, dim - 1)(gen);
  return int64s(std::move(shape), std::move(v));
}

// indices for an element op on `data` along `axis`: any length along it, at most data's elsewhere.
Shape element_indices_shape(std::mt19937& gen, const Shape& data, int axis) {
  Shape s = data;
  for (size_t d = 0; d < s.size(); ++d) s[d] = static_cast<int>(d) == axis ? random_dim(gen, 1, 6) : random_dim(gen, 1, data[d]);
  return s;
}

}  // namespace

TEST_CASE("cpu GatherElements and ScatterElements match ref on random shapes, axes and reductions",
          "[ops][cpu][gather_scatter]") {
  std::mt19937 gen(23);
  uint32_t seed = 500;
  for (int rank = 1; rank <= 4; ++rank) {
    for (int trial = 0; trial < 3; ++trial) {
      const Shape data = random_shape(gen, rank, 1, 6);
      const int axis = static_cast<int>(random_dim(gen, 0, rank - 1));
      const int64_t attr_axis = trial == 1 ? axis - rank : axis;  // negative axes too
      const Shape idx = element_indices_shape(gen, data, axis);
      INFO("rank " << rank << " axis " << attr_axis);
      check_against_ref("cpu", {"GatherElements", {input(data, ++seed), random_indices(gen, idx, data[static_cast<size_t>(axis)])},
                                {{"axis", attr_axis}}});
      for (const char* reduction : kReductions) {
        check_against_ref("cpu", {"ScatterElements",
                                  {input(data, ++seed), random_indices(gen, idx, data[static_cast<size_t>(axis)]), input(idx, ++seed)},
                                  {{"axis", attr_axis}, {"reduction", std::string(reduction)}}});
      }
    }
  }
  // Long lines along an inner axis and many of them, split over threads.
  const Shape big{3, 50, 70};
  const Shape big_idx{3, 80, 70};
  check_against_ref("cpu", {"GatherElements", {input(big, ++seed), random_indices(gen, big_idx, 50)}, {{"axis", int64_t{1}}}});
  check_against_ref("cpu", {"ScatterElements", {input(big, ++seed), random_indices(gen, big_idx, 50), input(big_idx, ++seed)},
                            {{"axis", int64_t{1}}, {"reduction", std::string("add")}}});
}

TEST_CASE("cpu GatherND and ScatterND match ref on random shapes, batch_dims and reductions", "[ops][cpu][gather_scatter]") {
  std::mt19937 gen(29);
  uint32_t seed = 700;
  for (int rank = 1; rank <= 4; ++rank) {
    for (int trial = 0; trial < 3; ++trial) {
      const Shape data = random_shape(gen, rank, 1, 5);
      const int batch = static_cast<int>(random_dim(gen, 0, rank - 1));
      const int64_t k = random_dim(gen, 1, rank - batch);
      Shape idx(data.begin(), data.begin() + batch);
      for (int64_t extra = random_dim(gen, 0, 2); extra > 0; --extra) idx.push_back(random_dim(gen, 1, 4));
      idx.push_back(k);
      std::vector<int64_t> tuples(static_cast<size_t>(numel(idx)));
      for (size_t e = 0; e < tuples.size(); ++e) {
        const int64_t dim = data[static_cast<size_t>(batch) + e % static_cast<size_t>(k)];
        tuples[e] = std::uniform_int_distribution<int64_t>(-dim, dim - 1)(gen);
      }
      INFO("data " << shape_str(data) << " indices " << shape_str(idx) << " batch_dims " << batch);
      check_against_ref("cpu", {"GatherND", {input(data, ++seed), int64s(idx, tuples)}, {{"batch_dims", int64_t{batch}}}});
      // batch_dims on ScatterND is pock's own (GatherND's gradient scatters with it).
      Shape updates(idx.begin(), idx.end() - 1);
      updates.insert(updates.end(), data.begin() + batch + k, data.end());
      for (const char* reduction : kReductions) {
        check_against_ref("cpu", {"ScatterND", {input(data, ++seed), int64s(idx, tuples), input(updates, ++seed)},
                                  {{"reduction", std::string(reduction)}, {"batch_dims", int64_t{batch}}}});
      }
    }
  }
  // ScatterNDGrad (mul, max, min) on random tuples, repeats likely.
  for (int trial = 0; trial < 4; ++trial) {
    const Shape data = random_shape(gen, 3, 1, 5);
    const int64_t k = random_dim(gen, 1, 3);
    const Shape idx{random_dim(gen, 1, 6), k};
    std::vector<int64_t> tuples(static_cast<size_t>(numel(idx)));
    for (size_t e = 0; e < tuples.size(); ++e) {
      const int64_t dim = data[e % static_cast<size_t>(k)];
      tuples[e] = std::uniform_int_distribution<int64_t>(-dim, dim - 1)(gen);
    }
    Shape updates{idx[0]};
    updates.insert(updates.end(), data.begin() + k, data.end());
    for (const char* reduction : {"mul", "max", "min"}) {
      INFO("ScatterNDGrad " << reduction << " data " << shape_str(data) << " indices " << shape_str(idx));
      check_against_ref("cpu", {"ScatterNDGrad", {input(data, ++seed), input(data, ++seed), int64s(idx, tuples), input(updates, ++seed)},
                                {{"reduction", std::string(reduction)}}});
    }
  }
  // Wide slices, split over threads.
  check_against_ref("cpu", {"ScatterND", {input({6, 3000}, ++seed), int64s({5, 1}, {2, -1, 2, 0, 5}), input({5, 3000}, ++seed)},
                            {{"reduction", std::string("add")}}});
  check_against_ref("cpu", {"GatherND", {input({6, 3000}, ++seed), int64s({5, 1}, {2, -1, 2, 0, 5})}});
  for (const char* reduction : {"mul", "max"}) {
    check_against_ref("cpu", {"ScatterNDGrad", {input({6, 3000}, ++seed), input({6, 3000}, ++seed), int64s({5, 1}, {2, -1, 2, 0, 5}),
                                                input({5, 3000}, ++seed)},
                              {{"reduction", std::string(reduction)}}},
                      "", 4);
  }
}

TEST_CASE("cpu gather_scatter kernels refuse an index out of range with an error naming it", "[ops][cpu][gather_scatter][errors]") {
  const std::vector<OpCase> cases = {
      {"GatherElements", {input({2, 3}, 1), int64s({2, 2}, {0, 1, 3, 0})}, {{"axis", int64_t{1}}}},
      {"ScatterElements", {input({2, 3}, 2), int64s({1, 2}, {-4, 0}), input({1, 2}, 3)}, {{"axis", int64_t{1}}}},
      {"GatherND", {input({2, 3}, 4), int64s({1, 2}, {1, 3})}, {}},
      {"ScatterND", {input({2, 3}, 5), int64s({1, 1}, {2}), input({1, 3}, 6)}, {}},
  };
  for (const OpCase& c : cases) {
    INFO(c.op);
    BoundCase bound = BoundCase::open(c, "cpu");
    REQUIRE(bound.backend_of(c.op) == "cpu");
    const Status s = bound.try_infer();
    REQUIRE_FALSE(s.is_ok());
    CHECK_THAT(s.message(), Catch::Contains("out of range"));
  }
}
