// Models below opset 7 whose ops changed by 7 (PyTorch's early exports, ONNX's stored layer tests):
// each is converted to opset 7 with its old meaning, or refused by name. Expected values are
// computed here from the opset-6 operator definitions (loops over the elements), never by the
// importer or pock's kernels.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "frontend/onnx_test_run.hpp"

using namespace pock;
using namespace pock::testing;

namespace {

std::vector<float> ramp(size_t n, float start, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i);
  return v;
}

void check_near(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) CHECK(got[i] == Approx(want[i]).epsilon(1e-6).margin(1e-6));
}

}  // namespace

TEST_CASE("Add-6 with broadcast and axis aligns B at that axis of A", "[onnx][opset]") {
  // A [2, 3, 4] + B [3] at axis 1: B[j] is added along A's middle axis (numpy would align it last).
  OnnxModel m(6);
  m.input("a", {2, 3, 4});
  m.floats("b", {3}, {10, 20, 30});
  auto& add = m.node("Add", {"a", "b"}, {"y"}, "add");
  OnnxModel::attr(add, "broadcast", int64_t{1});
  OnnxModel::attr(add, "axis", int64_t{1});
  m.output("y");
  const std::vector<float> a = ramp(24, -5, 0.5f);
  std::vector<float> want(24);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 4; ++k) want[(i * 3 + j) * 4 + k] = a[(i * 3 + j) * 4 + k] + 10.0f * (j + 1);
    }
  }
  check_near(infer_one(import_ok(m), "a", a, "y"), want);
}

TEST_CASE("PRelu-6 applies a slope of C values per channel", "[onnx][opset]") {
  // Before opset 7 PRelu does not broadcast: slope [3] on x [2, 3, 2] is one slope per channel
  // (axis 1), as PyTorch's PReLU(3) that wrote such files; numpy broadcasting would not even fit.
  OnnxModel m(6);
  m.input("x", {2, 3, 2});
  m.floats("slope", {3}, {0.1f, 0.2f, 0.3f});
  m.node("PRelu", {"x", "slope"}, {"y"}, "prelu");
  m.output("y");
  const std::vector<float> x = ramp(12, -6, 1);
  std::vector<float> want(12);
  for (int n = 0; n < 2; ++n) {
    for (int c = 0; c < 3; ++c) {
      for (int k = 0; k < 2; ++k) {
        const float v = x[(n * 3 + c) * 2 + k];
        want[(n * 3 + c) * 2 + k] = v < 0 ? 0.1f * static_cast<float>(c + 1) * v : v;
      }
    }
  }
  check_near(infer_one(import_ok(m), "x", x, "y"), want);

  OnnxModel shared(6);  // one slope for every channel
  shared.input("x", {2, 3, 2});
  shared.floats("slope", {1}, {0.25f});
  shared.node("PRelu", {"x", "slope"}, {"y"});
  shared.output("y");
  std::vector<float> want_shared(12);
  for (size_t i = 0; i < x.size(); ++i) want_shared[i] = x[i] < 0 ? 0.25f * x[i] : x[i];
  check_near(infer_one(import_ok(shared), "x", x, "y"), want_shared);
}

TEST_CASE("Gemm-6 with broadcast adds a C of N values to every row", "[onnx][opset]") {
  OnnxModel m(6);
  m.input("a", {2, 3});
  m.floats("b", {3, 2}, {1, 2, 3, 4, 5, 6});
  m.floats("c", {2}, {100, 200});
  auto& gemm = m.node("Gemm", {"a", "b", "c"}, {"y"}, "gemm");
  OnnxModel::attr(gemm, "broadcast", int64_t{1});
  OnnxModel::attr(gemm, "alpha", 2.0f);
  m.output("y");
  const std::vector<float> a = ramp(6, -1, 0.5f), b{1, 2, 3, 4, 5, 6}, c{100, 200};
  std::vector<float> want(4);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) {
      float dot = 0;
      for (int k = 0; k < 3; ++k) dot += a[i * 3 + k] * b[k * 2 + j];
      want[i * 2 + j] = 2 * dot + c[j];
    }
  }
  check_near(infer_one(import_ok(m), "a", a, "y"), want);
}

TEST_CASE("BatchNormalization-6 in test mode normalizes with the running statistics", "[onnx][opset]") {
  OnnxModel m(6);
  m.input("x", {1, 2, 3});
  m.floats("scale", {2}, {2, 3});
  m.floats("bias", {2}, {0.5f, -0.5f});
  m.floats("mean", {2}, {1, -1});
  m.floats("var", {2}, {4, 0.25f});
  auto& bn = m.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"}, "bn");
  OnnxModel::attr(bn, "is_test", int64_t{1});
  OnnxModel::attr(bn, "epsilon", 0.0f);
  m.output("y");
  const std::vector<float> x = ramp(6, -2, 1);
  const float scale[] = {2, 3}, bias[] = {0.5f, -0.5f}, mean[] = {1, -1}, sd[] = {2, 0.5f};
  std::vector<float> want(6);
  for (int c = 0; c < 2; ++c) {
    for (int k = 0; k < 3; ++k) want[c * 3 + k] = scale[c] * (x[c * 3 + k] - mean[c]) / sd[c] + bias[c];
  }
  check_near(infer_one(import_ok(m), "x", x, "y"), want);
}

TEST_CASE("a node below opset 7 that has no opset-7 form is refused by name", "[onnx][opset]") {
  // Dropout-6 in training mode (is_test 0): opset 7 has no such attribute, and onnx's converter
  // does not guess.
  OnnxModel m(6);
  m.input("x", {4});
  auto& dropout = m.node("Dropout", {"x"}, {"y"}, "dropout");
  OnnxModel::attr(dropout, "is_test", int64_t{0});
  m.output("y");
  const std::string msg = import_error(m);
  CHECK(msg.find("opset 6") != std::string::npos);
  CHECK(msg.find("is_test") != std::string::npos);

  OnnxModel bad(6);  // Add-6 knows no attribute `axes`: named against opset 6's schema
  bad.input("x", {2});
  auto& add = bad.node("Add", {"x", "x"}, {"y"}, "add");
  OnnxModel::attr(add, "axes", int64_t{1});
  bad.output("y");
  const std::string bad_msg = import_error(bad);
  CHECK(bad_msg.find("'add' (Add)") != std::string::npos);
  CHECK(bad_msg.find("opset 6") != std::string::npos);
}
