// Conv2d with layout "NHWC" (x and y [N,H,W,C], weight still [O,C/g,kh,kw]): the reference kernel
// against its own NCHW form on random shapes, with the data permuted here; and the cpu backend's
// channels-last XNNPACK path (frozen weight, constant or trainable bias, fused activation)
// against the reference kernel, and its 1x1 GEMM over the batch (fed weight).
#include <catch2/catch.hpp>

#include <random>

#include "blob/reader.hpp"
#include "kernels/cpu/conv_kernel.hpp"
#include "kernels/cpu/conv_pointwise_nhwc.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;
using Ints = std::vector<int64_t>;

namespace {

// [N, C, H, W] -> [N, H, W, C] and back.
std::vector<float> to_nhwc(const std::vector<float>& x, const Ints& s) {
  std::vector<float> y(x.size());
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t c = 0; c < s[1]; ++c)
      for (int64_t p = 0; p < s[2] * s[3]; ++p) {
        y[(n * s[2] * s[3] + p) * s[1] + c] = x[(n * s[1] + c) * s[2] * s[3] + p];
      }
  return y;
}
Ints nhwc_shape(const Ints& s) { return {s[0], s[2], s[3], s[1]}; }

struct Case {
  Ints x;  // NCHW
  int64_t out, kh, kw, groups;
  Ints strides, pads, dilations;
  std::string activation;
};

Case random_case(std::mt19937& gen) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(gen); };
  Case k;
  k.groups = pick(1, 3);
  const bool depthwise = pick(0, 2) == 0;
  const int64_t in_per_group = depthwise ? 1 : pick(1, 3);
  if (depthwise) k.groups = pick(2, 6);
  k.x = {pick(1, 2), k.groups * in_per_group, pick(5, 9), pick(4, 9)};  // 5: a dilated 3-tap window fits
  k.out = k.groups * pick(1, 3);
  k.kh = pick(1, 3);
  k.kw = pick(1, 3);
  k.strides = {pick(1, 2), pick(1, 2)};
  k.pads = {pick(0, 1), pick(0, 1), pick(0, 1), pick(0, 1)};
  k.dilations = {pick(1, 2), 1};
  const char* activations[] = {"none", "relu", "relu6"};
  k.activation = activations[pick(0, 2)];
  return k;
}

Attrs attrs_of(const Case& k, bool nhwc) {
  Attrs a{{"strides", k.strides}, {"pads", k.pads},           {"dilations", k.dilations},
          {"groups", k.groups},   {"activation", k.activation}};
  if (nhwc) a.set("layout", std::string("NHWC"));
  return a;
}

std::string describe(const Case& k) {
  return "x " + shape_str(k.x) + " out " + std::to_string(k.out) + " k " + std::to_string(k.kh) + "x" +
         std::to_string(k.kw) + " groups " + std::to_string(k.groups) + " strides " + shape_str(k.strides) + " pads " +
         shape_str(k.pads) + " dilations " + shape_str(k.dilations) + " " + k.activation;
}

void require_close(const std::vector<float>& got, const std::vector<float>& want, double tolerance) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == Approx(want[i]).margin(tolerance));
}

// y of the blob's one output, inferred by the cpu backend and then by ref, each input fed by name.
std::vector<std::vector<float>> y_on_cpu_and_ref(const std::vector<uint8_t>& blob,
                                                 const std::vector<std::pair<std::string, std::vector<float>>>& feeds) {
  std::vector<std::vector<float>> outputs;
  for (const char* backend : {"cpu", "ref"}) {
    Engine::Options options;
    options.backend = backend;
    auto engine = Engine::open_buffer(blob.data(), blob.size(), options);
    REQUIRE(engine.is_ok());
    for (const auto& [name, values] : feeds) REQUIRE(engine->set_input(name, values).is_ok());
    REQUIRE(engine->infer().is_ok());
    outputs.push_back(engine->output<float>("y").value());
  }
  return outputs;
}

}  // namespace

TEST_CASE("Conv2d NHWC: shape inference permutes x and y, not the weight", "[ops][conv]") {
  Graph g;
  const TensorId x = g.add_input("x", DType::kF32, {2, 9, 7, 4});  // N, H, W, C
  const TensorId w = g.add_input("w", DType::kF32, {6, 2, 3, 3});  // groups 2
  auto y = g.add_node("Conv2d", {x, w},
                      {{"layout", std::string("NHWC")}, {"groups", int64_t{2}}, {"strides", Ints{2, 1}}});
  REQUIRE(y.is_ok());
  CHECK(g.tensor(y.value()[0]).shape == Shape{2, 4, 5, 6});
  CHECK_FALSE(g.add_node("Conv2d", {x, w}, {{"layout", std::string("NWHC")}}).is_ok());
}

