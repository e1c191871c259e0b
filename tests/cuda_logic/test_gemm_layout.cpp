// The row-major -> column-major mapping of the cuda GEMMs (kernels/cuda/gemm_layout.hpp): a
// naive column-major GEMM given exactly the arguments cuBLAS gets must equal ref's MatMul, for
// every combination of transposes and shapes that are not square (a swapped m/n or a wrong
// leading dimension then reads the wrong elements or out of range).
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "cuda_logic/logic_harness.hpp"
#include "kernels/cuda/gemm_layout.hpp"

using namespace pock;
using namespace pock::cuda;

namespace {

// What cublasSgemm computes, in its own terms: out = op(first) op(second), all column-major.
std::vector<float> column_major_gemm(const ColumnMajorGemm& g, const std::vector<float>& first,
                                     const std::vector<float>& second) {
  std::vector<float> out(static_cast<size_t>(g.ld_out * g.cols), 0.0f);
  for (int64_t j = 0; j < g.cols; ++j) {
    for (int64_t i = 0; i < g.rows; ++i) {
      double acc = 0.0;
      for (int64_t p = 0; p < g.depth; ++p) {
        const float f = g.transpose_first ? first.at(static_cast<size_t>(p + i * g.ld_first))
                                          : first.at(static_cast<size_t>(i + p * g.ld_first));
        const float s = g.transpose_second ? second.at(static_cast<size_t>(j + p * g.ld_second))
                                           : second.at(static_cast<size_t>(p + j * g.ld_second));
        acc += static_cast<double>(f) * s;
      }
      out[static_cast<size_t>(i + j * g.ld_out)] = static_cast<float>(acc);
    }
  }
  return out;
}


}  // namespace

TEST_CASE("the column-major arguments of a row-major GEMM give ref's MatMul", "[cuda_logic]") {
  const int64_t m = 3, n = 5, k = 7;
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      INFO("transpose_a " << ta << ", transpose_b " << tb);
      std::vector<float> a = test::random_floats(m * k, 1), b = test::random_floats(k * n, 2);
      test::BoundOp op("MatMul",
                       {test::f32(ta ? Shape{k, m} : Shape{m, k}, a), test::f32(tb ? Shape{n, k} : Shape{k, n}, b)},
                       {{"transpose_a", int64_t{ta}}, {"transpose_b", int64_t{tb}}});
      REQUIRE(op.status().is_ok());
      const std::vector<test::HostBuffer> out = op.run_ref();
      REQUIRE(out.at(0).shape == Shape{m, n});
      const std::vector<float> want = out[0].f32();
      const ColumnMajorGemm g = column_major({ta != 0, tb != 0, m, n, k});
      // Row-major C [m, n] is the column-major [n, m] result: the same bytes.
      const std::vector<float> got = column_major_gemm(g, b, a);
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        INFO("element " << i);
        CHECK(got[i] == Approx(want[i]).epsilon(1e-6).margin(1e-6));
      }
    }
  }
}
