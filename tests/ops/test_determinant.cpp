// determinant family: Det of single and batched matrices (values worked out by hand: cofactor
// expansion), singular and pivoting cases, and its errors; the cpu Det and DetGrad against ref on
// random orders and batches, singular matrices among them.
#include <catch2/catch.hpp>

#include <random>

#include "support/backend_compare.hpp"
#include "support/expect_close.hpp"
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

TEST_CASE("cpu Det and DetGrad match ref on random orders and batches", "[ops][cpu][determinant]") {
  std::mt19937 gen(43);
  uint32_t seed = 300;
  for (int64_t n = 1; n <= 7; ++n) {
    for (int batch_rank = 0; batch_rank <= 2; ++batch_rank) {
      Shape batch = random_shape(gen, batch_rank, 1, 4);
      Shape x = batch;
      x.push_back(n);
      x.push_back(n);
      INFO("x " << shape_str(x));
      check_against_ref("cpu", {"Det", {input(x, ++seed)}, {}});
      check_against_ref("cpu", {"DetGrad", {input(batch, ++seed), input(x, ++seed)}, {}});
    }
  }
  // Singular matrices (a repeated row; rank n - 2, where every cofactor is 0): DetGrad takes the
  // cofactors from the minors. With 0, 1, 2 and 4 exact in f32, the pivots are exact zeros.
  const std::vector<float> repeated_row = {1, 2, 0, 4, 0, 1, 1, 2, 0};   // rows 0 and 2 equal
  const std::vector<float> rank_one = {1, 2, 4, 2, 4, 8, 0.5f, 1, 2};   // every row a multiple of the first
  for (const auto& m : {repeated_row, rank_one}) {
    check_against_ref("cpu", {"Det", {values({3, 3}, m)}, {}});
    check_against_ref("cpu", {"DetGrad", {values({}, {1.5f}), values({3, 3}, m)}, {}});
  }
  // Many matrices, split over threads.
  check_against_ref("cpu", {"Det", {input({64, 9, 5, 5}, ++seed)}, {}}, "", 4);
  check_against_ref("cpu", {"DetGrad", {input({64, 9}, ++seed), input({64, 9, 5, 5}, ++seed)}, {}}, "", 4);
  check_against_ref("cpu", {"DetGrad", {input({6}, ++seed), input({6, 40, 40}, ++seed, 0.5f, 1.5f)}, {}}, "", 4);
}