TEST_CASE("Conv2d NHWC: the reference kernel matches its NCHW form on random shapes", "[ops][conv]") {
  std::mt19937 gen(11);
  for (int trial = 0; trial < 30; ++trial) {
    const Case k = random_case(gen);
    INFO(describe(k));
    const Ints w_shape{k.out, k.x[1] / k.groups, k.kh, k.kw};
    const auto x = random_floats(static_cast<size_t>(numel(k.x)), 300 + trial);
    const auto w = random_floats(static_cast<size_t>(numel(w_shape)), 400 + trial);
    const auto b = random_floats(static_cast<size_t>(k.out), 500 + trial);
    auto nchw = run_op("Conv2d", {HostTensor::f32(k.x, x), HostTensor::f32(w_shape, w), HostTensor::f32({k.out}, b)},
                       attrs_of(k, false), {}, "ref");
    REQUIRE(nchw.is_ok());
    auto nhwc = run_op("Conv2d",
                       {HostTensor::f32(nhwc_shape(k.x), to_nhwc(x, k.x)), HostTensor::f32(w_shape, w),
                        HostTensor::f32({k.out}, b)},
                       attrs_of(k, true), {}, "ref");
    INFO(nhwc.status().to_string());
    REQUIRE(nhwc.is_ok());
    const Ints y_shape = nchw.value()[0].shape;
    REQUIRE(nhwc.value()[0].shape == nhwc_shape(y_shape));
    // Same sums in the same order: equal up to float rounding of equal doubles.
    require_close(nhwc.value()[0].f32(), to_nhwc(nchw.value()[0].f32(), y_shape), 1e-6);
  }
}

TEST_CASE("Conv2d NHWC: the cpu backend's XNNPACK path matches the reference kernel", "[ops][conv][cpu]") {
  if (!cpu::xnnpack_conv_available()) {
    WARN("SKIPPED: this build has no XNNPACK, the only cpu path for NHWC convolutions");
    return;
  }
  std::mt19937 gen(23);
  for (int trial = 0; trial < 20; ++trial) {
    const Case k = random_case(gen);
    // Alternate a constant bias (inside the XNNPACK operator) and a fed one (added after it).
    const bool constant_bias = trial % 2 == 0;
    INFO(describe(k) << (constant_bias ? ", constant bias" : ", fed bias"));
    const Ints w_shape{k.out, k.x[1] / k.groups, k.kh, k.kw};
    const auto w = random_floats(static_cast<size_t>(numel(w_shape)), 600 + trial);
    const auto b = random_floats(static_cast<size_t>(k.out), 700 + trial);
    const auto x = random_floats(static_cast<size_t>(numel(k.x)), 800 + trial);
    Graph g;
    const TensorId xi = g.add_input("x", DType::kF32, nhwc_shape(k.x));
    const TensorId wi = g.add_constant("w", DType::kF32, w_shape, HostTensor::f32(w_shape, w).bytes);
    const TensorId bi = constant_bias ? g.add_constant("b", DType::kF32, {k.out}, HostTensor::f32({k.out}, b).bytes)
                                      : g.add_input("b", DType::kF32, {k.out});
    auto y = g.add_node("Conv2d", {xi, wi, bi}, attrs_of(k, true), "conv");
    REQUIRE(y.is_ok());
    REQUIRE(g.mark_output(y.value()[0], "y").is_ok());
    auto blob = compile(g, nullptr);
    REQUIRE(blob.is_ok());
    // The compiler records the backend that claims the op: cpu, else this compares ref to ref.
    BlobView view;
    REQUIRE(open_blob(blob->data(), blob->size(), {}, &view).is_ok());
    auto spec = read_program_spec(view);
    REQUIRE(spec.is_ok());
    for (const OpSpec& op : spec->ops) {
      if (op.op == "Conv2d") CHECK(op.backend == "cpu");
    }
    std::vector<std::pair<std::string, std::vector<float>>> feeds = {{"x", x}};
    if (!constant_bias) feeds.emplace_back("b", b);
    const auto outputs = y_on_cpu_and_ref(blob.value(), feeds);
    require_close(outputs[0], outputs[1], 1e-4);
  }
}

