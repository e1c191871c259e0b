// ONNX import across opsets 7 to 23: every node written in an older or newer form imports with its
// own opset's meaning, or is refused by name. Expected values are computed here from the ONNX
// operator definitions (loops over the elements), never by the importer or pock's kernels.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "frontend/onnx_test_run.hpp"

using namespace pock;
using pock::testing::import_error;
using pock::testing::import_model;
using pock::testing::import_ok;
using pock::testing::infer_one;
using pock::testing::OnnxModel;

namespace {

using Ints = std::vector<int64_t>;

std::vector<std::string> ops_of(const Graph& g) {
  std::vector<std::string> ops;
  for (const Node& n : g.nodes()) ops.push_back(n.op);
  return ops;
}

void string_attr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

std::vector<float> iota(size_t n, float start = 0, float step = 1) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i);
  return v;
}

// x -> op (with the given int-list attributes) -> y, at `opset`.
OnnxModel one_node(int64_t opset, const std::string& op, const std::vector<int64_t>& x_shape,
                   const std::vector<std::pair<std::string, Ints>>& attrs) {
  OnnxModel m(opset);
  m.input("x", x_shape);
  auto& n = m.node(op, {"x"}, {"y"}, "node");
  for (const auto& a : attrs) OnnxModel::attr(n, a.first, a.second);
  m.output("y");
  return m;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

void check_near(const std::vector<float>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) CHECK(got[i] == Approx(want[i]).epsilon(1e-5).margin(1e-6));
}

}  // namespace

TEST_CASE("the default-domain opset window is 7 to 23", "[onnx][opset]") {
  for (int64_t opset : {7, 12, 18, 23}) {
    OnnxModel m(opset);
    m.input("x", {2});
    m.node("Relu", {"x"}, {"y"});
    m.output("y");
    INFO("opset " << opset);
    const Graph g = import_ok(m);
    CHECK(infer_one(g, "x", {-1, 2}, "y") == std::vector<float>{0, 2});
  }
  OnnxModel newer(24);
  newer.input("x", {2});
  newer.node("Relu", {"x"}, {"y"});
  newer.output("y");
  const std::string msg = import_error(newer);
  CHECK(has(msg, "opset 24"));
  CHECK(has(msg, "7 to 23"));
}

TEST_CASE("a model below opset 7 imports when its ops are the same at 7", "[onnx][opset]") {
  OnnxModel same(6);  // Relu-6 is Relu at opset 7 too
  same.input("x", {2});
  same.node("Relu", {"x"}, {"y"});
  same.output("y");
  CHECK(infer_one(import_ok(same), "x", {-1, 2}, "y") == std::vector<float>{0, 2});

  // Ops that changed by 7 are converted by onnx's version converter: test_onnx_legacy_opsets.cpp.
  OnnxModel changed(6);  // Add-6 broadcasts only with `broadcast` = 1; Add-7 always does
  changed.input("x", {2});
  changed.node("Relu", {"x"}, {"r"});
  changed.node("Add", {"r", "x"}, {"y"}, "add");
  changed.output("y");
  CHECK(infer_one(import_ok(changed), "x", {-1, 2}, "y") == std::vector<float>{-1, 4});
}

TEST_CASE("an op used before ONNX defines it is refused with the opset that does", "[onnx][opset]") {
  OnnxModel m(7);
  m.input("x", {2, 1});
  m.ints("shape", {2}, {2, 3});
  m.node("Expand", {"x", "shape"}, {"y"}, "expand");
  m.output("y");
  const std::string msg = import_error(m);
  CHECK(has(msg, "'expand' (Expand)"));
  CHECK(has(msg, "from opset 8"));
  CHECK(has(msg, "opset 7"));

  OnnxModel gelu(18);  // Gelu is an ONNX op from opset 20
  gelu.input("x", {2});
  gelu.node("Gelu", {"x"}, {"y"}, "gelu");
  gelu.output("y");
  CHECK(has(import_error(gelu), "from opset 20"));
}

