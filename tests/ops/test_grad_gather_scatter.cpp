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
  SECTION("mul, data only, repeated tuples") {
    CHECK(check_op_gradients("ScatterND", {random_tensor({4, 3}, 13), repeated, random_tensor({4}, 14)},
                             Attrs{{"reduction", std::string("mul")}}, {true, false, false}));
  }
}

TEST_CASE("ScatterND refuses gradients it has no rule for, naming the reduction", "[ops][grad][gather_scatter][errors]") {
  const HostTensor data = random_tensor({4, 3}, 15), indices = HostTensor::i64({2, 1}, {1, 3}), updates = random_tensor({2, 3}, 16);
  for (const char* reduction : {"mul", "max", "min"}) {
    DYNAMIC_SECTION("reduction " << reduction) {
      const GradCheckReport r = check_op_gradients("ScatterND", {data, indices, updates},
                                                   Attrs{{"reduction", std::string(reduction)}}, {true, false, true});
      CHECK_FALSE(r.ok);
      CHECK_THAT(r.message, Catch::Contains("ScatterND with reduction '" + std::string(reduction) + "' has no gradient rule"));
    }
  }
}
