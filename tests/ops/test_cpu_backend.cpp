// The cpu backend against the reference kernels: each case builds one op, compiles it, runs the
// same blob on an engine that prefers "cpu" and on one that prefers "ref", checks that the op was
// really bound to the expected backend, and compares every output.
//
// Tolerance: |cpu - ref| <= 1e-4 * (|ref| + 1). The cpu kernels compute in f32 with a different
// order of operations than ref's double sums (blocked GEMM, vector lanes, XNNPACK's own kernels)
// and use polynomial exp/erf accurate to a few f32 ulp; on these unit-scale inputs that is an
// error of about 1e-6. 1e-4 leaves that 100x headroom while any indexing, padding or broadcasting
// mistake shows up as an O(0.1) error. The "+1" keeps results that cancel to near zero (a dot
// product, x - mean) from demanding a relative precision f32 sums cannot give.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "pock/compiler.hpp"
#include "program_generated.h"
#include "runtime/engine_core.hpp"

using namespace pock;

namespace {

struct Operand {
  Shape shape;
  std::vector<float> values;
  bool frozen = false;   // a model parameter (constant in the blob) rather than a graph input
  bool omitted = false;  // an absent optional input
};

struct OpCase {
  std::string op;
  std::vector<Operand> inputs;
  Attrs attrs;
};

std::vector<float> uniform(const Shape& shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(numel(shape)));
  for (float& x : v) x = dist(gen);
  return v;
}

Operand input(Shape shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::vector<float> v = uniform(shape, seed, lo, hi);
  return Operand{std::move(shape), std::move(v)};
}

Operand frozen(Shape shape, uint32_t seed) {
  Operand o = input(std::move(shape), seed);
  o.frozen = true;
  return o;
}

Operand omitted() { return Operand{{}, {}, false, true}; }

// One compiled case, open on one backend.
class Bound {
 public:
  static Bound open(const OpCase& c, const std::string& backend, int num_threads = 0) {
    Bound b;
    Graph g;
    std::vector<TensorId> ids;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      const Operand& in = c.inputs[i];
      const std::string name = "in" + std::to_string(i);
      if (in.omitted) {
        ids.push_back(kNoTensor);
      } else if (in.frozen) {
        ids.push_back(g.add_parameter_f32(name, in.shape, in.values));
      } else {
        ids.push_back(g.add_input(name, DType::kF32, in.shape));
      }
    }
    auto outs = g.add_node(c.op, ids, c.attrs, "node");
    REQUIRE(outs.is_ok());
    for (size_t i = 0; i < outs->size(); ++i) {
      REQUIRE(g.mark_output((*outs)[i], "out" + std::to_string(i)).is_ok());
      b.output_sizes_.push_back(static_cast<size_t>(numel(g.tensor((*outs)[i]).shape)));
    }
    auto blob = compile(g, nullptr);
    INFO(blob.status().to_string());
    REQUIRE(blob.is_ok());
    b.blob_ = std::make_unique<std::vector<uint8_t>>(std::move(blob.value()));
    EngineOptions options;
    options.backend = backend;
    options.num_threads = num_threads;
    auto engine = EngineCore::open_buffer(b.blob_->data(), b.blob_->size(), options);
    INFO(engine.status().to_string());
    REQUIRE(engine.is_ok());
    b.engine_ = std::move(engine.value());
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      if (!c.inputs[i].omitted && !c.inputs[i].frozen) b.set_input(i, c.inputs[i].values);
    }
    return b;
  }

  void set_input(size_t i, const std::vector<float>& values) {
    REQUIRE(engine_->set_input("in" + std::to_string(i), values.data(), values.size() * sizeof(float)).is_ok());
  }

  std::vector<std::vector<float>> infer() {
    const Status s = engine_->infer();
    INFO(s.to_string());
    REQUIRE(s.is_ok());
    std::vector<std::vector<float>> outs;
    for (size_t i = 0; i < output_sizes_.size(); ++i) {
      std::vector<float> v(output_sizes_[i]);
      REQUIRE(engine_->get_output("out" + std::to_string(i), v.data(), v.size() * sizeof(float)).is_ok());
      outs.push_back(std::move(v));
    }
    return outs;
  }

  // The backend the engine bound the op of type `op` to.
  std::string backend_of(const std::string& op) const {
    const auto* ops = engine_->blob().program->ops();
    const std::vector<std::string> backends = engine_->op_backends();
    for (flatbuffers::uoffset_t i = 0; i < ops->size(); ++i) {
      if (ops->Get(i)->op()->str() == op) return backends[i];
    }
    return "(no " + op + " op in the blob)";
  }

 private:
  std::unique_ptr<std::vector<uint8_t>> blob_;  // the engine reads it in place
  std::unique_ptr<EngineCore> engine_;
  std::vector<size_t> output_sizes_;
};