TEST_CASE("Softmax before opset 13 normalizes x flattened to 2-D at axis", "[onnx][opset]") {
  const std::vector<float> x = iota(24, -3.0f, 0.25f);
  SECTION("axis 1 of [2, 3, 4]: one softmax over each batch row's 12 values") {
    OnnxModel m(11);
    m.input("x", {2, 3, 4});
    OnnxModel::attr(m.node("Softmax", {"x"}, {"y"}, "softmax"), "axis", int64_t{1});
    m.output("y");
    const Graph g = import_ok(m);
    std::vector<double> want(24);
    for (int b = 0; b < 2; ++b) {
      double sum = 0;
      for (int i = 0; i < 12; ++i) sum += std::exp(double(x[b * 12 + i]));
      for (int i = 0; i < 12; ++i) want[b * 12 + i] = std::exp(double(x[b * 12 + i])) / sum;
    }
    check_near(infer_one(g, "x", x, "y"), want);
  }
  SECTION("LogSoftmax with the default axis 1 of [4, 6] is the per-row op, with nothing around it") {
    OnnxModel m(9);
    m.input("x", {4, 6});
    m.node("LogSoftmax", {"x"}, {"y"}, "logsoftmax");
    m.output("y");
    const Graph g = import_ok(m);
    CHECK(ops_of(g) == std::vector<std::string>{"LogSoftmax"});
    std::vector<double> want(24);
    for (int r = 0; r < 4; ++r) {
      double sum = 0;
      for (int i = 0; i < 6; ++i) sum += std::exp(double(x[r * 6 + i]));
      for (int i = 0; i < 6; ++i) want[r * 6 + i] = double(x[r * 6 + i]) - std::log(sum);
    }
    check_near(infer_one(g, "x", x, "y"), want);
  }
}

TEST_CASE("axes, split, bounds and pads given as attributes before they became inputs", "[onnx][opset]") {
  SECTION("Squeeze and Unsqueeze axes (opset 11)") {
    OnnxModel m(11);
    m.input("x", {1, 3, 1});
    OnnxModel::attr(m.node("Squeeze", {"x"}, {"s"}, "squeeze"), "axes", Ints{0});
    OnnxModel::attr(m.node("Unsqueeze", {"s"}, {"y"}, "unsqueeze"), "axes", Ints{0, 3});
    m.output("y");
    const Graph g = import_ok(m);
    CHECK(g.tensor(g.outputs()[0]).shape == Shape{1, 3, 1, 1});
    CHECK(infer_one(g, "x", {1, 2, 3}, "y") == std::vector<float>{1, 2, 3});
  }
  SECTION("ReduceSum axes (opset 12)") {
    const Graph g = import_ok(one_node(12, "ReduceSum", {2, 3}, {{"axes", {1}}}));
    CHECK(infer_one(g, "x", {1, 2, 3, 4, 5, 6}, "y") == std::vector<float>{6, 15});
  }
  SECTION("Split sizes (opset 11)") {
    OnnxModel m(11);
    m.input("x", {3, 2});
    auto& s = m.node("Split", {"x"}, {"a", "b"}, "split");
    OnnxModel::attr(s, "split", Ints{1, 2});
    m.output("b");
    const Graph g = import_ok(m);
    CHECK(infer_one(g, "x", iota(6), "b") == std::vector<float>{2, 3, 4, 5});
  }
  SECTION("Slice starts, ends and axes (opset 9)") {
    const Graph g = import_ok(one_node(9, "Slice", {2, 5}, {{"starts", {1}}, {"ends", {4}}, {"axes", {1}}}));
    CHECK(infer_one(g, "x", iota(10), "y") == std::vector<float>{1, 2, 3, 6, 7, 8});
  }
  SECTION("Pad pads and value (opset 10)") {
    OnnxModel m(10);
    m.input("x", {1, 2});
    auto& p = m.node("Pad", {"x"}, {"y"}, "pad");
    OnnxModel::attr(p, "pads", Ints{0, 1, 0, 2});
    OnnxModel::attr(p, "value", 2.5f);
    m.output("y");
    const Graph g = import_ok(m);
    CHECK(infer_one(g, "x", {7, 8}, "y") == std::vector<float>{2.5f, 7, 8, 2.5f, 2.5f});
  }
  SECTION("Clip min and max (opset 10)") {
    OnnxModel m(10);
    m.input("x", {4});
    auto& c = m.node("Clip", {"x"}, {"y"}, "clip");
    OnnxModel::attr(c, "min", -1.0f);
    OnnxModel::attr(c, "max", 0.5f);
    m.output("y");
    const Graph g = import_ok(m);
    CHECK(infer_one(g, "x", {-3, -0.25f, 0.25f, 2}, "y") == std::vector<float>{-1, -0.25f, 0.25f, 0.5f});
  }
  SECTION("Dropout ratio (opset 10): kept for training, identity at inference") {
    OnnxModel m(10);
    m.input("x", {3});
    OnnxModel::attr(m.node("Dropout", {"x"}, {"y"}, "dropout"), "ratio", 0.25f);
    m.output("y");
    const Graph g = import_ok(m);
    REQUIRE(ops_of(g) == std::vector<std::string>{"Dropout"});
    CHECK(g.nodes()[0].attrs.get_float("ratio", 0) == Approx(0.25));
    CHECK(infer_one(g, "x", {1, 2, 3}, "y") == std::vector<float>{1, 2, 3});
  }
}

