// Sequence family gradients: the GatherGrad and DropoutGrad kernels against loops written here,
// and every rule end to end (autodiff, compile, run) against finite differences
// (support/grad_check.hpp).
#include <catch2/catch.hpp>

#include "support/expect_close.hpp"
#include "support/grad_check.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;
using Ints = std::vector<int64_t>;

TEST_CASE("GatherGrad adds rows at their indices; duplicates accumulate", "[ops][grad][sequence]") {
  // An embedding of 4 rows of 2: token 1 appears twice, token -1 means row 3.
  const HostTensor dy = HostTensor::f32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  const HostTensor ids = HostTensor::i64({2, 2}, {1, 3, 1, -1});
  auto out = run_op("GatherGrad", {dy, ids}, Attrs{{"axis", int64_t{0}}, {"shape", Ints{4, 2}}});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].f32() == std::vector<float>{0, 0, 1 + 5, 2 + 6, 0, 0, 3 + 7, 4 + 8});
}

TEST_CASE("GatherGrad along an inner axis matches a scatter written here", "[ops][grad][sequence]") {
  const Shape data{2, 5, 3};
  const std::vector<int32_t> idx{4, 0, 4};
  const Shape dy_shape{2, 3, 3};
  const std::vector<float> dy = random_floats(numel(dy_shape), 3);
  std::vector<double> want(static_cast<size_t>(numel(data)), 0.0);
  for (int64_t o = 0; o < 2; ++o)
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t k = 0; k < 3; ++k)
        want[static_cast<size_t>((o * 5 + idx[i]) * 3 + k)] += dy[static_cast<size_t>((o * 3 + i) * 3 + k)];
  auto out = run_op("GatherGrad", {HostTensor::f32(dy_shape, dy), HostTensor::i32({3}, idx)},
                    Attrs{{"axis", int64_t{1}}, {"shape", data}});
  REQUIRE(out.is_ok());
  CHECK(mismatches(out.value()[0].f32(), want) == "");
}

TEST_CASE("GatherGrad reports an index out of range", "[ops][grad][sequence]") {
  auto out = run_op("GatherGrad", {HostTensor::f32({1, 2}, {1, 1}), HostTensor::i64({1}, {4})},
                    Attrs{{"axis", int64_t{0}}, {"shape", Ints{4, 2}}});
  CHECK_FALSE(out.is_ok());
}

TEST_CASE("DropoutGrad keeps the masked-in elements, scaled", "[ops][grad][sequence]") {
  const HostTensor dy = HostTensor::f32({4}, {1, 2, 3, 4});
  const HostTensor mask = HostTensor::make<uint8_t>(DType::kU8, {4}, {1, 0, 0, 1});
  auto out = run_op("DropoutGrad", {dy, mask}, Attrs{{"ratio", 0.75}});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].f32() == std::vector<float>{4, 0, 0, 16});
}

namespace {

HostTensor random_tensor(Shape shape, uint32_t seed) {
  return HostTensor::f32(shape, random_floats(numel(shape), seed));
}

}  // namespace

TEST_CASE("Gather gradients match finite differences", "[ops][grad][sequence][fd]") {
  SECTION("embedding rows with repeated tokens") {
    CHECK(check_op_gradients("Gather", {random_tensor({5, 3}, 1), HostTensor::i64({2, 3}, {0, 4, 4, 2, -1, 0})},
                             Attrs{{"axis", int64_t{0}}}, {true, false}));
  }
  SECTION("inner axis, i32 indices") {
    CHECK(check_op_gradients("Gather", {random_tensor({2, 4, 3}, 2), HostTensor::i32({3}, {3, 3, 1})},
                             Attrs{{"axis", int64_t{-2}}}, {true, false}));
  }
}

TEST_CASE("Rope and CausalMask gradients match finite differences", "[ops][grad][sequence][fd]") {
  for (int64_t interleaved : {0, 1}) {
    DYNAMIC_SECTION("Rope interleaved=" << interleaved) {
      CHECK(check_op_gradients("Rope", {random_tensor({2, 5, 6}, 11)},
                               Attrs{{"interleaved", interleaved}, {"theta", 100.0}}, {true}));
    }
  }
  SECTION("Rope inverse") {
    CHECK(check_op_gradients("Rope", {random_tensor({3, 4}, 12)}, Attrs{{"inverse", int64_t{1}}}, {true}));
  }
  SECTION("CausalMask with more keys than queries") {
    // A finite fill keeps the loss finite; the gradient does not depend on it.
    CHECK(check_op_gradients("CausalMask", {random_tensor({2, 3, 5}, 13)}, Attrs{{"value", -2.0}}, {true}));
  }
}

TEST_CASE("DropoutTrain gradient matches finite differences", "[ops][grad][sequence][fd]") {
  CHECK(check_op_gradients("DropoutTrain", {random_tensor({4, 8}, 21), HostTensor::i64({1}, {3})},
                           Attrs{{"ratio", 0.3}, {"seed", int64_t{5}}}, {true, false}));
}
