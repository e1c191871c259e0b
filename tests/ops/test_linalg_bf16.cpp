// compute "bf16" (recipe precision "bf16"): the GEMMs of MatMul, Linear, LinearInputGrad and
// LinearWeightGrad round both operands to bf16 and sum in f32.
//   - the rounding itself on hand-worked values;
//   - ref against naive double loops over operands rounded by this file's own rounding (frexp and
//     nearbyint, not kernels/bf16_round.h);
//   - cpu against ref, on both of its ways (oneDNN on AVX512-BF16, and the f32 rounding fallback
//     that POCK_BF16_ISA=fp32 forces);
//   - gradients against finite differences, within bf16's precision;
//   - the recipe key and what the compiler marks.
#include <catch2/catch.hpp>

#include <cfenv>
#include <cmath>
#include <cstdlib>

#include "kernels/bf16_round.h"
#include "support/backward_cases.hpp"
#include "support/grad_check.hpp"
#include "support/training_program.hpp"

using namespace pock;
using namespace pock::test;

namespace {

// Round to nearest even at 8 significant bits (bf16's), for normal numbers: an implementation
// independent of the one under test.
float bf16_by_frexp(float v) {
  int e = 0;
  const double m = std::frexp(static_cast<double>(v), &e);  // v = m 2^e, 0.5 <= |m| < 1
  return static_cast<float>(std::ldexp(std::nearbyint(std::ldexp(m, 8)), e - 8));
}

std::vector<float> rounded(std::vector<float> v) {
  for (float& x : v) x = bf16_by_frexp(x);
  return v;
}

const Attrs kBf16{{"compute", std::string("bf16")}};

Attrs bf16_transposes(int64_t ta, int64_t tb) {
  return {{"compute", std::string("bf16")}, {"transpose_a", ta}, {"transpose_b", tb}};
}

// y[i, j] = sum_p a(i, p) b(p, j) in double, a [M, K] (or [K, M] when ta), b [K, N] (or [N, K]).
std::vector<double> naive(const std::vector<float>& a, const std::vector<float>& b, int64_t m, int64_t n, int64_t k,
                          bool ta, bool tb) {
  std::vector<double> y;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0.0;
      for (int64_t p = 0; p < k; ++p) {
        acc += static_cast<double>(ta ? a[p * m + i] : a[i * k + p]) * (tb ? b[j * k + p] : b[p * n + j]);
      }
      y.push_back(acc);
    }
  }
  return y;
}

// Largest |got - want| relative to (|want| + 1).
double worst(const std::vector<float>& got, const std::vector<double>& want) {
  double w = 0.0;
  for (size_t i = 0; i < got.size(); ++i) w = std::max(w, std::fabs(got[i] - want[i]) / (std::fabs(want[i]) + 1.0));
  return w;
}

// Sets POCK_BF16_ISA for the scope (the cpu kernels read it when an engine prepares them).
struct ForcedIsa {
  explicit ForcedIsa(const char* isa) { setenv("POCK_BF16_ISA", isa, 1); }
  ~ForcedIsa() { unsetenv("POCK_BF16_ISA"); }
};

}  // namespace

TEST_CASE("bf16 rounding: nearest, ties to even, NaN and Inf kept", "[ops][linalg][bf16]") {
  // bf16 keeps 8 significant bits: next to 1.0 are 1 - 2^-8 and 1 + 2^-7.
  CHECK(pock_round_bf16(1.0f + 0x1p-9f) == 1.0f);               // below half an ulp
  CHECK(pock_round_bf16(1.0f + 0x1p-8f) == 1.0f);               // a tie: to the even 1.0
  CHECK(pock_round_bf16(1.0f + 0x3p-8f) == 1.0f + 0x1p-6f);     // a tie: to the even 1 + 2^-6
  CHECK(pock_round_bf16(1.0f + 0x1p-8f + 0x1p-20f) == 1.0f + 0x1p-7f);  // above half: up
  CHECK(pock_round_bf16(-3.0f) == -3.0f);
  CHECK(pock_round_bf16(3.4e38f) == INFINITY);  // past half an ulp above the largest bf16, 3.3895e38
  CHECK(std::isinf(pock_round_bf16(-INFINITY)));
  CHECK(std::isnan(pock_round_bf16(NAN)));
  const auto v = random_floats(1000, 3, -50.0f, 50.0f);
  for (float x : v) REQUIRE(pock_round_bf16(x) == bf16_by_frexp(x));
}