TEST_CASE("opset 18 reductions take axes as an input and may be no-ops", "[onnx][opset]") {
  OnnxModel m(18);
  m.input("x", {2, 3});
  m.ints("axes", {1}, {0});
  m.ints("none", {0}, {});
  m.node("ReduceMean", {"x", "axes"}, {"mean"}, "mean");
  auto& noop = m.node("ReduceMax", {"mean", "none"}, {"y"}, "noop");
  OnnxModel::attr(noop, "noop_with_empty_axes", int64_t{1});
  m.output("y");
  const Graph g = import_ok(m);
  CHECK(infer_one(g, "x", {1, 2, 3, 5, 6, 7}, "y") == std::vector<float>{3, 4, 5});

  OnnxModel bad(18);  // the opset-18 schema comes from the table, not libonnx 1.12
  bad.input("x", {2, 3});
  bad.ints("axes", {1}, {0});
  OnnxModel::attr(bad.node("ReduceMean", {"x", "axes"}, {"y"}, "mean"), "axis", int64_t{0});
  bad.output("y");
  const std::string msg = import_error(bad);
  CHECK(has(msg, "ReduceMean-18"));
  CHECK(has(msg, "unrecognized attribute 'axis'"));
}

TEST_CASE("Split num_outputs (opset 18) makes ceil-sized parts", "[onnx][opset]") {
  OnnxModel m(18);
  m.input("x", {5});
  OnnxModel::attr(m.node("Split", {"x"}, {"a", "b"}, "split"), "num_outputs", int64_t{2});
  m.output("a").output("b");
  const Graph g = import_ok(m);
  CHECK(infer_one(g, "x", iota(5), "a") == std::vector<float>{0, 1, 2});
  CHECK(infer_one(g, "x", iota(5), "b") == std::vector<float>{3, 4});

  OnnxModel bad(18);
  bad.input("x", {6});
  OnnxModel::attr(bad.node("Split", {"x"}, {"a", "b"}, "split"), "num_outputs", int64_t{3});
  bad.output("a");
  CHECK(has(import_error(bad), "num_outputs 3 but 2 outputs"));
}

