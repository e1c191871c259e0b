// The cpu backend against the reference kernels: each case builds one op, compiles it, runs the
// same blob on an engine that prefers "cpu" and on one that prefers "ref", checks that the op was
// really bound to the expected backend, and compares every output.
// Scaffolding and the tolerance (1e-4 relative, with why) are tests/support/backend_compare.hpp's.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "support/backward_cases.hpp"

using namespace pock;
using namespace pock::test;

namespace {

const char* const kCpu = "cpu";
const char* const kRef = "ref";

// Runs `c` on cpu and ref, checks the binding and the outputs.
void check_case(const OpCase& c, const std::string& expected_backend = kCpu, int num_threads = 0) {
  check_against_ref(kCpu, c, expected_backend, num_threads);
}

// The backend a library-backed kernel binds to in this build.
#ifdef POCK_HAVE_OPENBLAS
const char* const kBlasBackend = kCpu;
#else
const char* const kBlasBackend = kRef;
#endif

}  // namespace

TEST_CASE("cpu Add/Sub/Mul/Div match ref on per-channel broadcasts", "[ops][cpu]") {
  // One value per channel over NCHW planes (BatchNorm gradients: dy * gamma * invstd as [C, 1, 1]),
  // per-(sample, channel) values, and a column; on either side; odd plane sizes; the thread pool.
  std::mt19937 gen(11);
  uint32_t seed = 1100;
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    const float lo = std::string(op) == "Div" ? 0.5f : -1.0f;
    for (int trial = 0; trial < 2; ++trial) {
      const int64_t n = random_dim(gen, 1, 3), c = random_dim(gen, 1, 9), h = random_dim(gen, 1, 7), w = random_dim(gen, 1, 9);
      const Shape full{n, c, h, w};
      check_case({op, {input(full, ++seed), input({c, 1, 1}, ++seed, lo, 2.0f)}});
      check_case({op, {input({1, c, 1, 1}, ++seed), input(full, ++seed, lo, 2.0f)}});
      check_case({op, {input(full, ++seed), input({n, c, 1, 1}, ++seed, lo, 2.0f)}});
      check_case({op, {input({n * c, h * w}, ++seed), input({n * c, 1}, ++seed, lo, 2.0f)}});  // a column
    }
  }
  check_case({"Mul", {input({4, 64, 32, 32}, 1), input({64, 1, 1}, 2)}});  // thread pool
}

TEST_CASE("cpu Add/Sub/Mul/Div match ref on same-shape, scalar and row broadcasts", "[ops][cpu]") {
  std::mt19937 gen(1);
  uint32_t seed = 100;
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    const float lo = std::string(op) == "Div" ? 0.5f : -1.0f;  // divisors away from zero
    for (int trial = 0; trial < 3; ++trial) {
      const Shape full{random_dim(gen, 1, 4), random_dim(gen, 1, 9), random_dim(gen, 1, 37)};
      check_case({op, {input(full, ++seed), input(full, ++seed, lo, 2.0f)}});
      check_case({op, {input(full, ++seed), input({1}, ++seed, lo, 2.0f)}});                    // scalar b
      check_case({op, {input({}, ++seed), input(full, ++seed, lo, 2.0f)}});                     // scalar a, rank 0
      check_case({op, {input(full, ++seed), input({full[2]}, ++seed, lo, 2.0f)}});              // row b
      check_case({op, {input(full, ++seed), input({1, full[1], full[2]}, ++seed, lo, 2.0f)}});  // rows, leading 1
      check_case({op, {input({full[2]}, ++seed), input(full, ++seed, lo, 2.0f)}});              // row a
    }
  }
  // Large enough to be split over the thread pool, and once more on one thread.
  check_case({"Add", {input({70000}, 7), input({70000}, 8)}});
  check_case({"Mul", {input({300, 257}, 9), input({257}, 10)}}, kCpu, 1);
}

