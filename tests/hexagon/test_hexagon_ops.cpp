// Every op the Hexagon DSP runs, forward and backward, against kernels/ref on random shapes: the
// plugin is called through its pock_backend_v1 directly, with buffers from its alloc in the shared
// region, and the DSP program runs each op under qemu-hexagon. Also what supports_op refuses.
#include <random>

#include "hexagon/hexagon_harness.hpp"

using namespace pock;
using namespace pock::test;

namespace {

constexpr int kShapes = 4;  // random shapes per case: the emulated DSP is slow, the shapes vary

// One plugin instance per test case; at its end, every op enqueued ran on the DSP, one message each
// (each case synchronizes after its single op).
struct Fixture {
  BackendEntry entry = load_hexagon();
  pock_backend_v1& b = *entry.backend;
  ~Fixture() {
    const pock_hexagon_counters c = counters_of(b);
    CHECK(c.ops_run == c.ops_enqueued);
    CHECK(c.messages == c.ops_enqueued);
    CHECK(c.dsp_deaths == 0);
  }
};

Shape rows_by(std::mt19937& gen, int64_t last) {
  if (random_dim(gen, 0, 1)) return {random_dim(gen, 1, 9), last};
  return {random_dim(gen, 1, 3), random_dim(gen, 1, 5), last};
}

}  // namespace

TEST_CASE("hexagon: Linear and its gradients equal ref", "[hexagon][ops]") {
  if (!hexagon_available()) return;
  Fixture f;
  std::mt19937 gen(11);
  for (int s = 0; s < kShapes; ++s) {
    const int64_t k = random_dim(gen, 1, 40), n = random_dim(gen, 1, 24);
    const Shape x = rows_by(gen, k);
    Shape y = x;
    y.back() = n;
    const uint32_t seed = static_cast<uint32_t>(100 + s * 10);
    for (const char* activation : {"none", "relu", "relu6"}) {
      check_dsp_against_ref(f.b, {"Linear", {input(x, seed, -4, 4), input({n, k}, seed + 1), input({n}, seed + 2)},
                                  Attrs{{"activation", std::string(activation)}}});
    }
    check_dsp_against_ref(f.b, {"Linear", {input(x, seed), input({n, k}, seed + 1)}});
    check_dsp_against_ref(f.b, {"LinearInputGrad", {input(y, seed + 3), input({n, k}, seed + 4)}});
    check_dsp_against_ref(f.b, {"LinearWeightGrad", {input(y, seed + 5), input(x, seed + 6)}});
    // The bias gradient: the rows summed, to [n] and to [1, n].
    check_dsp_against_ref(f.b, {"SumToShape", {input(y, seed + 7)}, Attrs{{"shape", std::vector<int64_t>{n}}}});
    check_dsp_against_ref(f.b, {"SumToShape", {input(y, seed + 8)}, Attrs{{"shape", std::vector<int64_t>{1, n}}}});
  }
}

TEST_CASE("hexagon: MatMul with transposes and batches equals ref", "[hexagon][ops]") {
  if (!hexagon_available()) return;
  Fixture f;
  std::mt19937 gen(12);
  for (int s = 0; s < kShapes; ++s) {
    const int64_t m = random_dim(gen, 1, 12), n = random_dim(gen, 1, 12), k = random_dim(gen, 1, 20), batch = random_dim(gen, 2, 3);
    const uint32_t seed = static_cast<uint32_t>(200 + s * 10);
    for (int ta = 0; ta < 2; ++ta) {
      for (int tb = 0; tb < 2; ++tb) {
        const Attrs attrs{{"transpose_a", int64_t{ta}}, {"transpose_b", int64_t{tb}}};
        const Shape a = ta ? Shape{k, m} : Shape{m, k};
        const Shape b = tb ? Shape{n, k} : Shape{k, n};
        check_dsp_against_ref(f.b, {"MatMul", {input(a, seed), input(b, seed + 1)}, attrs});
        Shape ba = a, bb = b;
        ba.insert(ba.begin(), batch);
        bb.insert(bb.begin(), batch);
        check_dsp_against_ref(f.b, {"MatMul", {input(ba, seed + 2), input(bb, seed + 3)}, attrs});  // both batched
        check_dsp_against_ref(f.b, {"MatMul", {input(ba, seed + 4), input(b, seed + 5)}, attrs});   // one b for all
      }
    }
  }
}

