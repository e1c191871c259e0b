// The neon backend against the reference kernels, on random shapes: every kernel of
// kernels/neon, bound where expected and compared output by output (support/backend_compare.hpp).
// The backend exists only in aarch64 builds; elsewhere this file checks that no "neon" backend
// is offered. Run on x86 through scripts/test-aarch64.sh (cross build, qemu-aarch64).
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "runtime/backend_set.hpp"
#include "support/backend_compare.hpp"
#include "support/backward_cases.hpp"

using namespace pock;
using namespace pock::test;

namespace {

bool neon_is_built() {
  for (const std::string& name : builtin_backend_names()) {
    if (name == "neon") return true;
  }
  return false;
}

}  // namespace

#ifndef POCK_HAVE_NEON

TEST_CASE("neon backend is only built for aarch64", "[ops][neon]") {
  WARN("not an aarch64 build: the neon tests run through scripts/test-aarch64.sh");
  CHECK_FALSE(neon_is_built());
}

#else

namespace {

const char* const kNeon = "neon";

// Where an op neon leaves alone binds: the cpu backend's GEMM needs OpenBLAS.
#ifdef POCK_HAVE_OPENBLAS
const char* const kBlasBackend = "cpu";
#else
const char* const kBlasBackend = "ref";
#endif

void check(const OpCase& c, const std::string& expected = kNeon) { check_against_ref(kNeon, c, expected); }

}  // namespace

TEST_CASE("neon backend is registered", "[ops][neon]") { CHECK(neon_is_built()); }

TEST_CASE("neon Add/Sub/Mul/Div and activations match ref", "[ops][neon]") {
  std::mt19937 gen(30);
  uint32_t seed = 3000;
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    const float lo = std::string(op) == "Div" ? 0.5f : -1.0f;  // divisors away from zero
    for (int trial = 0; trial < 2; ++trial) {
      const Shape full{random_dim(gen, 1, 4), random_dim(gen, 1, 9), random_dim(gen, 1, 37)};
      check({op, {input(full, ++seed), input(full, ++seed, lo, 2.0f)}});
      check({op, {input(full, ++seed), input({1}, ++seed, lo, 2.0f)}});        // scalar b
      check({op, {input({}, ++seed), input(full, ++seed, lo, 2.0f)}});         // scalar a
      check({op, {input(full, ++seed), input({full[2]}, ++seed, lo, 2.0f)}});  // row b
      check({op, {input({full[2]}, ++seed), input(full, ++seed, lo, 2.0f)}});  // row a
    }
    // Both broadcast: neon declines; the cpu backend's strided walk (kernels/cpu/strided_walk.hpp) takes it.
    check({op, {input({3, 1, 5}, ++seed), input({1, 4, 5}, ++seed, lo, 2.0f)}}, "cpu");
  }
  const std::vector<std::pair<const char*, Attrs> > activations = {{"Relu", {}},
                                                                   {"Relu6", {}},
                                                                   {"HardSwish", {}},
                                                                   {"Sigmoid", {}},
                                                                   {"Silu", {}},
                                                                   {"Gelu", {}},
                                                                   {"Gelu", {{"approximate", std::string("tanh")}}}};
  const std::vector<float> extremes = {-200.0f, -90.0f, 90.0f, 200.0f, NAN, -0.0f, 0.0f};
  for (const auto& [op, attrs] : activations) {
    for (int trial = 0; trial < 3; ++trial) {
      check({op, {input({random_dim(gen, 1, 5), random_dim(gen, 1, 133)}, ++seed, -9.0f, 9.0f)}, attrs});
    }
    check({op, {values({static_cast<int64_t>(extremes.size())}, extremes)}, attrs});
  }
}

TEST_CASE("neon LayerNorm and RMSNorm match ref", "[ops][neon]") {
  std::mt19937 gen(37);
  uint32_t seed = 3700;
  for (int trial = 0; trial < 3; ++trial) {
    const int64_t rows = random_dim(gen, 1, 20), width = random_dim(gen, 1, 130);
    check({"LayerNorm", {input({rows, width}, ++seed, 2.0f, 4.0f), input({width}, ++seed), input({width}, ++seed)}});
    check({"LayerNorm", {input({rows, width}, ++seed), omitted(), omitted()}, {{"eps", 1e-3}}});
    check({"RMSNorm", {input({rows, width}, ++seed), input({width}, ++seed)}});
    check({"RMSNorm", {input({rows, width}, ++seed), omitted()}});
  }
  check(
      {"LayerNorm", {input({3, 4, 5}, ++seed), input({4, 5}, ++seed), input({4, 5}, ++seed)}, {{"axis", int64_t{-2}}}});
}

