// determinant family: Det of single and batched matrices (values worked out by hand: cofactor
// expansion), singular and pivoting cases, and its errors.
#include <catch2/catch.hpp>

#include "support/infer_types.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;

TEST_CASE("Det of single and batched matrices", "[ops][determinant]") {
  auto two = run_op("Det", {HostTensor::f32({2, 2}, {0, 1, 2, 3})});  // ONNX's example: needs a row swap
  REQUIRE(two.is_ok());
  CHECK(two.value()[0].shape == Shape{});
  CHECK(two.value()[0].f32()[0] == Approx(-2.0f));

  // 2*(0*1-2*1) - 0 + 1*(1*1-0*3) = -3; a singular matrix (rows 1 and 2 proportional) gives 0;
  // diag(1, 2, 3) with rows 0 and 2 swapped gives -6.
  auto batch = run_op("Det", {HostTensor::f32({3, 3, 3}, {2, 0, 1, 1, 0, 2, 3, 1, 1,  //
                                                          1, 2, 3, 2, 4, 6, 0, 1, 5,  //
                                                          0, 0, 3, 0, 2, 0, 1, 0, 0})});
  REQUIRE(batch.is_ok());
  CHECK(batch.value()[0].shape == Shape{3});
  const std::vector<float> d = batch.value()[0].f32();
  CHECK(d[0] == Approx(-3.0f));
  CHECK(d[1] == Approx(0.0f).margin(1e-6));
  CHECK(d[2] == Approx(-6.0f));
}

TEST_CASE("determinant shape inference and errors", "[ops][determinant][errors]") {
  auto shape = infer("Det", {f32({4, 2, 3, 3})}, {});
  REQUIRE(shape.is_ok());
  CHECK(shape.value()[0].shape == Shape{4, 2});
  CHECK_FALSE(infer("Det", {f32({3, 2})}, {}).is_ok());  // not square
  CHECK_FALSE(infer("Det", {f32({3})}, {}).is_ok());     // not a matrix
  CHECK_FALSE(infer("Det", {TensorType{DType::kI64, {2, 2}}}, {}).is_ok());
}