TEST_CASE("hexagon: activations and their gradients equal ref", "[hexagon][ops]") {
  if (!hexagon_available()) return;
  Fixture f;
  std::mt19937 gen(13);
  for (int s = 0; s < kShapes; ++s) {
    const Shape shape = rows_by(gen, random_dim(gen, 1, 33));
    const uint32_t seed = static_cast<uint32_t>(300 + s * 10);
    // [-8, 8] crosses Relu6's upper kink and reaches Gelu's and Silu's tails.
    for (const char* op : {"Relu", "Relu6", "Silu"}) {
      check_dsp_against_ref(f.b, {op, {input(shape, seed, -8, 8)}});
      check_dsp_against_ref(f.b, {std::string(op) + "Grad", {input(shape, seed + 1), input(shape, seed + 2, -8, 8)}});
    }
    for (const char* form : {"none", "tanh"}) {
      const Attrs attrs{{"approximate", std::string(form)}};
      check_dsp_against_ref(f.b, {"Gelu", {input(shape, seed + 3, -8, 8)}, attrs});
      check_dsp_against_ref(f.b, {"GeluGrad", {input(shape, seed + 4), input(shape, seed + 5, -8, 8)}, attrs});
    }
    // The exact kinks: ReluGrad at 0 and Relu6Grad at 6 give 0, as PyTorch.
    check_dsp_against_ref(f.b, {"ReluGrad", {values({3}, {1, 1, 1}), values({3}, {-1, 0, 1})}});
    check_dsp_against_ref(f.b, {"Relu6Grad", {values({3}, {1, 1, 1}), values({3}, {0, 6, 5.5f})}});
  }
}

TEST_CASE("hexagon: pointwise Conv2d and its gradients equal ref", "[hexagon][ops]") {
  if (!hexagon_available()) return;
  Fixture f;
  std::mt19937 gen(17);
  for (int s = 0; s < kShapes; ++s) {
    const int64_t n = random_dim(gen, 1, 3), c = random_dim(gen, 1, 12), o = random_dim(gen, 1, 12);
    const int64_t h = random_dim(gen, 1, 7), w = random_dim(gen, 1, 7);
    const Shape x{n, c, h, w}, y{n, o, h, w}, weight{o, c, 1, 1};
    const uint32_t seed = static_cast<uint32_t>(700 + s * 10);
    for (const char* activation : {"none", "relu", "relu6"}) {
      check_dsp_against_ref(f.b, {"Conv2d", {input(x, seed, -4, 4), input(weight, seed + 1), input({o}, seed + 2)},
                                  Attrs{{"activation", std::string(activation)}}});
    }
    check_dsp_against_ref(f.b, {"Conv2d", {input(x, seed + 3), input(weight, seed + 4)}});
    check_dsp_against_ref(f.b, {"Conv2dGradInput", {input(y, seed + 5), input(weight, seed + 6)},
                                Attrs{{"input_shape", std::vector<int64_t>(x.begin(), x.end())}}});
    // Weight and bias gradients of all output channels, and of the leading ones only.
    const int64_t rows = random_dim(gen, 1, o);
    for (int64_t channels : {o, rows}) {
      check_dsp_against_ref(f.b, {"Conv2dGradWeight", {input(x, seed + 7), input(y, seed + 8)},
                                  Attrs{{"kernel", std::vector<int64_t>{1, 1}}, {"channels", channels}}});
      check_dsp_against_ref(f.b, {"Conv2dGradBias", {input(y, seed + 9)}, Attrs{{"channels", channels}}});
    }
  }
}

TEST_CASE("hexagon: LinearInt8 and its input gradient (int8 products on HVX) equal ref", "[hexagon][ops]") {
  if (!hexagon_available()) return;
  Fixture f;
  std::mt19937 gen(19);
  for (int s = 0; s < kShapes; ++s) {
    // Past 128 elements a row runs through HVX vectors, and the tail through scalars.
    const int64_t k = random_dim(gen, 1, 300), n = random_dim(gen, 1, 300);
    const Shape x = rows_by(gen, k);
    Shape y = x;
    y.back() = n;
    const uint32_t seed = static_cast<uint32_t>(800 + s * 10);
    check_dsp_against_ref(f.b, {"LinearInt8", {input(x, seed, -4, 4), int8s({n, k}, seed + 1), input({n}, seed + 2, 0.001f, 0.05f),
                                               input({n}, seed + 3)}});
    check_dsp_against_ref(f.b, {"LinearInt8", {input(x, seed + 4), int8s({n, k}, seed + 5), input({n}, seed + 6, 0.001f, 0.05f)}});
    check_dsp_against_ref(f.b, {"LinearInt8InputGrad", {input(y, seed + 7), int8s({k, n}, seed + 8), input({n}, seed + 9, 0.001f, 0.05f)}});
  }
  // An all-zero row, and a row holding a NaN (which the DSP must propagate, not round).
  check_dsp_against_ref(f.b, {"LinearInt8", {values({2, 3}, {0, 0, 0, 1, std::nanf(""), 2}), int8s({4, 3}, 7), input({4}, 8, 0.01f, 0.02f)}});
}