TEST_CASE("cpu activations match ref", "[ops][cpu]") {
  std::mt19937 gen(2);
  uint32_t seed = 200;
  struct Activation {
    const char* op;
    float range;  // inputs in [-range, range]: past every kink and saturation
    Attrs attrs;
  };
  const std::vector<Activation> activations = {
      {"Relu", 3.0f, {}},
      {"Relu6", 9.0f, {}},
      {"HardSwish", 5.0f, {}},
      {"Sigmoid", 12.0f, {}},
      {"Silu", 12.0f, {}},
      {"Gelu", 8.0f, {}},
      {"Gelu", 8.0f, {{"approximate", std::string("tanh")}}},
  };
  for (const Activation& a : activations) {
    for (int trial = 0; trial < 3; ++trial) {
      const Shape shape{random_dim(gen, 1, 5), random_dim(gen, 1, 333)};  // odd sizes exercise loop tails
      check_case({a.op, {input(shape, ++seed, -a.range, a.range)}, a.attrs});
    }
    check_case({a.op, {input({41000}, ++seed, -a.range, a.range)}, a.attrs});  // thread pool
  }
  // Extremes saturate instead of overflowing; NaN passes through every activation.
  const std::vector<float> extremes = {-200.0f, -90.0f, 90.0f, 200.0f, NAN, -0.0f, 0.0f};
  for (const Activation& a : activations) {
    check_case({a.op, {values({static_cast<int64_t>(extremes.size())}, extremes)}, a.attrs});
  }
}

TEST_CASE("cpu Softmax and LogSoftmax match ref on the last axis", "[ops][cpu]") {
  std::mt19937 gen(3);
  uint32_t seed = 300;
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (int trial = 0; trial < 4; ++trial) {
      const Shape shape{random_dim(gen, 1, 3), random_dim(gen, 1, 70), random_dim(gen, 1, 300)};
      check_case({op, {input(shape, ++seed, -8.0f, 8.0f)}, {{"axis", int64_t{-1}}}});
      check_case({op, {input(shape, ++seed, -8.0f, 8.0f)}, {{"axis", int64_t{2}}}});
    }
    check_case({op, {input({2, 5, 1}, ++seed)}, {{"axis", int64_t{1}}}});     // trailing 1s: still contiguous
    check_case({op, {input({600, 128}, ++seed, -8.0f, 8.0f)}});               // thread pool
    check_case({op, {input({7, 33}, ++seed, 999.0f, 1001.0f)}});              // large logits: shift exactly
    check_case({op, {input({4, 6}, ++seed)}, {{"axis", int64_t{0}}}}, kRef);  // strided axis: ref
  }
}

TEST_CASE("cpu LayerNorm and RMSNorm match ref", "[ops][cpu]") {
  std::mt19937 gen(4);
  uint32_t seed = 400;
  for (int trial = 0; trial < 4; ++trial) {
    const int64_t rows = random_dim(gen, 1, 40), width = random_dim(gen, 1, 200);
    // Offset inputs: a mean far from zero catches a one-pass variance.
    check_case(
        {"LayerNorm", {input({rows, width}, ++seed, 2.0f, 4.0f), input({width}, ++seed), input({width}, ++seed)}});
    check_case({"LayerNorm", {input({rows, width}, ++seed), omitted(), omitted()}, {{"eps", 1e-3}}});
    check_case({"LayerNorm", {input({rows, width}, ++seed), frozen({width}, ++seed), omitted()}});
    check_case({"RMSNorm", {input({rows, width}, ++seed), input({width}, ++seed)}});
    check_case({"RMSNorm", {input({rows, width}, ++seed), omitted()}, {{"eps", 1e-5}}});
  }
  // Normalizing the last two dims at once (axis -2).
  check_case(
      {"LayerNorm", {input({3, 4, 5}, ++seed), input({4, 5}, ++seed), input({4, 5}, ++seed)}, {{"axis", int64_t{-2}}}});
  check_case({"RMSNorm", {input({3, 4, 5}, ++seed), input({4, 5}, ++seed)}, {{"axis", int64_t{1}}}});
  check_case({"LayerNorm", {input({512, 96}, ++seed), input({96}, ++seed), input({96}, ++seed)}});  // thread pool
}

