#include <catch2/catch.hpp>

#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;

TEST_CASE("Mul broadcasts a row over a matrix", "[ops][elementwise]") {
  auto out = run_op("Mul", {HostTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6}), HostTensor::f32({3}, {10, 0, -1})});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].f32() == std::vector<float>{10, 0, -3, 40, 0, -6});
}