TEST_CASE("neon activation gradients match ref", "[ops][neon]") {
  std::mt19937 gen(31);
  uint32_t seed = 3100;
  const std::vector<ActivationGradCase> activations = activation_grad_cases();
  for (const ActivationGradCase& a : activations) {
    for (int trial = 0; trial < 3; ++trial) {
      const Shape shape{random_dim(gen, 1, 5), random_dim(gen, 1, 133)};  // odd sizes: padded tails
      check({a.op, {input(shape, ++seed), input(shape, ++seed, a.lo, a.hi)}, a.attrs});
    }
  }
  const std::vector<float> extremes = {-200.0f, -90.0f, 90.0f, 200.0f, NAN, -0.0f, 0.0f};
  const Shape n{static_cast<int64_t>(extremes.size())};
  for (const ActivationGradCase& a : activations) check({a.op, {input(n, ++seed), values(n, extremes)}, a.attrs});
}

// No neon kernels: on aarch64 the cpu backend's portable loops (vectorized for NEON by the
// compiler under `#pragma omp simd`) compute the activation masks.
TEST_CASE("ClipMask and MaskGrad bind the cpu backend's loops and match ref", "[ops][neon]") {
  std::mt19937 gen(35);
  uint32_t seed = 3150;
  const std::vector<Attrs> bounds = {Attrs{{"min", 0.0}}, Attrs{{"min", 0.0}, {"max", 6.0}},
                                     Attrs{{"min", -0.5}, {"max", 0.1}, {"inclusive", int64_t{1}}}};
  const std::vector<float> extremes = {-200.0f, 200.0f, NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 6.0f, 0.1f, -0.5f};
  for (const Attrs& a : bounds) {
    for (int trial = 0; trial < 2; ++trial) {
      const Shape shape{random_dim(gen, 1, 5), random_dim(gen, 1, 133)};  // odd sizes: vector tails
      check({"ClipMask", {input(shape, ++seed, -1.0f, 7.0f)}, a}, "cpu");
    }
    check({"ClipMask", {values({static_cast<int64_t>(extremes.size())}, extremes)}, a}, "cpu");
  }
  for (int trial = 0; trial < 3; ++trial) {
    const Shape shape{random_dim(gen, 1, 5), random_dim(gen, 1, 133)};
    std::vector<uint8_t> mask(static_cast<size_t>(numel(shape)));
    for (uint8_t& m : mask) m = static_cast<uint8_t>(random_dim(gen, 0, 2));  // 0, 1 and another nonzero byte
    check({"MaskGrad", {input(shape, ++seed), u8s(shape, mask)}}, "cpu");
  }
}

TEST_CASE("neon SumToShape and Conv2dGradBias match ref", "[ops][neon]") {
  std::mt19937 gen(32);
  uint32_t seed = 3200;
  for (int trial = 0; trial < 3; ++trial) {
    const int64_t n = random_dim(gen, 1, 4), c = random_dim(gen, 1, 20), h = random_dim(gen, 1, 9),
                  w = random_dim(gen, 1, 9);
    check({"Conv2dGradBias", {input({n, c, h, w}, ++seed)}});
    check({"Conv2dGradBias", {input({n, c, h, w}, ++seed)}, {{"channels", random_dim(gen, 1, c)}}});
    check({"Conv2dGradBias", {input({n, c}, ++seed)}});
    for (const Ints& to : {Ints{1, c, 1, 1}, Ints{c, 1, 1}, Ints{h, w}, Ints{1}, Ints{n, 1, 1, 1}}) {
      INFO("to " << shape_str(to));
      check({"SumToShape", {input({n, c, h, w}, ++seed)}, {{"shape", to}}});
    }
  }
  check({"SumToShape", {input({2, 3, 4}, 1)}, {{"shape", Ints{2, 1, 4}}}}, "ref");  // not an axis-sum pattern
}

TEST_CASE("neon batch norm training ops match ref", "[ops][neon]") {
  std::mt19937 gen(33);
  uint32_t seed = 3300;
  for (int trial = 0; trial < 3; ++trial) {
    const Shape x{random_dim(gen, 1, 4), random_dim(gen, 1, 8), random_dim(gen, 1, 9), random_dim(gen, 2, 9)};
    const Shape ch{x[1]};
    OpCase train{"BatchNormTrain",
                 {input(x, ++seed, 2.0f, 4.0f), input(ch, ++seed), input(ch, ++seed), input(ch, ++seed),
                  input(ch, ++seed, 0.5f, 2.0f)},
                 {{"eps", 1e-3}, {"momentum", 0.2}}};
    train.updated_inputs = {3, 4};
    check(train);
    const Operand mean = input(ch, ++seed, 2.5f, 3.5f), invstd = input(ch, ++seed, 0.5f, 2.0f);
    check({"BatchNormTrainGrad", {input(x, ++seed), input(x, ++seed, 2.0f, 4.0f), mean, invstd, input(ch, ++seed)}});
    check({"BatchNormTrainGrad", {input(x, ++seed), input(x, ++seed, 2.0f, 4.0f), mean, invstd}});
    check({"BatchNormParamGrad", {input(x, ++seed), input(x, ++seed, 2.0f, 4.0f), mean, invstd}});
    // The fused activation, with gammas of up to 8 so that both of Relu6's bounds clamp.
    OpCase fused{"BatchNormTrain",
                 {input(x, ++seed, 2.0f, 4.0f), input(ch, ++seed, -8.0f, 8.0f), input(ch, ++seed), input(ch, ++seed),
                  input(ch, ++seed, 0.5f, 2.0f)},
                 {{"activation", std::string(trial == 1 ? "relu" : "relu6")}}};
    fused.updated_inputs = {3, 4};
    check(fused);
  }
}