TEST_CASE("ref MatMul with compute bf16 is the f32 product of the rounded operands", "[ops][linalg][bf16]") {
  const int64_t m = 5, n = 7, k = 33;
  for (int64_t ta : {0, 1}) {
    for (int64_t tb : {0, 1}) {
      const Shape sa = ta ? Shape{k, m} : Shape{m, k}, sb = tb ? Shape{n, k} : Shape{k, n};
      const auto a = random_floats(static_cast<size_t>(m * k), 10 + ta), b = random_floats(static_cast<size_t>(k * n), 20 + tb);
      auto out = run_op("MatMul", {HostTensor::f32(sa, a), HostTensor::f32(sb, b)}, bf16_transposes(ta, tb), {}, "ref");
      REQUIRE(out.is_ok());
      INFO("ta " << ta << " tb " << tb);
      CHECK(worst(out.value()[0].f32(), naive(rounded(a), rounded(b), m, n, k, ta, tb)) < 1e-6);
      // The rounding shows: the exact f32 product is off by far more than f32 sums would be.
      CHECK(worst(out.value()[0].f32(), naive(a, b, m, n, k, ta, tb)) > 1e-4);
    }
  }
}

TEST_CASE("ref Linear and its gradients with compute bf16 round both operands", "[ops][linalg][bf16]") {
  const int64_t rows = 6, n = 5, k = 40;
  const auto x = random_floats(static_cast<size_t>(rows * k), 31), w = random_floats(static_cast<size_t>(n * k), 32);
  const auto bias = random_floats(static_cast<size_t>(n), 33), dy = random_floats(static_cast<size_t>(rows * n), 34);
  auto y = run_op("Linear", {HostTensor::f32({rows, k}, x), HostTensor::f32({n, k}, w), HostTensor::f32({n}, bias)}, kBf16,
                  {}, "ref");
  REQUIRE(y.is_ok());
  std::vector<double> want = naive(rounded(x), rounded(w), rows, n, k, false, true);
  for (size_t i = 0; i < want.size(); ++i) want[i] += bias[i % static_cast<size_t>(n)];  // the bias is not rounded
  CHECK(worst(y.value()[0].f32(), want) < 1e-6);

  auto dx = run_op("LinearInputGrad", {HostTensor::f32({rows, n}, dy), HostTensor::f32({n, k}, w)}, kBf16, {}, "ref");
  REQUIRE(dx.is_ok());
  CHECK(worst(dx.value()[0].f32(), naive(rounded(dy), rounded(w), rows, k, n, false, false)) < 1e-6);
  CHECK(worst(dx.value()[0].f32(), naive(dy, w, rows, k, n, false, false)) > 1e-4);

  auto dw = run_op("LinearWeightGrad", {HostTensor::f32({rows, n}, dy), HostTensor::f32({rows, k}, x)}, kBf16, {}, "ref");
  REQUIRE(dw.is_ok());
  CHECK(worst(dw.value()[0].f32(), naive(rounded(dy), rounded(x), n, k, rows, true, false)) < 1e-6);
}

TEST_CASE("a GEMM's compute attribute other than f32 or bf16 is refused, naming it", "[ops][linalg][bf16]") {
  auto out = run_op("Linear", {HostTensor::f32({2, 3}, random_floats(6, 1)), HostTensor::f32({4, 3}, random_floats(12, 2))},
                    {{"compute", std::string("fp8")}}, {}, "ref");
  REQUIRE_FALSE(out.is_ok());
  CHECK_THAT(out.status().message(), Catch::Contains("compute"));
}

#ifdef POCK_HAVE_OPENBLAS
namespace {

// The GEMMs of one transformer-ish layer and of attention, with compute bf16, cpu against ref.
// `activation` makes the operands that are activations: f32 (input), or the compiler's bf16
// copies of them (bf16s, src/compiler/lowering/bf16_operands.hpp); weights stay f32.
void check_bf16_cases(Operand (*activation)(Shape, uint32_t, float, float) = input) {
  uint32_t seed = 900;
  const int64_t rows = 37, n = 29, k = 70;
  auto act = [&](Shape shape) { return activation(std::move(shape), ++seed, -1.0f, 1.0f); };
  check_against_ref("cpu", {"Linear", {act({rows, k}), input({n, k}, ++seed), input({n}, ++seed)}, kBf16}, "cpu");
  check_against_ref("cpu", {"Linear", {act({2, rows, k}), frozen({n, k}, ++seed), omitted()}, kBf16}, "cpu");
  check_against_ref("cpu", {"LinearInputGrad", {act({rows, n}), input({n, k}, ++seed)}, kBf16}, "cpu");
  check_against_ref("cpu", {"LinearWeightGrad", {act({2, rows, n}), act({2, rows, k})}, kBf16}, "cpu");
  check_against_ref("cpu", {"LinearWeightGrad", {act({rows, n}), input({rows, k}, ++seed)}, kBf16}, "cpu");
  for (int64_t ta : {0, 1}) {
    for (int64_t tb : {0, 1}) {
      const Shape a = ta ? Shape{3, k, rows} : Shape{3, rows, k}, b = tb ? Shape{n, k} : Shape{k, n};
      const Shape b3 = tb ? Shape{3, n, k} : Shape{3, k, n};
      check_against_ref("cpu", {"MatMul", {act(a), act(b3)}, bf16_transposes(ta, tb)}, "cpu");
      check_against_ref("cpu", {"MatMul", {act(a), input(b, ++seed)}, bf16_transposes(ta, tb)}, "cpu");
      check_against_ref("cpu", {"MatMul", {input(a, ++seed), act(b3)}, bf16_transposes(ta, tb)}, "cpu");
    }
  }
}

}  // namespace