TEST_CASE("BatchNormalization before opset 9 and its training outputs before 14", "[onnx][opset]") {
  auto model = [](int64_t opset, int64_t spatial, std::vector<std::string> outputs) {
    OnnxModel m(opset);
    m.input("x", {1, 2, 1, 2});
    m.floats("g", {2}, {2, 1}).floats("b", {2}, {0, 1}).floats("rm", {2}, {1, 0}).floats("rv", {2}, {4, 1});
    auto& bn = m.node("BatchNormalization", {"x", "g", "b", "rm", "rv"}, outputs, "bn");
    OnnxModel::attr(bn, "epsilon", 0.0f);
    if (spatial >= 0) OnnxModel::attr(bn, "spatial", spatial);
    return m;
  };
  OnnxModel ok = model(7, 1, {"y", "m", "v", "sm", "sv"});
  ok.output("y");
  const Graph g = import_ok(ok);
  // (x - mean) / sqrt(var) * gamma + beta per channel: channel 0 (x - 1) / 2 * 2, channel 1 x + 1.
  CHECK(infer_one(g, "x", {3, 5, -1, 2}, "y") == std::vector<float>{2, 4, 0, 3});

  OnnxModel per_activation = model(8, 0, {"y"});
  per_activation.output("y");
  const std::string msg = import_error(per_activation);
  CHECK(has(msg, "'bn' (BatchNormalization, opset 8)"));
  CHECK(has(msg, "spatial = 0"));

  OnnxModel saved = model(9, -1, {"y", "m", "v", "sm", "sv"});
  saved.output("y").output("sv");
  CHECK(has(import_error(saved), "output 4 (the batch's saved variance)"));
}

TEST_CASE("Cast's saturate (opset 19) is accepted and 8-bit and 4-bit types are refused by name", "[onnx][opset]") {
  OnnxModel m(19);
  m.input("x", {2}, onnx::TensorProto::INT64);
  auto& c = m.node("Cast", {"x"}, {"y"}, "cast");
  OnnxModel::attr(c, "to", int64_t{onnx::TensorProto::FLOAT});
  OnnxModel::attr(c, "saturate", int64_t{1});
  m.output("y");
  REQUIRE(import_model(m).is_ok());

  for (int64_t type : {17, 22, 23}) {  // FLOAT8E4M3FN, INT4, FLOAT4E2M1
    OnnxModel f8(23);
    f8.input("x", {2});
    OnnxModel::attr(f8.node("Cast", {"x"}, {"y"}, "cast"), "to", type);
    f8.output("y");
    const std::string msg = import_error(f8);
    INFO(msg);
    CHECK(has(msg, type == 17 ? "FLOAT8E4M3FN" : type == 22 ? "INT4" : "FLOAT4E2M1"));
  }
}

TEST_CASE("Gelu (opset 20) in both approximations", "[onnx][opset]") {
  const std::vector<float> x{-2.0f, -0.5f, 0.25f, 3.0f};
  for (const char* approx : {"none", "tanh"}) {
    OnnxModel m(20);
    m.input("x", {4});
    string_attr(m.node("Gelu", {"x"}, {"y"}, "gelu"), "approximate", approx);
    m.output("y");
    const Graph g = import_ok(m);
    std::vector<double> want;
    for (float v : x) {
      const double t = std::string(approx) == "tanh"
                           ? 1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * double(v) * v * v))
                           : 1.0 + std::erf(v / std::sqrt(2.0));
      want.push_back(0.5 * v * t);
    }
    INFO(approx);
    check_near(infer_one(g, "x", x, "y"), want);
  }
}

TEST_CASE("RMSNormalization (opset 23) is RMSNorm", "[onnx][opset]") {
  OnnxModel m(23);
  m.input("x", {2, 3});
  m.floats("scale", {3}, {1, 2, 0.5f});
  auto& n = m.node("RMSNormalization", {"x", "scale"}, {"y"}, "rms");
  OnnxModel::attr(n, "epsilon", 1e-3f);
  m.output("y");
  const Graph g = import_ok(m);
  const std::vector<float> x{1, -2, 3, 0.5f, 0.25f, -4};
  const double scale[3] = {1, 2, 0.5};
  std::vector<double> want;
  for (int r = 0; r < 2; ++r) {
    double ms = 0;
    for (int i = 0; i < 3; ++i) ms += double(x[r * 3 + i]) * x[r * 3 + i] / 3;
    for (int i = 0; i < 3; ++i) want.push_back(x[r * 3 + i] / std::sqrt(ms + 1e-3) * scale[i]);
  }
  check_near(infer_one(g, "x", x, "y"), want);

  OnnxModel f16_stats(23);
  f16_stats.input("x", {2, 3});
  f16_stats.floats("scale", {3}, {1, 2, 0.5f});
  OnnxModel::attr(f16_stats.node("RMSNormalization", {"x", "scale"}, {"y"}, "rms"), "stash_type", int64_t{10});
  f16_stats.output("y");
  CHECK(has(import_error(f16_stats), "stash_type 10"));
}

