// Graph optimizations: folding, CSE, DCE and in-place planning, observed in the compiled blob.
#include <catch2/catch.hpp>
#include <cstring>

#include "blob/reader.hpp"
#include "pock/compiler/compiler.hpp"
#include "pock/engine.hpp"

using namespace pock;

namespace {

std::vector<uint8_t> f32_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

ProgramSpec compiled_spec(const Graph& g, const CompileOptions& options = {}) {
  auto blob = compile(g, nullptr, options);
  REQUIRE(blob.is_ok());
  BlobView view;
  REQUIRE(open_blob(blob->data(), blob->size(), {}, &view).is_ok());
  auto spec = read_program_spec(view);
  REQUIRE(spec.is_ok());
  return spec.value();
}

size_t count_ops(const ProgramSpec& spec, const std::string& op) {
  size_t n = 0;
  for (const OpSpec& o : spec.ops) n += o.op == op;
  return n;
}

}  // namespace

TEST_CASE("constant subgraphs fold, duplicates merge, dead nodes go", "[passes]") {
  Graph g;
  const TensorId x = g.add_input("x", DType::kF32, {4});
  const TensorId c1 = g.add_constant("c1", DType::kF32, {4}, f32_bytes({1, 2, 3, 4}));
  const TensorId c2 = g.add_constant("c2", DType::kF32, {4}, f32_bytes({10, 20, 30, 40}));
  const TensorId folded = g.add_node("Add", {c1, c2})->at(0);         // constant: folds
  const TensorId a = g.add_node("Mul", {x, folded})->at(0);
  const TensorId b = g.add_node("Mul", {x, folded})->at(0);           // duplicate of a
  (void)g.add_node("Exp", {x});                                       // dead
  const TensorId y = g.add_node("Add", {a, b})->at(0);
  REQUIRE(g.mark_output(y, "y").is_ok());

  const ProgramSpec optimized = compiled_spec(g);
  CHECK(count_ops(optimized, "Exp") == 0);
  CHECK(count_ops(optimized, "Mul") == 1);
  CHECK(count_ops(optimized, "Add") == 1);  // the constant Add folded away

  CompileOptions plain;
  plain.optimize = false;
  const ProgramSpec unoptimized = compiled_spec(g, plain);
  CHECK(count_ops(unoptimized, "Mul") == 2);

  // Both compute the same thing: y = 2 * x * (c1 + c2).
  for (const CompileOptions& options : {CompileOptions{}, plain}) {
    auto blob = compile(g, nullptr, options);
    REQUIRE(blob.is_ok());
    auto engine = Engine::open_buffer(blob->data(), blob->size());
    REQUIRE(engine.is_ok());
    REQUIRE(engine->set_input("x", std::vector<float>{1, -1, 0.5f, 2}).is_ok());
    REQUIRE(engine->infer().is_ok());
    CHECK(engine->output<float>("y").value() == std::vector<float>{22, -44, 33, 176});
  }
}

TEST_CASE("an elementwise chain runs in place in one buffer", "[passes][memplan]") {
  Graph g;
  const TensorId x = g.add_input("x", DType::kF32, {256});
  TensorId t = g.add_node("Neg", {x})->at(0);
  for (int i = 0; i < 6; ++i) t = g.add_node(i % 2 ? "Relu" : "Tanh", {t})->at(0);
  const TensorId y = g.add_node("Neg", {t})->at(0);
  REQUIRE(g.mark_output(y, "y").is_ok());
  const ProgramSpec spec = compiled_spec(g);
  CHECK(spec.arena_bytes == 256 * 4);  // every intermediate shares the first one's buffer

  auto blob = compile(g, nullptr);
  auto engine = Engine::open_buffer(blob->data(), blob->size());
  REQUIRE(engine.is_ok());
  std::vector<float> in(256);
  for (int i = 0; i < 256; ++i) in[i] = static_cast<float>(i - 128) / 64.0f;
  REQUIRE(engine->set_input("x", in).is_ok());
  REQUIRE(engine->infer().is_ok());
  auto out = engine->output<float>("y").value();
  for (int i = 0; i < 256; ++i) {
    double v = -static_cast<double>(in[i]);
    for (int k = 0; k < 6; ++k) v = k % 2 ? std::max(v, 0.0) : std::tanh(v);
    CHECK(out[i] == Approx(-v).margin(1e-6));
  }
}

TEST_CASE("Mul(x, x) never overwrites its own operand", "[passes][memplan]") {
  Graph g;
  const TensorId x = g.add_input("x", DType::kF32, {8});
  const TensorId e = g.add_node("Exp", {x})->at(0);
  const TensorId sq = g.add_node("Mul", {e, e})->at(0);
  const TensorId y = g.add_node("Neg", {sq})->at(0);
  REQUIRE(g.mark_output(y, "y").is_ok());
  auto blob = compile(g, nullptr);
  auto engine = Engine::open_buffer(blob->data(), blob->size());
  REQUIRE(engine.is_ok());
  REQUIRE(engine->set_input("x", std::vector<float>(8, 1.0f)).is_ok());
  REQUIRE(engine->infer().is_ok());
  for (float v : engine->output<float>("y").value()) CHECK(v == Approx(-std::exp(2.0)));
}

TEST_CASE("a Reshape shares its input's buffer, and nothing writes over a tensor a view still needs",
          "[passes][memplan]") {
  Graph g;
  const TensorId x = g.add_input("x", DType::kF32, {4, 8});
  const TensorId e = g.add_node("Exp", {x})->at(0);
  const TensorId r = g.add_node("Reshape", {e}, {{"shape", std::vector<int64_t>{32}}})->at(0);
  // r dies at Neg, but e (the same buffer) is read again below: Neg must not run in place.
  const TensorId n = g.add_node("Neg", {r})->at(0);
  const TensorId back = g.add_node("Reshape", {n}, {{"shape", std::vector<int64_t>{4, 8}}})->at(0);
  const TensorId y = g.add_node("Mul", {back, e})->at(0);
  REQUIRE(g.mark_output(y, "y").is_ok());
  const ProgramSpec spec = compiled_spec(g);
  CHECK(spec.arena_bytes == 2 * 32 * 4);  // e with its view, n with its view: no copies

  auto blob = compile(g, nullptr);
  auto engine = Engine::open_buffer(blob->data(), blob->size());
  REQUIRE(engine.is_ok());
  std::vector<float> in(32);
  for (int i = 0; i < 32; ++i) in[i] = static_cast<float>(i - 16) / 8.0f;
  REQUIRE(engine->set_input("x", in).is_ok());
  REQUIRE(engine->infer().is_ok());
  auto out = engine->output<float>("y").value();
  for (int i = 0; i < 32; ++i) CHECK(out[i] == Approx(-std::exp(2.0 * in[i])).epsilon(1e-6));
}