TEST_CASE("cpu bf16 GEMMs match ref on the machine's fastest way", "[ops][cpu][bf16]") { check_bf16_cases(); }

TEST_CASE("cpu bf16 GEMMs match ref on the f32 rounding fallback (POCK_BF16_ISA=fp32)", "[ops][cpu][bf16]") {
  ForcedIsa fallback("fp32");
  check_bf16_cases();
}

TEST_CASE("cpu bf16 GEMMs on bf16 operands match ref, on both ways", "[ops][cpu][bf16]") {
  check_bf16_cases(bf16s);
  ForcedIsa fallback("fp32");
  check_bf16_cases(bf16s);
}
#endif

TEST_CASE("Linear and MatMul gradients with compute bf16 match finite differences within bf16 precision",
          "[grad][linalg][bf16]") {
  // The backward GEMMs round too (the rule passes compute on), so the analytic gradient carries
  // bf16's relative error (2^-9 per operand) rather than f32's; the finite differences of the
  // rounded forward, with a step much larger than a bf16 ulp of the inputs, see the same.
  GradCheckOptions o;
  o.step = 5e-2;
  o.rtol = 3e-2;
  o.atol = 3e-2;
  const HostTensor x = HostTensor::f32({4, 6}, random_floats(24, 41)), w = HostTensor::f32({3, 6}, random_floats(18, 42));
  const HostTensor bias = HostTensor::f32({3}, random_floats(3, 43));
  CHECK(check_op_gradients("Linear", {x, w, bias}, kBf16, {true, true, true}, o));
  const HostTensor a = HostTensor::f32({2, 4, 5}, random_floats(40, 44)), b = HostTensor::f32({5, 3}, random_floats(15, 45));
  CHECK(check_op_gradients("MatMul", {a, b}, kBf16, {true, true}, o));
}

TEST_CASE("recipe precision: fp32 by default, bf16 marks every GEMM, others refused", "[compiler][recipe][bf16]") {
  auto fp32 = parse_recipe(R"({"loss": {"type": "output", "logits": "y"}})");
  REQUIRE(fp32.is_ok());
  CHECK(fp32->precision == "fp32");
  auto bad = parse_recipe(R"({"loss": {"type": "output", "logits": "y"}, "precision": "fp16"})");
  REQUIRE_FALSE(bad.is_ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("precision") && Catch::Contains("fp16"));
  auto wrong_type = parse_recipe(R"({"loss": {"type": "output", "logits": "y"}, "precision": 16})");
  REQUIRE_FALSE(wrong_type.is_ok());
  CHECK_THAT(wrong_type.status().message(), Catch::Contains("precision"));

  auto bf16 = parse_recipe(R"({"loss": {"type": "output", "logits": "y"}, "precision": "bf16", "optimizer": {"lr": 0}})");
  REQUIRE(bf16.is_ok());
  CHECK(bf16->precision == "bf16");
  // y = sum(Linear(x W1) W2): the train function holds 2 forward Linears and, for the 2 weights,
  // 2 LinearWeightGrads and 1 LinearInputGrad (x does not train).
  Graph g;
  const TensorId x = g.add_input("x", DType::kF32, {4, 6});
  const TensorId w1 = g.add_parameter_f32("w1", {5, 6}, random_floats(30, 1));
  const TensorId w2 = g.add_parameter_f32("w2", {3, 5}, random_floats(15, 2));
  const TensorId h = g.add_node("Linear", {x, w1}).value()[0];
  const TensorId y = g.add_node("Linear", {h, w2}).value()[0];
  const TensorId loss = g.add_node("ReduceSum", {y}, Attrs{{"keepdims", int64_t{0}}}).value()[0];
  REQUIRE(g.mark_output(loss, "y").is_ok());
  CompileReport report;
  for (const char* precision : {"fp32", "bf16"}) {
    Recipe r = bf16.value();
    r.precision = precision;
    auto blob = compile(g, &r, {}, &report);
    REQUIRE(blob.is_ok());
    auto engine = Engine::open_buffer(blob->data(), blob->size());
    REQUIRE(engine.is_ok());
    const auto x_values = random_floats(24, 3);
    REQUIRE(engine->set_input("x", x_values.data(), x_values.size() * sizeof(float)).is_ok());
    REQUIRE(engine->train_step().is_ok());
  }
  // What the compiler marked is checked on the graph it builds (tests/compiler reads blobs).
  const TrainingProgram program = build_training_program(g, bf16.value());
  int gemms = 0, marked = 0;
  for (const FunctionDef& f : program.functions) {
    for (const Node& node : f.nodes) {
      if (node.op != "Linear" && node.op != "LinearInputGrad" && node.op != "LinearWeightGrad") continue;
      ++gemms;
      if (node.attrs.get_string("compute", "f32") == "bf16") ++marked;
    }
  }
  CHECK(gemms >= 5);
  CHECK(marked == gemms);
}
