// The import errors of issue 17, each said as what is really wrong: float64 imports as f64 (never
// narrowed) and an f64 op without a kernel is refused by name, a graph output that folds to a constant works, a static 0 dimension is called
// zero-size (not symbolic), a shape operand that is a graph input is called that (not a dynamic
// shape), and an op no backend of the blob runs is refused at compile time (not at infer).
#include <catch2/catch.hpp>

#include <cstring>

#include "frontend/onnx_test_run.hpp"

using namespace pock;
using pock::testing::import_model;
using pock::testing::infer_one;
using pock::testing::OnnxModel;

namespace {

std::string message_of(const Result<Graph>& g) {
  REQUIRE_FALSE(g.is_ok());
  return g.status().message();
}

void add_double_initializer(OnnxModel& m, const std::string& name, double value) {
  auto* t = m.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::DOUBLE);
  t->add_dims(1);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(&value), sizeof value));
}

}  // namespace

TEST_CASE("float64 imports as f64, never narrowed to float32", "[onnx][errors]") {
  SECTION("a Cast to DOUBLE of a run-time value widens exactly") {
    OnnxModel m;
    m.input("x", {3});
    auto& cast = m.node("Cast", {"x"}, {"y"}, "/to_double/Cast");
    OnnxModel::attr(cast, "to", int64_t{onnx::TensorProto::DOUBLE});
    m.output("y");
    auto g = import_model(m);
    REQUIRE(g.is_ok());
    CHECK(g->tensor(g->find("y")).dtype == DType::kF64);
    CHECK(infer_one<double>(g.value(), "x", {0.1f, -3.0f, 1e30f}, "y") ==
          std::vector<double>{static_cast<double>(0.1f), -3.0, static_cast<double>(1e30f)});
  }
  SECTION("DOUBLE initializers, raw and in double_data, keep every bit") {
    for (const bool raw : {true, false}) {
      OnnxModel m;
      m.input("x", {1});
      auto& cast = m.node("Cast", {"x"}, {"xd"}, "/to_double/Cast");
      OnnxModel::attr(cast, "to", int64_t{onnx::TensorProto::DOUBLE});
      auto* t = m.graph().add_initializer();
      t->set_name("tenth");
      t->set_data_type(onnx::TensorProto::DOUBLE);
      t->add_dims(1);
      const double tenth = 0.1;  // not an f32 value: narrowing would show in the sum
      if (raw) t->set_raw_data(std::string(reinterpret_cast<const char*>(&tenth), sizeof tenth));
      else t->add_double_data(tenth);
      m.node("Add", {"xd", "tenth"}, {"y"}, "/shift/Add");
      m.output("y");
      auto g = import_model(m);
      REQUIRE(g.is_ok());
      CHECK(infer_one<double>(g.value(), "x", {0.5f}, "y") == std::vector<double>{0.5 + 0.1});
    }
  }
  SECTION("an f32 times f64 Mul (not valid ONNX) is refused naming both dtypes") {
    OnnxModel m;
    m.input("x", {2, 3});
    add_double_initializer(m, "scale", 0.5);
    m.node("Mul", {"x", "scale"}, {"y"}, "/scale/Mul");
    m.output("y");
    CHECK_THAT(message_of(import_model(m)), Catch::Contains("/scale/Mul") && Catch::Contains("f64") && Catch::Contains("f32"));
  }
  SECTION("an f64 op pock has no kernel for is refused at compile time, naming op and dtype") {
    OnnxModel m;
    m.input("x", {2, 3}, onnx::TensorProto::DOUBLE);
    m.node("Relu", {"x"}, {"y"}, "/act/Relu");
    m.output("y");
    auto g = import_model(m);
    REQUIRE(g.is_ok());
    auto blob = compile(g.value(), nullptr);
    REQUIRE_FALSE(blob.is_ok());
    CHECK(blob.status().code() == Code::kMissingKernel);
    CHECK_THAT(blob.status().message(), Catch::Contains("op Relu") && Catch::Contains("f64"));
  }
}

TEST_CASE("uint32 and uint64 initializers are read from uint64_data, int16 from int32_data", "[onnx][errors]") {
  OnnxModel m;
  m.input("a", {2}, onnx::TensorProto::UINT64).input("b", {2}, onnx::TensorProto::UINT32).input("c", {2}, onnx::TensorProto::INT16);
  const auto add_init = [&](const char* name, int type, auto fill) {
    auto* t = m.graph().add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    t->add_dims(2);
    fill(t);
  };
  const uint64_t big = (uint64_t{1} << 63) + 5;  // above INT64_MAX: must survive the import
  add_init("ka", onnx::TensorProto::UINT64, [&](onnx::TensorProto* t) { t->add_uint64_data(big); t->add_uint64_data(1); });
  add_init("kb", onnx::TensorProto::UINT32, [](onnx::TensorProto* t) { t->add_uint64_data(4000000000u); t->add_uint64_data(2); });
  add_init("kc", onnx::TensorProto::INT16, [](onnx::TensorProto* t) { t->add_int32_data(-300); t->add_int32_data(7); });
  m.node("Max", {"a", "ka"}, {"ya"});
  m.node("Max", {"b", "kb"}, {"yb"});
  m.node("Min", {"c", "kc"}, {"yc"});
  m.output("ya").output("yb").output("yc");
  auto g = import_model(m);
  INFO(g.status().to_string());
  REQUIRE(g.is_ok());
  auto blob = compile(g.value(), nullptr);
  REQUIRE(blob.is_ok());
  auto engine = Engine::open_buffer(blob->data(), blob->size());
  REQUIRE(engine.is_ok());
  const std::vector<uint64_t> a = {1, 9};
  const std::vector<uint32_t> b = {1, 9};
  const std::vector<int16_t> c = {1, 9};
  REQUIRE(engine->set_input("a", a.data(), sizeof(uint64_t) * 2).is_ok());
  REQUIRE(engine->set_input("b", b.data(), sizeof(uint32_t) * 2).is_ok());
  REQUIRE(engine->set_input("c", c.data(), sizeof(int16_t) * 2).is_ok());
  REQUIRE(engine->infer().is_ok());
  CHECK(engine->output<uint64_t>("ya").value() == std::vector<uint64_t>{big, 9});
  CHECK(engine->output<uint32_t>("yb").value() == std::vector<uint32_t>{4000000000u, 9});
  CHECK(engine->output<int16_t>("yc").value() == std::vector<int16_t>{-300, 7});
}