TEST_CASE("cpu MatMul matches ref: transposes, batches, broadcast batches", "[ops][cpu]") {
  std::mt19937 gen(5);
  uint32_t seed = 500;
  for (int trial = 0; trial < 3; ++trial) {
    const int64_t m = random_dim(gen, 1, 40), n = random_dim(gen, 1, 40), k = random_dim(gen, 1, 70);
    const int64_t batch = random_dim(gen, 2, 4);
    for (int64_t ta : {0, 1}) {
      for (int64_t tb : {0, 1}) {
        const Attrs attrs{{"transpose_a", ta}, {"transpose_b", tb}};
        const Shape a = ta ? Shape{k, m} : Shape{m, k};
        const Shape b = tb ? Shape{n, k} : Shape{k, n};
        auto batched = [&](int64_t count, const Shape& s) { return Shape{count, s[0], s[1]}; };
        check_case({"MatMul", {input(a, ++seed), input(b, ++seed)}, attrs}, kBlasBackend);
        check_case({"MatMul", {input(batched(batch, a), ++seed), input(batched(batch, b), ++seed)}, attrs},
                   kBlasBackend);
        check_case({"MatMul", {input(batched(batch, a), ++seed), input(b, ++seed)}, attrs}, kBlasBackend);  // shared b
        check_case({"MatMul", {input(a, ++seed), input(batched(batch, b), ++seed)}, attrs}, kBlasBackend);  // shared a
        // [2, 1] x [1, 3] batch dims broadcast to [2, 3].
        check_case({"MatMul", {input({2, 1, a[0], a[1]}, ++seed), input({1, 3, b[0], b[1]}, ++seed)}, attrs},
                   kBlasBackend);
      }
    }
  }
}

TEST_CASE("cpu Linear matches ref with and without bias, frozen or live weights", "[ops][cpu]") {
  std::mt19937 gen(6);
  uint32_t seed = 600;
  for (int trial = 0; trial < 3; ++trial) {
    const int64_t rows = random_dim(gen, 1, 30), n = random_dim(gen, 1, 50), k = random_dim(gen, 1, 90);
    check_case({"Linear", {input({rows, k}, ++seed), input({n, k}, ++seed), input({n}, ++seed)}}, kBlasBackend);
    check_case({"Linear", {input({rows, k}, ++seed), frozen({n, k}, ++seed), frozen({n}, ++seed)}}, kBlasBackend);
    check_case({"Linear", {input({2, rows, k}, ++seed), input({n, k}, ++seed), omitted()}}, kBlasBackend);
    check_case({"Linear", {input({2, rows, k}, ++seed), input({n, k}, ++seed)}}, kBlasBackend);
    check_case({"Linear", {input({k}, ++seed), frozen({n, k}, ++seed), input({n}, ++seed)}}, kBlasBackend);
  }
}

namespace {

OpCase conv_case(const ConvShape& s, bool frozen_weight, bool bias, uint32_t seed) {
  OpCase c{"Conv2d", {input(s.x(), seed)}, s.attrs()};
  c.inputs.push_back(frozen_weight ? frozen(s.w(), seed + 1) : input(s.w(), seed + 1));
  c.inputs.push_back(bias ? input({s.out_channels}, seed + 2) : omitted());
  return c;
}

// Where a Conv2d binds in this build: XNNPACK takes frozen weights; direct loops take depthwise
// layers (no library); OpenBLAS (im2col) takes the rest.
const char* conv_backend(const ConvShape& s, bool frozen_weight) {
#ifdef POCK_HAVE_XNNPACK
  if (frozen_weight) return kCpu;
#endif
  return s.depthwise() ? kCpu : kBlasBackend;
}

}  // namespace

TEST_CASE("cpu Conv2d matches ref: strided, padded, dilated, grouped, depthwise", "[ops][cpu]") {
  std::mt19937 gen(7);
  uint32_t seed = 700;
  for (int trial = 0; trial < 2; ++trial) {
    const int64_t h = random_dim(gen, 5, 17), w = random_dim(gen, 5, 17), c = 2 * random_dim(gen, 1, 4);
    const std::vector<ConvShape> shapes = {
        {1, c, h, w, 8, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}},      // same padding
        {2, c, h, w, 5, 3, 3, 1, {2, 2}, {1, 1, 0, 0}, {1, 1}},      // strided, asymmetric padding
        {1, c, h, w, 6, 1, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}},      // pointwise: GEMM on the planes
        {1, c, h, w, 4, 1, 1, 1, {2, 2}, {0, 0, 0, 0}, {1, 1}},      // strided pointwise
        {1, c, h, w, 6, 3, 3, 2, {1, 1}, {1, 1, 1, 1}, {1, 1}},      // grouped
        {1, c, h, w, 4, 3, 3, 1, {1, 1}, {2, 2, 2, 2}, {2, 2}},      // dilated
        {1, c, h, w, 3, 5, 3, 1, {1, 2}, {2, 1, 2, 1}, {1, 1}},      // rectangular kernel, mixed strides
        {2, c, h, w, c, 3, 3, c, {1, 1}, {1, 1, 1, 1}, {1, 1}},      // depthwise
        {1, c, h, w, c, 3, 3, c, {2, 2}, {1, 1, 1, 1}, {1, 1}},      // depthwise, strided
        {1, c, h, w, 2 * c, 5, 5, c, {1, 1}, {2, 2, 2, 2}, {1, 1}},  // depthwise, multiplier 2
        {1, c, h, w, c, 3, 3, c, {1, 1}, {0, 2, 1, 0}, {2, 1}},      // depthwise, dilated, odd padding
    };
    for (const ConvShape& s : shapes) {
      for (bool frozen_weight : {true, false}) {
        for (bool bias : {true, false}) {
          INFO((frozen_weight ? "frozen weight" : "live weight") << (bias ? ", bias" : ", no bias"));
          check_case(conv_case(s, frozen_weight, bias, seed += 3), conv_backend(s, frozen_weight));
        }
      }
    }
  }
  // A MobileNet-sized layer on one thread.
  check_case(conv_case({1, 32, 28, 28, 32, 3, 3, 32, {1, 1}, {1, 1, 1, 1}, {1, 1}}, true, true, 790), kCpu, 1);
  check_case(conv_case({1, 16, 28, 28, 24, 1, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}}, false, true, 793), kBlasBackend, 1);
}