namespace {

// y of an NHWC 1x1 Conv2d on the cpu backend and on ref; the weight fed as an input or constant.
std::pair<std::vector<float>, std::vector<float>> cpu_and_ref_pointwise(const Ints& x_nchw, int64_t out,
                                                                         const std::string& activation, bool bias,
                                                                         bool constant_weight, uint32_t seed) {
  const Ints w_shape{out, x_nchw[1], 1, 1};
  const auto x = random_floats(static_cast<size_t>(numel(x_nchw)), seed, -3.0f, 3.0f);
  const auto w = random_floats(static_cast<size_t>(numel(w_shape)), seed + 1);
  const auto b = random_floats(static_cast<size_t>(out), seed + 2);
  Graph g;
  const TensorId xi = g.add_input("x", DType::kF32, nhwc_shape(x_nchw));
  const TensorId wi = constant_weight
                          ? g.add_constant("w", DType::kF32, w_shape, HostTensor::f32(w_shape, w).bytes)
                          : g.add_input("w", DType::kF32, w_shape);
  std::vector<TensorId> inputs = {xi, wi};
  if (bias) inputs.push_back(g.add_constant("b", DType::kF32, {out}, HostTensor::f32({out}, b).bytes));
  auto y = g.add_node("Conv2d", inputs, Attrs{{"layout", std::string("NHWC")}, {"activation", activation}}, "conv");
  REQUIRE(y.is_ok());
  REQUIRE(g.mark_output(y.value()[0], "y").is_ok());
  auto blob = compile(g, nullptr);
  REQUIRE(blob.is_ok());
  std::vector<std::pair<std::string, std::vector<float>>> feeds = {{"x", to_nhwc(x, x_nchw)}};
  if (!constant_weight) feeds.emplace_back("w", w);
  const auto outputs = y_on_cpu_and_ref(blob.value(), feeds);
  return {outputs[0], outputs[1]};
}

}  // namespace

TEST_CASE("Conv2d NHWC: the cpu backend's 1x1 ways match the reference kernel", "[ops][conv][cpu]") {
  struct Pointwise {
    Ints x;  // NCHW
    int64_t out;
    std::string activation;
    bool bias;
  };
  // Rows (N*H*W) of one block, of several with a ragged last one, output widths off the tiles'
  // 16, and reductions on both sides of the 32 channels where the GEMM takes over from the
  // register tiles.
  const Pointwise cases[] = {{{2, 40, 4, 5}, 24, "relu6", true},   {{3, 77, 11, 9}, 19, "none", true},
                             {{1, 32, 17, 16}, 40, "relu", false},  {{2, 16, 9, 9}, 96, "relu6", true},
                             {{4, 24, 8, 8}, 37, "none", false},    {{1, 3, 13, 7}, 8, "relu", true},
                             {{2, 17, 10, 10}, 144, "relu6", false}};
  uint32_t seed = 900;
  for (const Pointwise& k : cases) {
    const bool gemm = k.x[1] >= 32;
    if (gemm && !cpu::pointwise_nhwc_available()) {
      WARN("SKIPPED " << shape_str(k.x) << ": this build has no OpenBLAS, which the NHWC 1x1 GEMM runs on");
      continue;
    }
    for (bool constant_weight : {false, true}) {
      INFO("x " << shape_str(k.x) << " out " << k.out << " " << k.activation << (k.bias ? " with bias" : "")
                << (constant_weight ? ", constant weight" : ", fed weight"));
      const int gemms = cpu::conv_pointwise_nhwc_testing::kernels_made();
      const int tiles = cpu::conv_pointwise_nhwc_testing::short_kernels_made();
      const auto [cpu_y, ref_y] = cpu_and_ref_pointwise(k.x, k.out, k.activation, k.bias, constant_weight, seed += 3);
      // Both ways go before XNNPACK, so the one the depth picks ran.
      CHECK(cpu::conv_pointwise_nhwc_testing::kernels_made() - gemms == (gemm ? 1 : 0));
      CHECK(cpu::conv_pointwise_nhwc_testing::short_kernels_made() - tiles == (gemm ? 0 : 1));
      require_close(cpu_y, ref_y, 1e-4);
    }
  }
}
