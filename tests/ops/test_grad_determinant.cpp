// determinant family gradient, end to end (autodiff, compile, run) against finite differences
// (support/grad_check.hpp): invertible and singular matrices (Det is a polynomial, smooth in both).
#include <catch2/catch.hpp>

#include "support/grad_check.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;

TEST_CASE("Det gradients match finite differences", "[ops][grad][determinant][fd]") {
  CHECK(check_op_gradients("Det", {HostTensor::f32({2, 3, 3}, random_floats(18, 5))}, Attrs{}, {true}));
  SECTION("singular matrices") {
    CHECK(check_op_gradients("Det", {HostTensor::f32({2, 2}, {1, 2, 2, 4})}, Attrs{}, {true}));
    CHECK(check_op_gradients("Det", {HostTensor::f32({3, 3}, {1, 2, 3, 2, 4, 6, 0, 1, 5})}, Attrs{}, {true}));
  }
}