TEST_CASE("hexagon: ClipMask and MaskGrad equal ref", "[hexagon][ops]") {
  if (!hexagon_available()) return;
  Fixture f;
  std::mt19937 gen(14);
  for (int s = 0; s < kShapes; ++s) {
    const Shape shape = rows_by(gen, random_dim(gen, 1, 33));
    const uint32_t seed = static_cast<uint32_t>(400 + s * 10);
    check_dsp_against_ref(f.b, {"ClipMask", {input(shape, seed, -8, 8)}, Attrs{{"min", 0.0}}});
    check_dsp_against_ref(f.b, {"ClipMask", {input(shape, seed + 1, -8, 8)}, Attrs{{"min", 0.0}, {"max", 6.0}}});
    check_dsp_against_ref(f.b, {"ClipMask", {input(shape, seed + 2, -2, 2)},
                                Attrs{{"min", -1.0}, {"max", 1.0}, {"inclusive", int64_t{1}}}});
    Operand mask = u8s(shape, std::vector<uint8_t>(static_cast<size_t>(numel(shape))));
    for (size_t i = 0; i < mask.bytes.size(); ++i) mask.bytes[i] = static_cast<uint8_t>(gen() & 1);
    check_dsp_against_ref(f.b, {"MaskGrad", {input(shape, seed + 3), mask}});
  }
  // A bound float cannot hold exactly would compare differently at the bound: left to the host.
  OpCase inexact{"ClipMask", {input({4}, 1)}, Attrs{{"min", 0.1}}};
  CHECK(DirectOp(f.b, inexact, true).score() == 0);
}

TEST_CASE("hexagon: Add and Mul, same shape and broadcast over rows, equal ref", "[hexagon][ops]") {
  if (!hexagon_available()) return;
  Fixture f;
  std::mt19937 gen(15);
  for (int s = 0; s < kShapes; ++s) {
    const int64_t n = random_dim(gen, 1, 17);
    const Shape shape = rows_by(gen, n);
    const uint32_t seed = static_cast<uint32_t>(500 + s * 10);
    for (const char* op : {"Add", "Mul"}) {
      check_dsp_against_ref(f.b, {op, {input(shape, seed), input(shape, seed + 1)}});
      check_dsp_against_ref(f.b, {op, {input(shape, seed + 2), input({n}, seed + 3)}});
      check_dsp_against_ref(f.b, {op, {input({n}, seed + 4), input(shape, seed + 5)}});  // the bias first
      check_dsp_against_ref(f.b, {op, {input(shape, seed + 6), input({1}, seed + 7)}});
    }
  }
  // A broadcast along a middle axis is not a repetition over rows: left to the host.
  OpCase column{"Add", {input({4, 3}, 1), input({4, 1}, 2)}};
  CHECK(DirectOp(f.b, column, true).score() == 0);
}

namespace {

// An update case: param, grad and state of `shape` (the gradient of `grad_rows` leading rows
// under a partial-channel update), at step `step`.
OpCase update_case(const std::string& op, const Shape& shape, int64_t grad_rows, int64_t step, Attrs attrs,
                   bool clip, uint32_t seed) {
  Shape g = shape;
  g[0] = grad_rows;
  OpCase c{op, {input(shape, seed), input(g, seed + 1), int64s({}, {step})}, std::move(attrs)};
  if (op == "SgdUpdate") {
    c.inputs.push_back(input(g, seed + 2, -0.1f, 0.1f));  // momentum buffer
    c.updated_inputs = {0, 1, 3};
  } else {
    c.inputs.push_back(input(g, seed + 2, -0.1f, 0.1f));  // exp_avg
    c.inputs.push_back(input(g, seed + 3, 0.0f, 0.01f));  // exp_avg_sq
    c.updated_inputs = {0, 1, 3, 4};
  }
  if (clip) c.inputs.push_back(values({}, {0.37f}));
  c.tolerance = 2e-5;
  return c;
}

}  // namespace

