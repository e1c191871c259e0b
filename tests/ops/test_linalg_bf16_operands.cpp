// compute "bf16" GEMMs whose operands are bf16 tensors already: the compiler's one bf16 copy of an
// activation, shared by every GEMM that reads it (src/compiler/lowering/bf16_operands.hpp). cpu
// against ref on such operands: tests/ops/test_linalg_bf16.cpp.
//   - the schema: f32 or bf16 operands, an f32 output; bf16 operands without compute "bf16", or a
//     bf16 bias, are refused naming the problem;
//   - ref on bf16 operands against naive double loops over the same values;
//   - cpu on a bf16 operand gives the very bits it gives on the f32 operand it was rounded from
//     (the copy only moves where the rounding happens);
//   - cpu's Cast f32 -> bf16 rounds to nearest even, as an independent rounding does.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "support/backend_compare.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;

namespace {

const Attrs kBf16{{"compute", std::string("bf16")}};

Attrs bf16_transposes(int64_t ta, int64_t tb) {
  return {{"compute", std::string("bf16")}, {"transpose_a", ta}, {"transpose_b", tb}};
}

HostTensor host(const Operand& o) {
  HostTensor t;
  t.dtype = o.dtype;
  t.shape = o.shape;
  t.bytes = o.dtype == DType::kBF16 ? o.bytes : HostTensor::f32(o.shape, o.values).bytes;
  return t;
}

// Round to nearest even at 8 significant bits (frexp and nearbyint, for normal numbers): not the
// rounding under test.
float bf16_by_frexp(float v) {
  int e = 0;
  const double m = std::frexp(static_cast<double>(v), &e);
  return static_cast<float>(std::ldexp(std::nearbyint(std::ldexp(m, 8)), e - 8));
}

struct ForcedIsa {
  explicit ForcedIsa(const char* isa) { setenv("POCK_BF16_ISA", isa, 1); }
  ~ForcedIsa() { unsetenv("POCK_BF16_ISA"); }
};

}  // namespace

TEST_CASE("bf16 GEMM schema: f32 or bf16 operands give an f32 output only with compute bf16", "[ops][linalg][bf16]") {
  Graph g;
  const TensorId x16 = g.add_input("x16", DType::kBF16, {4, 6});
  const TensorId x32 = g.add_input("x32", DType::kF32, {4, 6});
  const TensorId w = g.add_input("w", DType::kF32, {3, 6});
  const TensorId dy16 = g.add_input("dy16", DType::kBF16, {4, 3});
  auto y = g.add_node("Linear", {x16, w}, kBf16);
  REQUIRE(y.is_ok());
  CHECK(g.tensor(y.value()[0]).dtype == DType::kF32);
  auto dx = g.add_node("LinearInputGrad", {dy16, w}, kBf16);
  REQUIRE(dx.is_ok());
  CHECK(g.tensor(dx.value()[0]).dtype == DType::kF32);
  auto dw = g.add_node("LinearWeightGrad", {dy16, x16}, kBf16);
  REQUIRE(dw.is_ok());
  CHECK(g.tensor(dw.value()[0]).dtype == DType::kF32);
  auto both = g.add_node("MatMul", {x16, x16}, bf16_transposes(0, 1));
  REQUIRE(both.is_ok());
  CHECK(g.tensor(both.value()[0]).dtype == DType::kF32);  // both bf16: the sums are still f32

  auto plain = g.add_node("Linear", {x16, w});
  REQUIRE_FALSE(plain.is_ok());
  CHECK_THAT(plain.status().message(), Catch::Contains("bf16") && Catch::Contains("f32"));
  const TensorId bias16 = g.add_input("b16", DType::kBF16, {3});
  auto bias = g.add_node("Linear", {x32, w, bias16}, kBf16);
  REQUIRE_FALSE(bias.is_ok());
  CHECK_THAT(bias.status().message(), Catch::Contains("input 2") && Catch::Contains("f32"));
}

