// ONNX import of the signal ops: DFT and STFT (products with a constant DFT matrix) against a
// plain complex DFT written here in double; the Hann, Hamming and Blackman windows and
// MelWeightMatrix (folded at import) against values worked out by hand and ONNX's example.
#include <catch2/catch.hpp>

#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "frontend/onnx_test_run.hpp"

using namespace pock;
using pock::testing::import_model;
using pock::testing::infer_one;
using pock::testing::OnnxModel;

namespace {

using Complex = std::complex<double>;

// sum_t x[t] e^(-+2 pi i k t / n), divided by n for the inverse.
std::vector<Complex> dft(const std::vector<Complex>& x, bool inverse) {
  const size_t n = x.size();
  std::vector<Complex> y(n);
  const double pi = std::acos(-1.0);
  for (size_t k = 0; k < n; ++k) {
    for (size_t t = 0; t < n; ++t) y[k] += x[t] * std::polar(1.0, (inverse ? 2 : -2) * pi * static_cast<double>(k * t) / static_cast<double>(n));
    if (inverse) y[k] /= static_cast<double>(n);
  }
  return y;
}

std::vector<float> signal(size_t n) {
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = static_cast<float>(std::cos(0.37 * static_cast<double>(i * i)) + 0.1 * static_cast<double>(i % 4));
  return x;
}

// A model whose only node is `op` over graph input "x" and `constants` (int64 initializers).
Result<Graph> single_node(const std::string& op, const Shape& x, const std::vector<std::pair<std::string, int64_t>>& constants,
                          const std::vector<std::pair<std::string, int64_t>>& int_attrs, int64_t opset = 17) {
  OnnxModel m(opset);
  m.input("x", x);
  std::vector<std::string> inputs{"x"};
  for (const auto& [name, value] : constants) {
    if (name.empty()) {
      inputs.emplace_back();
      continue;
    }
    m.ints(name, {}, {value});
    inputs.push_back(name);
  }
  onnx::NodeProto& n = m.node(op, inputs, {"y"}, "node");
  for (const auto& [name, value] : int_attrs) OnnxModel::attr(n, name, value);
  m.output("y");
  return import_model(m);
}

}  // namespace

TEST_CASE("ONNX DFT of real and complex signals along an axis, forward and inverse", "[onnx]") {
  // x [2, 3, 5, c]: transform along axis 2 (length 5) or axis 1 (length 3).
  for (int64_t complex_input : {0, 1}) {
    for (int64_t axis : {1, 2}) {
      for (int64_t inverse : {0, 1}) {
        DYNAMIC_SECTION("complex " << complex_input << " axis " << axis << " inverse " << inverse) {
          const int64_t c = complex_input ? 2 : 1;
          const Shape shape{2, 3, 5, c};
          auto g = single_node("DFT", shape, {}, {{"axis", axis}, {"inverse", inverse}});
          INFO(g.status().to_string());
          REQUIRE(g.is_ok());
          const std::vector<float> x = signal(static_cast<size_t>(30 * c));
          const std::vector<float> y = infer_one(g.value(), "x", x, "y");
          REQUIRE(y.size() == 60);
          const int64_t n = shape[static_cast<size_t>(axis)];
          const int64_t outer = axis == 1 ? 2 : 6, inner = axis == 1 ? 5 : 1;
          for (int64_t o = 0; o < outer; ++o) {
            for (int64_t i = 0; i < inner; ++i) {
              std::vector<Complex> v(static_cast<size_t>(n));
              for (int64_t t = 0; t < n; ++t) {
                const int64_t at = ((o * n + t) * inner + i) * c;
                v[static_cast<size_t>(t)] = {x[static_cast<size_t>(at)], c == 2 ? x[static_cast<size_t>(at + 1)] : 0.0f};
              }
              const std::vector<Complex> want = dft(v, inverse != 0);
              for (int64_t k = 0; k < n; ++k) {
                const size_t at = static_cast<size_t>(((o * n + k) * inner + i) * 2);
                CHECK(y[at] == Approx(want[static_cast<size_t>(k)].real()).margin(1e-4));
                CHECK(y[at + 1] == Approx(want[static_cast<size_t>(k)].imag()).margin(1e-4));
              }
            }
          }
        }
      }
    }
  }
}

