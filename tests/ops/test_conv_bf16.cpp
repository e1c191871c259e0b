// compute "bf16" on Conv2d, Conv2dGradInput and Conv2dGradWeight (recipe precision "bf16"): both
// operands rounded to bf16, f32 products and sums.
//   - ref against ref's own f32 kernels on operands rounded by this file's own rounding (frexp
//     and nearbyint, not kernels/bf16_round.h): the same values up to the order of the sums;
//   - cpu against ref on dense, strided, pointwise, grouped, dilated and depthwise shapes, on both
//     of its ways (oneDNN on AVX512-BF16, and the f32 rounding fallback POCK_BF16_ISA=fp32
//     forces). Both round the same operands, so what differs is only f32 against double sums:
//     the default 1e-4 of (|ref| + 1) holds, where a kernel that forgot to round is off by more
//     (checked: the f32 result misses the bf16 one by more than that);
//   - gradients against finite differences, within bf16's precision;
//   - what the compiler marks: dense convolutions and their gradients, not depthwise ones, and
//     only for the cpu backend.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "support/backend_compare.hpp"
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
  const double m = std::frexp(static_cast<double>(v), &e);
  return static_cast<float>(std::ldexp(std::nearbyint(std::ldexp(m, 8)), e - 8));
}

OpCase with_bf16(OpCase c) {
  c.attrs.set("compute", std::string("bf16"));
  return c;
}

// The case with its two convolution operands rounded to bf16 (a bias is added unrounded) and
// compute left f32.
OpCase rounded(OpCase c) {
  for (size_t i = 0; i < 2; ++i) {
    for (float& v : c.inputs[i].values) v = bf16_by_frexp(v);
  }
  return c;
}

// The three ops of a shape (input gradient with a live weight; weight gradient of all channels
// and of the first few, which ends inside a group when the shape is grouped).
std::vector<OpCase> cases_of(const ConvShape& s, uint32_t seed) {
  return {conv_forward_case(s, false, "relu", seed), conv_forward_case(s, true, "none", seed + 3),
          grad_input_case(s, false, seed + 6), grad_weight_case(s, 0, seed + 9),
          grad_weight_case(s, std::max<int64_t>(1, s.out_channels - 3), seed + 12)};
}

// Dense shapes as recipe precision bf16 meets them in a CNN: a 3x3 layer of a few dozen
// channels, a strided one, a pointwise one and the stem.
std::vector<ConvShape> cnn_shapes() {
  return {
      {2, 24, 12, 12, 32, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}},
      {2, 32, 12, 12, 48, 3, 3, 1, {2, 2}, {1, 1, 1, 1}, {1, 1}},
      {2, 48, 6, 6, 64, 1, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}},
      {2, 3, 20, 20, 16, 7, 7, 1, {2, 2}, {3, 3, 3, 3}, {1, 1}},
  };
}

#ifdef POCK_HAVE_OPENBLAS
const char* const kBf16ConvBackend = "cpu";
#else
const char* const kBf16ConvBackend = "ref";  // the cpu way needs OpenBLAS (kernels/cpu/conv_bf16.hpp)
#endif

// Sets POCK_BF16_ISA for the scope (the cpu kernels read it when an engine prepares them).
struct ForcedIsa {
  explicit ForcedIsa(const char* isa) { setenv("POCK_BF16_ISA", isa, 1); }
  ~ForcedIsa() { unsetenv("POCK_BF16_ISA"); }
};

void check_cpu_cases() {
  std::mt19937 gen(71);
  uint32_t seed = 7100;
  std::vector<ConvShape> shapes = conv_shapes(gen);
  for (const ConvShape& s : cnn_shapes()) shapes.push_back(s);
  for (const ConvShape& s : shapes) {
    for (const OpCase& c : cases_of(s, seed += 20)) {
      const OpCase bf16 = with_bf16(c);
      check_against_ref("cpu", bf16, kBf16ConvBackend);
    }
  }
}

}  // namespace

TEST_CASE("ref convolutions with compute bf16 are the f32 ones of the rounded operands", "[ops][conv][bf16]") {
  std::mt19937 gen(70);
  uint32_t seed = 7000;
  for (const ConvShape& s : conv_shapes(gen)) {
    for (const OpCase& c : cases_of(s, seed += 20)) {
      INFO(describe(c));
      const auto bf16 = BoundCase::open(with_bf16(c), "ref").infer();
      const auto f32_of_rounded = BoundCase::open(rounded(c), "ref").infer();
      const auto f32 = BoundCase::open(c, "ref").infer();
      REQUIRE(bf16.size() == 1);
      CHECK(mismatch(bf16[0], f32_of_rounded[0], 1e-6) == "");
      // The rounding shows: the f32 result of the unrounded operands is off by far more.
      CHECK(mismatch(bf16[0], f32[0], 1e-4) != "");
    }
  }
}

TEST_CASE("cpu convolutions with compute bf16 match ref on the machine's fastest way", "[ops][cpu][conv][bf16]") {
  check_cpu_cases();
}

TEST_CASE("cpu convolutions with compute bf16 match ref on the f32 rounding fallback (POCK_BF16_ISA=fp32)",
          "[ops][cpu][conv][bf16]") {
  ForcedIsa fallback("fp32");
  check_cpu_cases();
}

TEST_CASE("cpu convolutions with compute bf16 round: the f32 result misses theirs", "[ops][cpu][conv][bf16]") {
  for (const ConvShape& s : cnn_shapes()) {
    for (const OpCase& c : cases_of(s, 7300)) {
      INFO(describe(c));
      const auto cpu = BoundCase::open(with_bf16(c), "cpu").infer();
      const auto f32 = BoundCase::open(c, "ref").infer();
      CHECK(mismatch(cpu[0], f32[0], 1e-4) != "");
    }
  }
}