TEST_CASE("cpu Conv2d reads a live weight and bias afresh on every run", "[ops][cpu]") {
  // What training does between steps: the weight (or only the bias) changes in place. A kernel
  // that packed them at prepare would keep computing with the old values.
  const ConvShape dense{1, 4, 9, 9, 6, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}};
  const ConvShape depthwise{1, 4, 9, 9, 4, 3, 3, 4, {1, 1}, {1, 1, 1, 1}, {1, 1}};
  for (const ConvShape& s : {dense, depthwise}) {
    for (bool frozen_weight : {true, false}) {
      const OpCase c = conv_case(s, frozen_weight, /*bias=*/true, 900);
      BoundCase cpu = BoundCase::open(c, kCpu);
      BoundCase ref = BoundCase::open(c, kRef);
      compare_results(cpu.infer(), ref.infer(), c.tolerance);
      for (uint32_t step = 1; step <= 2; ++step) {
        INFO("step " << step << (frozen_weight ? ", new bias" : ", new weight and bias"));
        if (!frozen_weight) {
          const std::vector<float> w = uniform(c.inputs[1].shape, 910 + step);
          cpu.set_input(1, w);
          ref.set_input(1, w);
        }
        const std::vector<float> b = uniform(c.inputs[2].shape, 920 + step);
        cpu.set_input(2, b);
        ref.set_input(2, b);
        compare_results(cpu.infer(), ref.infer(), c.tolerance);
      }
    }
  }
}

TEST_CASE("cpu Pad matches ref: pads, crops, fill values, ranks 1-4", "[ops][cpu]") {
  std::mt19937 gen(12);
  uint32_t seed = 1200;
  auto pad_case = [&](const Shape& shape, std::vector<int64_t> pads, double value) {
    OpCase c{"Pad", {input(shape, ++seed)}, {}};
    c.attrs.set("pads", pads);
    c.attrs.set("value", value);
    return c;
  };
  check_case(pad_case({7}, {2, 3}, 0.0));
  check_case(pad_case({2, 3, 5, 6}, {0, 0, 1, 1, 0, 0, 1, 1}, 0.0));     // "same" padding of a 3x3 conv
  check_case(pad_case({2, 3, 5, 6}, {0, 0, 0, 0, 0, 0, 1, 1}, 0.0));     // TensorFlow's asymmetric pad
  check_case(pad_case({2, 3, 7, 8}, {0, 0, -1, -1, 0, 0, -1, -1}, 0.0)); // its gradient: a crop
  check_case(pad_case({2, 3, 4}, {1, 0, 2, 0, 1, 0}, -1.5));            // leading axes padded, fill value
  check_case(pad_case({3, 4, 5}, {0, 0, -7, 0, 0, 2}, 0.0));            // last axis cropped away entirely
  for (int trial = 0; trial < 6; ++trial) {
    const Shape s{random_dim(gen, 1, 3), random_dim(gen, 1, 4), random_dim(gen, 2, 9), random_dim(gen, 2, 9)};
    std::vector<int64_t> pads;
    for (int i = 0; i < 8; ++i) pads.push_back(random_dim(gen, i % 4 < 2 ? 0 : -1, 2));
    check_case(pad_case(s, pads, 0.25));
  }
  check_case(pad_case({8, 32, 56, 56}, {0, 0, 1, 1, 0, 0, 1, 1}, 0.0));  // thread pool
}