TEST_CASE("a graph output that folds to a constant is returned by the blob", "[onnx][errors]") {
  OnnxModel m;
  m.input("x", {2, 3});
  m.node("Shape", {"x"}, {"shape"}, "/shape");
  m.node("Relu", {"x"}, {"y"}, "/relu");
  m.output("y").output("shape");
  auto g = import_model(m);
  REQUIRE(g.is_ok());
  CHECK(infer_one<int64_t>(g.value(), "x", std::vector<float>(6, 1.0f), "shape") == std::vector<int64_t>{2, 3});

  SECTION("an output that cannot take its name is refused saying why") {
    OnnxModel echo;
    echo.input("x", {2, 3});
    echo.floats("w", {2}, {1, 2});
    echo.node("Relu", {"x"}, {"y"});
    OnnxModel input_out = echo, weight_out = echo, twice = echo;
    input_out.output("y").output("x");
    CHECK_THAT(message_of(import_model(input_out)), Catch::Contains("output 'x' is also a graph input"));
    weight_out.output("y").output("w");
    CHECK_THAT(message_of(import_model(weight_out)), Catch::Contains("output 'w' is also an initializer"));
    twice.output("y").output("y");
    CHECK_THAT(message_of(import_model(twice)), Catch::Contains("output 'y' is listed twice"));
  }
}

TEST_CASE("a static 0 dimension is called zero-size, not symbolic", "[onnx][errors]") {
  OnnxModel m;
  m.input("x", {0, 3});
  m.node("Relu", {"x"}, {"y"});
  m.output("y");
  const std::string msg = message_of(import_model(m));
  CHECK_THAT(msg, Catch::Contains("dimension 0 is 0 in the model") && Catch::Contains("zero-size"));
  CHECK_THAT(msg, !Catch::Contains("symbolic"));

  OnnxImportOptions zero;
  const Status parsed = parse_input_shape_arg("x=0,3", &zero);
  REQUIRE_FALSE(parsed.is_ok());
  CHECK_THAT(parsed.message(), Catch::Contains("zero-size"));
  zero.input_shapes["x"] = Shape{0, 3};  // set by an API caller, past the argument parser
  CHECK_THAT(message_of(import_model(m, zero)), Catch::Contains("0 in --input-shape") && Catch::Contains("zero-size"));

  // An exporter that wrote 0 for an unknown size: the override the message suggests works.
  OnnxImportOptions sized;
  REQUIRE(parse_input_shape_arg("x=4,3", &sized).is_ok());
  auto g = import_model(m, sized);
  REQUIRE(g.is_ok());
  CHECK(g->tensor(g->find("x")).shape == Shape{4, 3});
}

TEST_CASE("a shape operand that is a graph input is called that, not a dynamic shape", "[onnx][errors]") {
  OnnxModel m;
  m.input("x", {2, 6}).input("target", {2}, onnx::TensorProto::INT64);
  m.node("Reshape", {"x", "target"}, {"y"}, "/view/Reshape");
  m.output("y");
  const std::string msg = message_of(import_model(m));
  CHECK_THAT(msg, Catch::Contains("Reshape node '/view/Reshape': input 1 ('target', shape) is a graph input"));
  CHECK_THAT(msg, Catch::Contains("initializer"));
  CHECK_THAT(msg, !Catch::Contains("dynamic shape"));
}

TEST_CASE("a node whose first output is unnamed imports when a later output is read", "[onnx][errors]") {
  // GRU with only its final state read: output 0 is left empty, as exporters write it.
  OnnxModel m;
  m.input("x", {5, 1, 3}).input("w", {1, 6, 3}).input("r", {1, 6, 2});
  onnx::NodeProto& gru = m.node("GRU", {"x", "w", "r"}, {"", "h"}, "/rnn/GRU");
  OnnxModel::attr(gru, "hidden_size", int64_t{2});
  m.output("h");
  auto g = import_model(m);
  INFO(g.status().to_string());
  CHECK(g.is_ok());
}

TEST_CASE("compile refuses an op that no backend of the blob has a kernel for", "[onnx][errors]") {
  // pock's float16 arithmetic is Max, Min, Pow and Mod: a float16 Add imports, but nothing runs it.
  OnnxModel m;
  m.input("a", {2}, onnx::TensorProto::FLOAT16).input("b", {2}, onnx::TensorProto::FLOAT16);
  m.node("Add", {"a", "b"}, {"y"}, "/count/Add");
  m.output("y");
  auto g = import_model(m);
  REQUIRE(g.is_ok());
  auto blob = compile(g.value(), nullptr);
  REQUIRE_FALSE(blob.is_ok());
  CHECK(blob.status().code() == Code::kMissingKernel);
  CHECK_THAT(blob.status().message(), Catch::Contains("op Add (node '/count/Add')") && Catch::Contains("f16") &&
                                          Catch::Contains("backends asked:") && Catch::Contains("ref"));
}