TEST_CASE("GroupNormalization before opset 21 (per-group scale) is refused", "[onnx][opset]") {
  OnnxModel m(18);
  m.input("x", {1, 4, 2});
  m.floats("s", {2}, {1, 1}).floats("b", {2}, {0, 0});
  OnnxModel::attr(m.node("GroupNormalization", {"x", "s", "b"}, {"y"}, "gn"), "num_groups", int64_t{2});
  m.output("y");
  const std::string msg = import_error(m);
  CHECK(has(msg, "'gn' (GroupNormalization, opset 18)"));
  CHECK(has(msg, "per group"));
}

TEST_CASE("N-D pooling with unit windows on the extra axes is 2-D pooling (jax2onnx reduce_window)", "[onnx][opset]") {
  // jax2onnx: NHWC x [N, H, W, C] unsqueezed to [1, 1, N, H, W, C], window [1, 2, 2, 1].
  const int64_t N = 2, H = 4, W = 4, C = 3;
  const std::vector<float> x = iota(static_cast<size_t>(N * H * W * C), 0, 1);
  auto at = [&](int64_t n, int64_t h, int64_t w, int64_t c) { return x[((n * H + h) * W + w) * C + c]; };
  for (const char* op : {"MaxPool", "AveragePool"}) {
    OnnxModel m(23);
    m.input("x", {1, 1, N, H, W, C});
    auto& p = m.node(op, {"x"}, {"y"}, "pool");
    OnnxModel::attr(p, "kernel_shape", Ints{1, 2, 2, 1});
    OnnxModel::attr(p, "strides", Ints{1, 2, 2, 1});
    m.output("y");
    const Graph g = import_ok(m);
    CHECK(g.tensor(g.outputs()[0]).shape == Shape{1, 1, N, 2, 2, C});
    std::vector<double> want;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 2; ++j)
          for (int64_t c = 0; c < C; ++c) {
            const float v[4] = {at(n, 2 * i, 2 * j, c), at(n, 2 * i, 2 * j + 1, c), at(n, 2 * i + 1, 2 * j, c),
                                at(n, 2 * i + 1, 2 * j + 1, c)};
            want.push_back(std::string(op) == "MaxPool" ? std::max({v[0], v[1], v[2], v[3]})
                                                        : (double(v[0]) + v[1] + v[2] + v[3]) / 4);
          }
    INFO(op);
    check_near(infer_one(g, "x", x, "y"), want);
  }

  OnnxModel four(23);  // 3 windowed axes are pooled in two steps (test_onnx_pool_decomposed); 4 are not
  four.input("x", {1, 1, 4, 4, 4, 4});
  OnnxModel::attr(four.node("MaxPool", {"x"}, {"y"}, "pool4d"), "kernel_shape", Ints{2, 2, 2, 2});
  four.output("y");
  CHECK(has(import_error(four), "a window on 4 spatial axes"));
}

TEST_CASE("AveragePool dilations (opset 19) over one spatial axis are refused, not ignored", "[onnx][opset]") {
  // 2-D ones are decomposed (test_onnx_pool_decomposed).
  OnnxModel m(19);
  m.input("x", {1, 1, 5});
  auto& p = m.node("AveragePool", {"x"}, {"y"}, "pool");
  OnnxModel::attr(p, "kernel_shape", Ints{2});
  OnnxModel::attr(p, "dilations", Ints{2});
  m.output("y");
  CHECK(has(import_error(m), "dilated pooling"));
}