// Empty when every element is within tolerance; else a description of the worst one.
std::string mismatch(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size()) return "sizes differ";
  size_t worst = 0;
  double worst_excess = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(got[i]) && std::isnan(want[i])) continue;  // NaN in, NaN out: as ref
    const double err = std::fabs(static_cast<double>(got[i]) - want[i]);
    const double excess = err - 1e-4 * (std::fabs(want[i]) + 1.0);
    if (!(excess <= 0.0) && !(excess < worst_excess)) {  // NaN counts as a mismatch
      worst = i;
      worst_excess = std::isnan(excess) ? INFINITY : excess;
    }
  }
  if (worst_excess == 0.0) return "";
  std::ostringstream s;
  s << "element " << worst << ": cpu " << got[worst] << ", ref " << want[worst];
  return s.str();
}

void compare(std::vector<std::vector<float>> got, std::vector<std::vector<float>> want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("output " << i);
    CHECK(mismatch(got[i], want[i]) == "");
  }
}

const char* const kCpu = "cpu";
const char* const kRef = "ref";

// Runs `c` on cpu and ref, checks the binding and the outputs.
void check_case(const OpCase& c, const std::string& expected_backend = kCpu, int num_threads = 0) {
  std::ostringstream what;
  what << c.op;
  for (const Operand& in : c.inputs) {
    what << " " << (in.omitted ? "-" : shape_str(in.shape)) << (in.frozen ? "(frozen)" : "");
  }
  INFO(what.str());
  Bound cpu = Bound::open(c, kCpu, num_threads);
  Bound ref = Bound::open(c, kRef);
  CHECK(cpu.backend_of(c.op) == expected_backend);
  CHECK(ref.backend_of(c.op) == kRef);
  compare(cpu.infer(), ref.infer());
}

// The backend a library-backed kernel binds to in this build.
#ifdef POCK_HAVE_OPENBLAS
const char* const kBlasBackend = kCpu;
#else
const char* const kBlasBackend = kRef;
#endif

int64_t random_dim(std::mt19937& gen, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(gen);
}

}  // namespace

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

TEST_CASE("cpu binary ops leave other broadcasts to ref", "[ops][cpu]") {
  // Both operands broadcast: no fast path, so the op must fall back and still be right.
  check_case({"Add", {input({3, 1, 5}, 1), input({1, 4, 5}, 2)}}, kRef);
  check_case({"Mul", {input({4, 6}, 3), input({4, 1}, 4)}}, kRef);  // a column, not a row
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
    check_case({a.op, {Operand{{static_cast<int64_t>(extremes.size())}, extremes}}, a.attrs});
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

struct ConvShape {
  int64_t batch, channels, height, width, out_channels, kernel_h, kernel_w, groups;
  std::vector<int64_t> strides, pads, dilations;
};

OpCase conv_case(const ConvShape& s, bool frozen_weight, bool bias, uint32_t seed) {
  OpCase c{"Conv2d", {input({s.batch, s.channels, s.height, s.width}, seed)}, {}};
  const Shape w{s.out_channels, s.channels / s.groups, s.kernel_h, s.kernel_w};
  c.inputs.push_back(frozen_weight ? frozen(w, seed + 1) : input(w, seed + 1));
  c.inputs.push_back(bias ? input({s.out_channels}, seed + 2) : omitted());
  c.attrs.set("strides", s.strides);
  c.attrs.set("pads", s.pads);
  c.attrs.set("dilations", s.dilations);
  c.attrs.set("groups", s.groups);
  return c;
}

// Where a Conv2d binds in this build: XNNPACK takes frozen weights; direct loops take depthwise
// layers (no library); OpenBLAS (im2col) takes the rest.
const char* conv_backend(const ConvShape& s, bool frozen_weight) {
#ifdef POCK_HAVE_XNNPACK
  if (frozen_weight) return kCpu;
#endif
  const bool depthwise = s.groups > 1 && s.channels == s.groups;
  return depthwise ? kCpu : kBlasBackend;
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
      Bound cpu = Bound::open(c, kCpu);
      Bound ref = Bound::open(c, kRef);
      compare(cpu.infer(), ref.infer());
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
        compare(cpu.infer(), ref.infer());
      }
    }
  }
}
