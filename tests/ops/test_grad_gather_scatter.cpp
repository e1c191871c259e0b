// gather_scatter family gradients, end to end (autodiff, compile, run) against finite differences
// (support/grad_check.hpp).
#include <catch2/catch.hpp>

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
