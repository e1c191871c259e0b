// ONNX RNN / GRU / LSTM with per-row sequence_lens. ONNX's node tests and the PyTorch parity
// (tests/parity/op_models.py) check the unrolled cells on full-length batches; here the oracle is
// that path itself: a row of length L must give the final states and Y rows that the same layer
// gives on that row alone, cut to L steps, and zeros in Y past L. Both directions, so that the
// reverse direction's per-row start (step L - 1, not S - 1) is checked too.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "frontend/onnx_test_run.hpp"

using namespace pock;
using pock::testing::import_model;
using pock::testing::OnnxModel;

namespace {

constexpr int64_t kInput = 3, kHidden = 4;

int gates(const std::string& op) { return op == "RNN" ? 1 : op == "GRU" ? 3 : 4; }

// Deterministic values in [-0.5, 0.5) (the weights and inputs need no particular distribution).
std::vector<float> values(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (auto& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(seed >> 8) / static_cast<float>(1u << 24) - 0.5f;
  }
  return v;
}

// A bidirectional layer over X [seq, batch, kInput] reading Y, Y_h (and Y_c), with sequence_lens
// as an int32 graph input when `with_lengths`.
OnnxModel layer(const std::string& op, int64_t seq, int64_t batch, bool with_lengths) {
  const int64_t gh = gates(op) * kHidden;
  OnnxModel m(14);
  m.input("x", {seq, batch, kInput});
  if (with_lengths) m.input("lens", {batch}, onnx::TensorProto::INT32);
  m.floats("w", {2, gh, kInput}, values(static_cast<size_t>(2 * gh * kInput), 1));
  m.floats("r", {2, gh, kHidden}, values(static_cast<size_t>(2 * gh * kHidden), 2));
  m.floats("b", {2, 2 * gh}, values(static_cast<size_t>(4 * gh), 3));
  std::vector<std::string> outputs{"y", "y_h"};
  if (op == "LSTM") outputs.push_back("y_c");
  auto& n = m.node(op, {"x", "w", "r", "b", with_lengths ? "lens" : ""}, outputs, "cell");
  OnnxModel::attr(n, "hidden_size", kHidden);
  OnnxModel::attr(n, "direction", std::string("bidirectional"));
  for (const auto& o : outputs) m.output(o);
  return m;
}

std::map<std::string, std::vector<float>> run(const OnnxModel& m, const std::vector<float>& x,
                                              const std::vector<int32_t>* lens) {
  auto model = pock::testing::open_model(m);
  Engine* engine = &*model->engine;
  REQUIRE(engine->set_input("x", x).is_ok());
  if (lens) REQUIRE(engine->set_input("lens", lens->data(), lens->size() * sizeof(int32_t)).is_ok());
  REQUIRE(engine->infer().is_ok());
  std::map<std::string, std::vector<float>> out;
  for (const char* name : {"y", "y_h", "y_c"}) {
    auto v = engine->output<float>(name);
    if (v.is_ok()) out[name] = v.value();
  }
  return out;
}

}  // namespace

TEST_CASE("sequence_lens: each row of RNN, GRU and LSTM runs as if alone on its own length", "[onnx][recurrent]") {
  const int64_t seq = 4, batch = 3;
  const std::vector<int32_t> lens{2, 4, 1};
  const std::vector<float> x = values(static_cast<size_t>(seq * batch * kInput), 7);
  for (const std::string op : {"RNN", "GRU", "LSTM"}) {
    INFO(op);
    auto masked = run(layer(op, seq, batch, true), x, &lens);
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t len = lens[static_cast<size_t>(b)];
      std::vector<float> row;  // X[:len, b]
      for (int64_t t = 0; t < len; ++t) {
        for (int64_t i = 0; i < kInput; ++i) row.push_back(x[static_cast<size_t>((t * batch + b) * kInput + i)]);
      }
      auto alone = run(layer(op, len, 1, false), row, nullptr);
      for (const char* state : {"y_h", "y_c"}) {
        if (!masked.count(state)) continue;
        for (int64_t d = 0; d < 2; ++d) {
          for (int64_t h = 0; h < kHidden; ++h) {
            const float got = masked[state][static_cast<size_t>((d * batch + b) * kHidden + h)];
            const float want = alone[state][static_cast<size_t>(d * kHidden + h)];
            CHECK(got == Approx(want).margin(1e-6));
          }
        }
      }
      for (int64_t t = 0; t < seq; ++t) {
        for (int64_t d = 0; d < 2; ++d) {
          for (int64_t h = 0; h < kHidden; ++h) {
            const float got = masked["y"][static_cast<size_t>(((t * 2 + d) * batch + b) * kHidden + h)];
            const float want = t < len ? alone["y"][static_cast<size_t>((t * 2 + d) * kHidden + h)] : 0.0f;
            CHECK(got == Approx(want).margin(1e-6));
          }
        }
      }
    }
  }
}

TEST_CASE("a recurrent layer with an unknown activation is refused naming it", "[onnx][recurrent][errors]") {
  OnnxModel m(14);
  m.input("x", {2, 1, kInput});
  m.floats("w", {1, kHidden, kInput}, values(kHidden * kInput, 1));
  m.floats("r", {1, kHidden, kHidden}, values(kHidden * kHidden, 2));
  auto& n = m.node("RNN", {"x", "w", "r"}, {"", "y_h"}, "cell");
  OnnxModel::attr(n, "hidden_size", kHidden);
  auto* a = n.add_attribute();
  a->set_name("activations");
  a->set_type(onnx::AttributeProto::STRINGS);
  a->add_strings("Gelu");
  m.output("y_h");
  auto g = import_model(m);
  REQUIRE_FALSE(g.is_ok());
  CHECK_THAT(g.status().message(), Catch::Contains("activation 'gelu'"));
}