TEST_CASE("ONNX DFT at opset 20 takes the axis as an input, -2 by default; opset 17's default stays 1", "[onnx][opset]") {
  // Checked against opset 17's attribute form (checked above against a direct DFT): each pair
  // transforms along the same axis, and axes 1 and 2 of [2, 3, 5, 1] give different results.
  const Shape shape{2, 3, 5, 1};
  const std::vector<float> x = signal(30);
  auto run = [&](const Result<Graph>& g) {
    INFO(g.status().to_string());
    REQUIRE(g.is_ok());
    return infer_one(g.value(), "x", x, "y");
  };
  const std::vector<float> axis1 = run(single_node("DFT", shape, {}, {{"axis", 1}}));
  const std::vector<float> axis2 = run(single_node("DFT", shape, {}, {{"axis", 2}}));
  REQUIRE(axis1 != axis2);
  CHECK(run(single_node("DFT", shape, {}, {})) == axis1);
  CHECK(run(single_node("DFT", shape, {{"", 0}, {"axis", 1}}, {}, 20)) == axis1);
  CHECK(run(single_node("DFT", shape, {{"", 0}, {"axis", -2}}, {}, 20)) == axis2);
  CHECK(run(single_node("DFT", shape, {}, {}, 20)) == axis2);
}

TEST_CASE("ONNX DFT onesided keeps n / 2 + 1 bins; dft_length pads", "[onnx]") {
  auto g = single_node("DFT", {1, 6, 1}, {{"length", 8}}, {{"onesided", 1}});
  INFO(g.status().to_string());
  REQUIRE(g.is_ok());
  const std::vector<float> x = signal(6);
  const std::vector<float> y = infer_one(g.value(), "x", x, "y");
  REQUIRE(y.size() == 10);  // 5 bins of a length-8 transform
  std::vector<Complex> padded(8);
  for (size_t t = 0; t < 6; ++t) padded[t] = x[t];
  const std::vector<Complex> want = dft(padded, false);
  for (size_t k = 0; k < 5; ++k) {
    CHECK(y[2 * k] == Approx(want[k].real()).margin(1e-4));
    CHECK(y[2 * k + 1] == Approx(want[k].imag()).margin(1e-4));
  }
}

TEST_CASE("ONNX STFT: windowed frames, each transformed", "[onnx]") {
  OnnxModel m;
  m.input("x", {1, 20, 1});
  m.ints("step", {}, {4});
  const std::vector<float> window = {0.1f, 0.5f, 1.0f, 0.5f, 0.2f, 0.7f};
  m.floats("window", {6}, window);
  m.node("STFT", {"x", "step", "window"}, {"y"}, "stft");
  m.output("y");
  auto g = import_model(m);
  INFO(g.status().to_string());
  REQUIRE(g.is_ok());
  const std::vector<float> x = signal(20);
  const std::vector<float> y = infer_one(g.value(), "x", x, "y");
  const size_t frames = 1 + (20 - 6) / 4, bins = 4;  // onesided by default
  REQUIRE(y.size() == frames * bins * 2);
  for (size_t f = 0; f < frames; ++f) {
    std::vector<Complex> v(6);
    for (size_t t = 0; t < 6; ++t) v[t] = x[f * 4 + t] * window[t];
    const std::vector<Complex> want = dft(v, false);
    for (size_t k = 0; k < bins; ++k) {
      CHECK(y[(f * bins + k) * 2] == Approx(want[k].real()).margin(1e-4));
      CHECK(y[(f * bins + k) * 2 + 1] == Approx(want[k].imag()).margin(1e-4));
    }
  }
}

TEST_CASE("ONNX DFT with a run-time dft_length or a onesided inverse is refused", "[onnx][errors]") {
  OnnxModel m;
  m.input("x", {1, 6, 1});
  m.input("length", {1}, onnx::TensorProto::INT64);
  m.node("DFT", {"x", "length"}, {"y"}, "dft");
  m.output("y");
  auto g = import_model(m);
  REQUIRE_FALSE(g.is_ok());
  CHECK_THAT(g.status().message(), Catch::Contains("dft_length"));
  auto inverse = single_node("DFT", {1, 6, 1}, {}, {{"onesided", 1}, {"inverse", 1}});
  REQUIRE_FALSE(inverse.is_ok());
  CHECK_THAT(inverse.status().message(), Catch::Contains("onesided"));
}