TEST_CASE("neon LayerNormGrad, RMSNormGrad, SoftmaxGrad and LogSoftmaxGrad match ref", "[ops][neon]") {
  std::mt19937 gen(34);
  uint32_t seed = 3400;
  for (int trial = 0; trial < 3; ++trial) {
    const int64_t rows = random_dim(gen, 1, 20), width = random_dim(gen, 1, 130);
    const Shape x{rows, width}, r{rows}, f{width};
    const Operand mean = input(r, ++seed, 2.5f, 3.5f), invstd = input(r, ++seed, 0.5f, 2.0f);
    check({"LayerNormGrad", {input(x, ++seed), input(x, ++seed, 2.0f, 4.0f), mean, invstd, input(f, ++seed)}});
    check({"LayerNormGrad", {input(x, ++seed), input(x, ++seed, 2.0f, 4.0f), mean, invstd}});
    check({"RMSNormGrad", {input(x, ++seed), input(x, ++seed), invstd, input(f, ++seed)}});
    check({"RMSNormGrad", {input(x, ++seed), input(x, ++seed), invstd}});
    check({"SoftmaxGrad", {input(x, ++seed), input(x, ++seed, 0.0f, 1.0f)}});
    check({"LogSoftmaxGrad", {input(x, ++seed), input(x, ++seed, -12.0f, 0.0f)}});
  }
}

TEST_CASE("neon optimizer updates match ref", "[ops][neon]") {
  std::mt19937 gen(35);
  uint32_t seed = 3500;
  for (int trial = 0; trial < 2; ++trial) {
    const Shape shape{random_dim(gen, 1, 5), random_dim(gen, 1, 130)};
    check(update_case("SgdUpdate", shape, 1, 0, false, {{"lr", 0.3}}, seed += 5));
    check(update_case("SgdUpdate", shape, 3, 1, true, {{"lr", 0.3}, {"momentum", 0.9}, {"weight_decay", 0.1}},
                      seed += 5));
    check(update_case("SgdUpdate", shape, 2, 1, false, {{"lr", 0.3}, {"momentum", 0.9}, {"nesterov", int64_t{1}}},
                      seed += 5));
    check(update_case("SgdUpdate", shape, 4, 1, false, {{"lr", 0.3}, {"momentum", 0.5}, {"accumulation", int64_t{2}}},
                      seed += 5));
    check(update_case("AdamUpdate", shape, 1, 2, false, {{"lr", 0.1}}, seed += 5));
    check(update_case("AdamUpdate", shape, 5, 2, true, {{"lr", 0.1}, {"weight_decay", 0.1}}, seed += 5));
    check(update_case("AdamUpdate", shape, 3, 2, false, {{"lr", 0.1}, {"weight_decay", 0.1}, {"decoupled", int64_t{1}}},
                      seed += 5));
    // Partial-channel updates: the gradient and state cover the first rows only.
    const Shape rows{shape[0] + 2, shape[1]};
    check(update_case("SgdUpdate", rows, 2, 1, false, {{"lr", 0.3}, {"momentum", 0.9}}, seed += 5, shape[0]));
    check(update_case("AdamUpdate", rows, 2, 2, false, {{"lr", 0.1}}, seed += 5, shape[0]));
    OpCase acc{"AccumulateGrad", {input(shape, ++seed), input(shape, ++seed)}};
    acc.updated_inputs = {0};
    check(acc);
    check(
        {"GlobalNormClipScale", {input(shape, ++seed), input({random_dim(gen, 1, 50)}, ++seed)}, {{"max_norm", 0.5}}});
  }
}

TEST_CASE("neon depthwise Conv2dGradInput and Conv2dGradWeight match ref", "[ops][neon]") {
  std::mt19937 gen(36);
  uint32_t seed = 3600;
  for (int trial = 0; trial < 2; ++trial) {
    for (const ConvShape& s : conv_shapes(gen)) {
      const std::string expected = s.depthwise() ? kNeon : kBlasBackend;
      check(grad_input_case(s, false, seed += 2), expected);
      check(grad_weight_case(s, 0, seed += 2), expected);
      check(grad_weight_case(s, random_dim(gen, 1, s.out_channels), seed += 2), expected);
    }
  }
  // Stride 2 on rows of every length mod 4 around the de-interleaving loads' bound.
  for (int64_t width = 8; width <= 13; ++width) {
    const ConvShape s{1, 3, 6, width, 3, 3, 3, 3, {2, 2}, {1, 1, 1, 1}, {1, 1}};
    check(grad_input_case(s, false, seed += 2));
    check(grad_weight_case(s, 0, seed += 2));
  }
}

#endif
