// gather_scatter family gradients, end to end (autodiff, compile, run) against finite differences
// (support/grad_check.hpp).
#include <catch2/catch.hpp>

#include <string>

#include "support/grad_check.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;

namespace {

HostTensor random_tensor(Shape shape, uint32_t seed) { return HostTensor::f32(shape, random_floats(numel(shape), seed)); }

}  // namespace

TEST_CASE("GatherElements gradients match finite differences", "[ops][grad][gather_scatter][fd]") {
  // Repeated indices: their gradients accumulate.
  CHECK(check_op_gradients("GatherElements", {random_tensor({3, 4}, 1), HostTensor::i64({2, 4}, {0, 2, 2, -1, 0, 0, 1, 2})},
                           Attrs{{"axis", int64_t{0}}}, {true, false}));
  CHECK(check_op_gradients("GatherElements", {random_tensor({2, 3, 4}, 2), HostTensor::i32({2, 3, 2}, {3, 0, 1, 1, 2, -4, 0, 0, 3, 2, 1, 1})},
                           Attrs{{"axis", int64_t{-1}}}, {true, false}));
}

TEST_CASE("ScatterElements gradients match finite differences", "[ops][grad][gather_scatter][fd]") {
  const HostTensor indices = HostTensor::i64({2, 3}, {1, 0, 2, 0, 2, 1});  // distinct per column
  for (const char* reduction : {"none", "add"}) {
    DYNAMIC_SECTION("reduction " << reduction) {
      CHECK(check_op_gradients("ScatterElements", {random_tensor({3, 3}, 3), indices, random_tensor({2, 3}, 4)},
                               Attrs{{"axis", int64_t{0}}, {"reduction", std::string(reduction)}}, {true, false, true}));
    }
  }
  SECTION("add with repeated indices") {
    CHECK(check_op_gradients("ScatterElements",
                             {random_tensor({2, 4}, 5), HostTensor::i64({2, 3}, {1, 1, 3, 0, 0, 0}), random_tensor({2, 3}, 6)},
                             Attrs{{"axis", int64_t{1}}, {"reduction", std::string("add")}}, {true, false, true}));
  }
}

TEST_CASE("GatherND gradients match finite differences", "[ops][grad][gather_scatter][fd]") {
  SECTION("repeated tuples accumulate") {
    CHECK(check_op_gradients("GatherND", {random_tensor({3, 4, 2}, 7), HostTensor::i64({2, 2, 2}, {0, 1, 2, -1, 0, 1, 0, 1})},
                             Attrs{}, {true, false}));
  }
  SECTION("batch_dims 1, whole rows") {
    CHECK(check_op_gradients("GatherND", {random_tensor({2, 3, 4}, 8), HostTensor::i32({2, 3, 1}, {2, 2, 0, 1, -1, 1})},
                             Attrs{{"batch_dims", int64_t{1}}}, {true, false}));
  }
}

TEST_CASE("ScatterND gradients match finite differences", "[ops][grad][gather_scatter][fd]") {
  const HostTensor distinct = HostTensor::i64({3, 1}, {2, 0, -1});  // rows 2, 0, 3 of a [4, 3] matrix
  for (const char* reduction : {"none", "add"}) {
    DYNAMIC_SECTION("reduction " << reduction) {
      CHECK(check_op_gradients("ScatterND", {random_tensor({4, 3}, 9), distinct, random_tensor({3, 3}, 10)},
                               Attrs{{"reduction", std::string(reduction)}}, {true, false, true}));
    }
  }
  const HostTensor repeated = HostTensor::i64({4, 2}, {1, 2, 0, 0, 1, 2, 3, 1});  // element (1, 2) twice
  SECTION("add with repeated tuples") {
    CHECK(check_op_gradients("ScatterND", {random_tensor({4, 3}, 11), repeated, random_tensor({4}, 12)},
                             Attrs{{"reduction", std::string("add")}}, {true, false, true}));
  }
}

namespace {

// n values a step of 0.1 apart in a scrambled order, starting at `low`: no two within 2h of each
// other, so max and min keep their winners under the finite differences' perturbations.
HostTensor spread(Shape shape, float low) {
  const auto n = static_cast<size_t>(numel(shape));
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = low + 0.1f * static_cast<float>((i * 7) % n);
  return HostTensor::f32(shape, v);
}

}  // namespace

TEST_CASE("ScatterND mul, max and min gradients match finite differences", "[ops][grad][gather_scatter][fd]") {
  const HostTensor repeated = HostTensor::i64({4, 2}, {1, 2, 0, 0, 1, 2, 3, 1});  // element (1, 2) twice
  SECTION("mul, repeated tuples and a zero factor") {
    CHECK(check_op_gradients("ScatterND", {random_tensor({4, 3}, 13), repeated, HostTensor::f32({4}, {0.7f, -1.3f, 0.0f, 0.4f})},
                             Attrs{{"reduction", std::string("mul")}}, {true, false, true}));
  }
  for (const char* reduction : {"max", "min"}) {
    DYNAMIC_SECTION(reduction << ", repeated tuples") {
      // Interleaved values: some updates win over data, some lose, one repeated tuple's second one wins.
      CHECK(check_op_gradients("ScatterND", {spread({4, 3}, -0.6f), repeated, spread({4}, -0.55f)},
                               Attrs{{"reduction", std::string(reduction)}}, {true, false, true}));
    }
    DYNAMIC_SECTION(reduction << ", whole rows") {
      CHECK(check_op_gradients("ScatterND", {spread({4, 3}, -0.6f), HostTensor::i64({3, 1}, {2, 0, 2}), spread({3, 3}, -0.45f)},
                               Attrs{{"reduction", std::string(reduction)}}, {true, false, true}));
    }
  }
}