TEST_CASE("Conv2d gradients with compute bf16 match finite differences within bf16 precision", "[grad][conv][bf16]") {
  // The backward convolutions round too (the rule passes the forward's attributes on), so the
  // analytic gradient carries bf16's relative error (2^-9 per operand). The forward is linear in
  // each input, so a large step costs no truncation error and divides the rounding noise of the
  // two forward values (about 1e-2 on these 27-term sums) by 2h.
  GradCheckOptions o;
  o.step = 0.25;
  o.rtol = 3e-2;
  o.atol = 3e-2;
  const HostTensor x = HostTensor::f32({2, 3, 5, 5}, random_floats(150, 61));
  const HostTensor w = HostTensor::f32({4, 3, 3, 3}, random_floats(108, 62));
  const HostTensor b = HostTensor::f32({4}, random_floats(4, 63));
  Attrs attrs{{"compute", std::string("bf16")}, {"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}};
  CHECK(check_op_gradients("Conv2d", {x, w, b}, attrs, {true, true, true}, o));
}

TEST_CASE("a convolution's compute other than f32 or bf16, or bf16 over f16, is refused, naming it",
          "[ops][conv][bf16]") {
  const HostTensor x = HostTensor::f32({1, 2, 4, 4}, random_floats(32, 1));
  const HostTensor w = HostTensor::f32({3, 2, 3, 3}, random_floats(54, 2));
  auto out = run_op("Conv2d", {x, w}, {{"compute", std::string("fp8")}}, {}, "ref");
  REQUIRE_FALSE(out.is_ok());
  CHECK_THAT(out.status().message(), Catch::Contains("compute"));
  Graph g;
  const TensorId xh = g.add_input("x", DType::kF16, {1, 2, 4, 4});
  const TensorId wh = g.add_input("w", DType::kF16, {3, 2, 3, 3});
  auto node = g.add_node("Conv2d", {xh, wh}, Attrs{{"compute", std::string("bf16")}});
  REQUIRE_FALSE(node.is_ok());
  CHECK_THAT(node.status().message(), Catch::Contains("bf16") && Catch::Contains("f32"));
}

TEST_CASE("recipe precision bf16 marks dense convolutions and their gradients for the cpu backend only",
          "[compiler][recipe][bf16]") {
  // x -> dense 3x3 conv -> depthwise 3x3 conv -> pointwise conv -> sum: the three convolutions
  // train, so each has its input and weight gradients (the first's input gradient is not needed).
  Graph g;
  const TensorId x = g.add_input("x", DType::kF32, {2, 3, 8, 8});
  const TensorId w1 = g.add_parameter_f32("w1", {8, 3, 3, 3}, random_floats(216, 1));
  const TensorId wd = g.add_parameter_f32("wd", {8, 1, 3, 3}, random_floats(72, 2));
  const TensorId w2 = g.add_parameter_f32("w2", {4, 8, 1, 1}, random_floats(32, 3));
  const Attrs same{{"pads", Ints{1, 1, 1, 1}}};
  Attrs depthwise = same;
  depthwise.set("groups", int64_t{8});
  const TensorId h1 = g.add_node("Conv2d", {x, w1}, same).value()[0];
  const TensorId h2 = g.add_node("Conv2d", {h1, wd}, depthwise).value()[0];
  const TensorId y = g.add_node("Conv2d", {h2, w2}).value()[0];
  const TensorId loss = g.add_node("ReduceSum", {y}, Attrs{{"keepdims", int64_t{0}}}).value()[0];
  REQUIRE(g.mark_output(loss, "y").is_ok());
  auto recipe =
      parse_recipe(R"({"loss": {"type": "output", "logits": "y"}, "precision": "bf16", "optimizer": {"lr": 0}})");
  REQUIRE(recipe.is_ok());

  auto count = [&](const CompileOptions& options, int* dense, int* dense_marked, int* depthwise_marked) {
    *dense = *dense_marked = *depthwise_marked = 0;
    const TrainingProgram program = build_training_program(g, recipe.value(), options);
    for (const FunctionDef& f : program.functions) {
      for (const Node& node : f.nodes) {
        if (node.op != "Conv2d" && node.op != "Conv2dGradInput" && node.op != "Conv2dGradWeight") continue;
        const bool marked = node.attrs.get_string("compute", "f32") == "bf16";
        const bool is_depthwise = node.attrs.get_int("groups", 1) > 1;
        if (is_depthwise) {
          *depthwise_marked += marked;
        } else {
          ++*dense;
          *dense_marked += marked;
        }
      }
    }
  };
  int dense = 0, dense_marked = 0, depthwise_marked = 0;
  count({}, &dense, &dense_marked, &depthwise_marked);
  // Forward convolutions of train, eval and infer, plus 2 weight gradients and 1 input gradient.
  CHECK(dense >= 5);
  CHECK(dense_marked == dense);
  CHECK(depthwise_marked == 0);
  CompileOptions cuda;
  cuda.backend = "cuda";
  count(cuda, &dense, &dense_marked, &depthwise_marked);
  CHECK(dense_marked == 0);

  // And the blob trains on the cpu backend, its convolutions bound there.
  auto blob = compile(g, &recipe.value());
  REQUIRE(blob.is_ok());
  auto engine = Engine::open_buffer(blob->data(), blob->size());
  REQUIRE(engine.is_ok());
  const auto x_values = random_floats(384, 4);
  REQUIRE(engine->set_input("x", x_values.data(), x_values.size() * sizeof(float)).is_ok());
  REQUIRE(engine->train_step().is_ok());
}