TEST_CASE("ref GEMMs read bf16 operands as the values they hold", "[ops][linalg][bf16]") {
  const int64_t rows = 6, n = 5, k = 40;
  const Operand x = bf16s({rows, k}, 61), w = bf16s({n, k}, 62), dy = bf16s({rows, n}, 63);
  auto y = run_op("Linear", {host(x), HostTensor::f32({n, k}, w.values)}, kBf16, {}, "ref");
  REQUIRE(y.is_ok());
  auto dx = run_op("LinearInputGrad", {host(dy), host(w)}, kBf16, {}, "ref");
  REQUIRE(dx.is_ok());
  auto dw = run_op("LinearWeightGrad", {host(dy), host(x)}, kBf16, {}, "ref");
  REQUIRE(dw.is_ok());
  auto mm = run_op("MatMul", {HostTensor::f32({rows, k}, x.values), host(w)}, bf16_transposes(0, 1), {}, "ref");
  REQUIRE(mm.is_ok());
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double want = 0.0;
      for (int64_t p = 0; p < k; ++p) want += double{x.values[i * k + p]} * w.values[j * k + p];
      CHECK(y.value()[0].f32()[i * n + j] == Approx(want).margin(1e-6));
      CHECK(mm.value()[0].f32()[i * n + j] == Approx(want).margin(1e-6));
    }
    for (int64_t j = 0; j < k; ++j) {
      double want = 0.0;
      for (int64_t p = 0; p < n; ++p) want += double{dy.values[i * n + p]} * w.values[p * k + j];
      CHECK(dx.value()[0].f32()[i * k + j] == Approx(want).margin(1e-6));
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < k; ++j) {
      double want = 0.0;
      for (int64_t m = 0; m < rows; ++m) want += double{dy.values[m * n + i]} * x.values[m * k + j];
      CHECK(dw.value()[0].f32()[i * k + j] == Approx(want).margin(1e-6));
    }
  }
}

#ifdef POCK_HAVE_OPENBLAS
namespace {

// cpu's result on f32 operands, and on the bf16 copies of the same operands: equal bits.
void check_same_bits_as_f32_operands() {
  const int64_t rows = 33, n = 17, k = 50;
  const auto x = random_floats(static_cast<size_t>(rows * k), 81), w = random_floats(static_cast<size_t>(n * k), 82);
  const auto dy = random_floats(static_cast<size_t>(rows * n), 83);
  auto cast = [](const std::vector<float>& v, Shape shape) {
    auto out = run_op("Cast", {HostTensor::f32(std::move(shape), v)}, {{"to", std::string("bf16")}}, {}, "cpu");
    REQUIRE(out.is_ok());
    return out.value()[0];
  };
  const HostTensor x16 = cast(x, {rows, k}), dy16 = cast(dy, {rows, n});
  const HostTensor x32 = HostTensor::f32({rows, k}, x), w32 = HostTensor::f32({n, k}, w), dy32 = HostTensor::f32({rows, n}, dy);
  auto same = [](const char* op, const std::vector<HostTensor>& f32_operands, const std::vector<HostTensor>& bf16_operands) {
    INFO(op);
    auto from_f32 = run_op(op, f32_operands, kBf16, {}, "cpu");
    auto from_bf16 = run_op(op, bf16_operands, kBf16, {}, "cpu");
    REQUIRE(from_f32.is_ok());
    REQUIRE(from_bf16.is_ok());
    CHECK(from_f32.value()[0].bytes == from_bf16.value()[0].bytes);
  };
  same("Linear", {x32, w32}, {x16, w32});
  same("LinearInputGrad", {dy32, w32}, {dy16, w32});
  same("LinearWeightGrad", {dy32, x32}, {dy16, x16});
}

}  // namespace

TEST_CASE("cpu GEMMs give the same bits on bf16 operands as on the f32 ones they round, on both ways", "[ops][cpu][bf16]") {
  check_same_bits_as_f32_operands();
  ForcedIsa fallback("fp32");
  check_same_bits_as_f32_operands();
}
#endif

TEST_CASE("cpu Cast to bf16 rounds to the nearest bf16, ties to even", "[ops][elementwise][bf16]") {
  std::vector<float> v = random_floats(1000, 91, -50.0f, 50.0f);
  // Ties and near-ties next to 1.0 (bf16's neighbours there: 1 - 2^-8 and 1 + 2^-7).
  for (float t : {1.0f + 0x1p-8f, 1.0f + 0x3p-8f, 1.0f + 0x1p-9f, -(1.0f + 0x1p-8f + 0x1p-20f)}) v.push_back(t);
  auto out = run_op("Cast", {HostTensor::f32({static_cast<int64_t>(v.size())}, v)}, {{"to", std::string("bf16")}}, {}, "cpu");
  REQUIRE(out.is_ok());
  const std::vector<uint16_t> bits = out.value()[0].values<uint16_t>();
  REQUIRE(bits.size() == v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const uint32_t wide = uint32_t{bits[i]} << 16;
    float got = 0.0f;
    std::memcpy(&got, &wide, sizeof got);
    INFO(i << ": " << v[i]);
    REQUIRE(got == bf16_by_frexp(v[i]));
  }
}