TEST_CASE("hexagon: SgdUpdate and AdamUpdate, with schedules, accumulation and clipping, equal ref", "[hexagon][ops]") {
  if (!hexagon_available()) return;
  Fixture f;
  std::mt19937 gen(16);
  const std::vector<Attrs> schedules = {
      Attrs{{"lr", 0.05}},
      Attrs{{"lr", 0.05}, {"schedule", std::string("linear_warmup")}, {"warmup_steps", int64_t{5}}},
      Attrs{{"lr", 0.05}, {"schedule", std::string("cosine")}, {"warmup_steps", int64_t{2}}, {"total_steps", int64_t{20}},
            {"min_lr", 0.001}},
  };
  for (int s = 0; s < kShapes; ++s) {
    const Shape shape = {random_dim(gen, 1, 6), random_dim(gen, 1, 9)};
    const int64_t partial = random_dim(gen, 1, shape[0]);
    const uint32_t seed = static_cast<uint32_t>(600 + s * 10);
    for (size_t k = 0; k < schedules.size(); ++k) {
      for (int64_t step : {int64_t{1}, int64_t{3}, int64_t{17}, int64_t{40}}) {
        Attrs sgd = schedules[k];
        sgd.set("momentum", 0.9);
        sgd.set("nesterov", int64_t{step % 2});
        sgd.set("weight_decay", 0.01);
        check_dsp_against_ref(f.b, update_case("SgdUpdate", shape, shape[0], step, sgd, step == 3, seed));
        Attrs adam = schedules[k];
        adam.set("weight_decay", 0.01);
        adam.set("decoupled", int64_t{step % 2});
        check_dsp_against_ref(f.b, update_case("AdamUpdate", shape, partial, step, adam, step == 17, seed + 5));
      }
    }
    // Accumulation: step 3 of 2-step accumulation only accumulates (nothing moves), step 4
    // applies the mean and clears the accumulator.
    for (int64_t step : {int64_t{3}, int64_t{4}}) {
      const Attrs acc{{"lr", 0.05}, {"accumulation", int64_t{2}}, {"beta1", 0.8}, {"beta2", 0.99}};
      check_dsp_against_ref(f.b, update_case("AdamUpdate", shape, shape[0], step, acc, false, seed + 7));
      check_dsp_against_ref(f.b, update_case("SgdUpdate", shape, shape[0], step, acc, false, seed + 8));
    }
  }
}

TEST_CASE("hexagon: supports_op claims only what the DSP runs", "[hexagon][ops]") {
  if (!hexagon_available()) return;
  Fixture f;
  // Ops the DSP does not have, and host memory: 0.
  CHECK(DirectOp(f.b, {"Softmax", {input({2, 3}, 1)}, Attrs{{"axis", int64_t{-1}}}}, true).score() == 0);
  CHECK(DirectOp(f.b, {"Exp", {input({2, 3}, 1)}}, true).score() == 0);
  CHECK(DirectOp(f.b, {"Relu", {input({2, 3}, 1)}}, false).score() == 0);
  // Convolutions other than pointwise NCHW stay on the CPU; a conv's bias gradient runs anywhere.
  const Attrs same{{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  CHECK(DirectOp(f.b, {"Conv2d", {input({1, 2, 4, 4}, 1), input({3, 2, 3, 3}, 2)}, same}, true).score() == 0);
  CHECK(DirectOp(f.b, {"Conv2d", {input({1, 2, 4, 4}, 1), input({3, 2, 1, 1}, 2)}, Attrs{{"strides", std::vector<int64_t>{2, 2}}}}, true).score() == 0);
  CHECK(DirectOp(f.b, {"Conv2d", {input({1, 4, 4, 4}, 1), input({4, 2, 1, 1}, 2)}, Attrs{{"groups", int64_t{2}}}}, true).score() == 0);
  CHECK(DirectOp(f.b, {"Conv2d", {input({1, 2, 4, 4}, 1), input({3, 2, 1, 1}, 2)}}, true).score() > 10);
  // What it runs, in its memory: above the CPU backend's 10.
  CHECK(DirectOp(f.b, {"Relu", {input({2, 3}, 1)}}, true).score() > 10);
}