namespace {

// Imports `op`(size) with a constant size and returns the folded window, added to a zero input so
// that the model has something to run.
std::vector<float> window(const std::string& op, int64_t size, int64_t periodic) {
  OnnxModel m;
  m.input("x", {size});
  m.ints("size", {}, {size});
  OnnxModel::attr(m.node(op, {"size"}, {"w"}, "window"), "periodic", periodic);
  m.node("Add", {"x", "w"}, {"y"}, "add");
  m.output("y");
  auto g = import_model(m);
  INFO(g.status().to_string());
  REQUIRE(g.is_ok());
  return infer_one(g.value(), "x", std::vector<float>(static_cast<size_t>(size), 0.0f), "y");
}

void check_close(const std::vector<float>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(1e-6));
}

}  // namespace

TEST_CASE("ONNX Hann, Hamming and Blackman windows fold to their values", "[onnx]") {
  check_close(window("HannWindow", 4, 1), {0, 0.5, 1, 0.5});
  check_close(window("HannWindow", 5, 0), {0, 0.5, 1, 0.5, 0});
  check_close(window("HammingWindow", 3, 0), {4.0 / 46, 1, 4.0 / 46});
  check_close(window("HammingWindow", 4, 1), {4.0 / 46, 25.0 / 46, 1, 25.0 / 46});
  check_close(window("BlackmanWindow", 3, 0), {0, 1, 0});
  check_close(window("BlackmanWindow", 4, 1), {0, 0.34, 1, 0.34});  // 0.42 - 0.5 cos(pi/2) + 0.08 cos(pi)
}

TEST_CASE("ONNX MelWeightMatrix folds to ONNX's example", "[onnx]") {
  OnnxModel m;
  m.input("x", {9, 8});
  m.ints("bins", {}, {8}).ints("dft", {}, {16}).ints("rate", {}, {8192});
  m.floats("low", {}, {0.0f}).floats("high", {}, {4096.0f});
  m.node("MelWeightMatrix", {"bins", "dft", "rate", "low", "high"}, {"w"}, "mel");
  m.node("Add", {"x", "w"}, {"y"}, "add");
  m.output("y");
  auto g = import_model(m);
  INFO(g.status().to_string());
  REQUIRE(g.is_ok());
  const std::vector<float> y = infer_one(g.value(), "x", std::vector<float>(72, 0.0f), "y");
  std::vector<float> want(72, 0.0f);  // the expected output listed in ONNX's melweightmatrix case
  for (auto [row, col] : {std::pair{0, 0}, {0, 1}, {1, 2}, {1, 3}, {2, 4}, {3, 5}, {4, 6}, {5, 7}}) want[static_cast<size_t>(row * 8 + col)] = 1.0f;
  CHECK(y == want);
}

TEST_CASE("ONNX HannWindow of a graph-input size asks for a binding naming the input, then folds", "[onnx][errors]") {
  OnnxModel m;
  m.input("x", {4});
  m.input("size", {1}, onnx::TensorProto::INT64);
  m.node("HannWindow", {"size"}, {"w"}, "window");
  m.node("Add", {"x", "w"}, {"y"}, "add");
  m.output("y");
  OnnxImportRefusal refusal;
  const std::string bytes = m.bytes();
  auto refused = import_onnx_bytes(bytes.data(), bytes.size(), {}, ".", &refusal);
  REQUIRE_FALSE(refused.is_ok());
  CHECK(refusal.input_to_bind == "size");
  CHECK_THAT(refused.status().message(), Catch::Contains("HannWindow") && Catch::Contains("--bind size="));
  OnnxImportOptions options;
  REQUIRE(parse_bind_arg("size=4", &options).is_ok());
  auto g = import_model(m, options);
  INFO(g.status().to_string());
  REQUIRE(g.is_ok());
  check_close(infer_one(g.value(), "x", std::vector<float>(4, 0.0f), "y"), {0, 0.5, 1, 0.5});
}
