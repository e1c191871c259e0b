// ONNX Resize's opset-18 attributes: axes (scales or sizes for some axes only) and
// keep_aspect_ratio_policy (one scale for the listed axes, from sizes). Each model is checked
// against the same Resize written without the attribute, as the ONNX definition says it expands,
// and against values worked out here by hand.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "frontend/onnx_test_run.hpp"

using namespace pock;
using pock::testing::import_model;
using pock::testing::infer_one;
using pock::testing::OnnxModel;

namespace {

struct ResizeSpec {
  std::vector<int64_t> x_dims;
  std::vector<float> scales;      // input 2, when not empty
  std::vector<int64_t> sizes;     // input 3, when not empty
  std::vector<int64_t> axes;      // attribute, when not empty
  std::string policy;             // keep_aspect_ratio_policy, when not empty
  std::string mode = "nearest";
};

OnnxModel resize_model(const ResizeSpec& s) {
  OnnxModel m(18);
  m.input("x", s.x_dims);
  std::vector<std::string> inputs = {"x", "", "", ""};
  if (!s.scales.empty()) {
    m.floats("scales", {static_cast<int64_t>(s.scales.size())}, s.scales);
    inputs[2] = "scales";
  }
  if (!s.sizes.empty()) {
    m.ints("sizes", {static_cast<int64_t>(s.sizes.size())}, s.sizes);
    inputs[3] = "sizes";
  }
  if (s.sizes.empty()) inputs.pop_back();
  onnx::NodeProto& n = m.node("Resize", inputs, {"y"}, "resize");
  OnnxModel::attr(n, "mode", s.mode);
  OnnxModel::attr(n, "coordinate_transformation_mode", std::string("asymmetric"));
  OnnxModel::attr(n, "nearest_mode", std::string("floor"));
  if (!s.axes.empty()) OnnxModel::attr(n, "axes", s.axes);
  if (!s.policy.empty()) OnnxModel::attr(n, "keep_aspect_ratio_policy", s.policy);
  m.output("y");
  return m;
}

std::vector<float> ramp(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i) * 0.5f - 3.0f;
  return v;
}

size_t numel(const std::vector<int64_t>& dims) {
  size_t n = 1;
  for (int64_t d : dims) n *= static_cast<size_t>(d);
  return n;
}

std::vector<float> run(const ResizeSpec& s) {
  auto g = import_model(resize_model(s));
  INFO(g.status().to_string());
  REQUIRE(g.is_ok());
  return infer_one(g.value(), "x", ramp(numel(s.x_dims)), "y");
}

std::string refusal(const ResizeSpec& s) {
  auto g = import_model(resize_model(s));
  REQUIRE_FALSE(g.is_ok());
  return g.status().message();
}

}  // namespace

TEST_CASE("ONNX Resize with axes resizes only the listed axes", "[onnx]") {
  for (const std::string mode : {"nearest", "linear"}) {
    INFO(mode);
    ResizeSpec listed{{1, 2, 3, 4}, {2.0f, 1.5f}, {}, {2, -1}, "", mode};
    ResizeSpec full{{1, 2, 3, 4}, {1.0f, 1.0f, 2.0f, 1.5f}, {}, {}, "", mode};
    const std::vector<float> y = run(listed);
    CHECK(y.size() == 1u * 2 * 6 * 6);
    CHECK(y == run(full));
  }
  ResizeSpec listed_sizes{{1, 2, 3, 4}, {}, {5}, {3}, "", "linear"};
  ResizeSpec full_sizes{{1, 2, 3, 4}, {}, {1, 2, 3, 5}, {}, "", "linear"};
  CHECK(run(listed_sizes) == run(full_sizes));
}

TEST_CASE("ONNX Resize keep_aspect_ratio_policy scales the listed axes alike", "[onnx]") {
  // x [1, 1, 4, 8] toward sizes [2, 2]: not_larger takes min(2/4, 2/8) = 1/4 on both axes,
  // sizes round(4/4) = 1 and round(8/4) = 2: the Resize of scales [1, 1, 1/4, 1/4]. (Scales that
  // binary floats hold exactly: the policy's scale is computed in double, a scales input is f32.)
  ResizeSpec not_larger{{1, 1, 4, 8}, {}, {2, 2}, {2, 3}, "not_larger"};
  ResizeSpec by_quarters{{1, 1, 4, 8}, {1.0f, 1.0f, 0.25f, 0.25f}, {}, {}, ""};
  const std::vector<float> y = run(not_larger);
  CHECK(y.size() == 2u);
  CHECK(y == run(by_quarters));
  // not_smaller takes max(2/4, 2/8) = 1/2: sizes 2 and 4, the Resize of scales [1, 1, 1/2, 1/2].
  ResizeSpec not_smaller{{1, 1, 4, 8}, {}, {2, 2}, {2, 3}, "not_smaller"};
  ResizeSpec by_halves{{1, 1, 4, 8}, {1.0f, 1.0f, 0.5f, 0.5f}, {}, {}, ""};
  CHECK(run(not_smaller).size() == 8u);
  CHECK(run(not_smaller) == run(by_halves));
}

TEST_CASE("ONNX Resize keep_aspect_ratio_policy rounds a half size up, as ONNX's reference does", "[onnx]") {
  // x [1, 1, 2, 5] toward sizes [1, 100], not_larger: scale min(1/2, 20) = 1/2; axis 3 becomes
  // round(2.5) = 3 (half up; numpy's round would give 2). Nearest, asymmetric, floor: column j
  // reads x[2j], row 0 reads row 0: x[0, 0, 0, {0, 2, 4}].
  ResizeSpec half{{1, 1, 2, 5}, {}, {1, 100}, {2, 3}, "not_larger"};
  const std::vector<float> x = ramp(10);
  CHECK(run(half) == std::vector<float>{x[0], x[2], x[4]});
}

TEST_CASE("ONNX Resize's axes and policy errors name the problem", "[onnx][errors]") {
  CHECK_THAT(refusal({{1, 1, 2, 2}, {2.0f}, {}, {4}, ""}), Catch::Contains("outside rank 4"));
  CHECK_THAT(refusal({{1, 1, 2, 2}, {2.0f, 2.0f}, {}, {3, -1}, ""}), Catch::Contains("repeat"));
  CHECK_THAT(refusal({{1, 1, 2, 2}, {2.0f, 2.0f, 2.0f}, {}, {2, 3}, ""}), Catch::Contains("one value per axis in axes"));
  CHECK_THAT(refusal({{1, 1, 2, 2}, {}, {4, 4}, {2, 3}, "fit"}), Catch::Contains("keep_aspect_ratio_policy"));
}
