// The import errors of issue 17, each said as what is really wrong: float64 is refused by name
// (never narrowed), a graph output that folds to a constant works, a static 0 dimension is called
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

TEST_CASE("float64 is refused naming the node or tensor, never narrowed to float32", "[onnx][errors]") {
  SECTION("a Cast to DOUBLE of a run-time value") {
    OnnxModel m;
    m.input("x", {2, 3});
    auto& cast = m.node("Cast", {"x"}, {"y"}, "/to_double/Cast");
    OnnxModel::attr(cast, "to", int64_t{onnx::TensorProto::DOUBLE});
    m.output("y");
    auto g = import_model(m);
    CHECK(g.status().code() == Code::kUnsupportedOp);
    CHECK_THAT(message_of(g), Catch::Contains("Cast node '/to_double/Cast'") && Catch::Contains("float64"));
  }
  SECTION("a Cast to DOUBLE that would be folded") {
    OnnxModel m;
    m.input("x", {2, 3});
    m.scalar("two", 2.0f);
    auto& cast = m.node("Cast", {"two"}, {"two_d"}, "/scale/Cast");
    OnnxModel::attr(cast, "to", int64_t{onnx::TensorProto::DOUBLE});
    m.node("Mul", {"x", "two_d"}, {"y"}, "/scale/Mul");
    m.output("y");
    CHECK_THAT(message_of(import_model(m)), Catch::Contains("'/scale/Cast'") && Catch::Contains("float64"));
  }
  SECTION("a DOUBLE initializer") {
    OnnxModel m;
    m.input("x", {2, 3});
    add_double_initializer(m, "scale", 0.5);
    m.node("Mul", {"x", "scale"}, {"y"}, "/scale/Mul");
    m.output("y");
    CHECK_THAT(message_of(import_model(m)), Catch::Contains("initializer 'scale'") && Catch::Contains("float64"));
  }
  SECTION("a Constant node holding a DOUBLE tensor") {
    OnnxModel m;
    m.input("x", {2, 3});
    auto& c = m.node("Constant", {}, {"half"}, "/const/half");
    auto* a = c.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::DOUBLE);
    const double half = 0.5;
    a->mutable_t()->set_raw_data(std::string(reinterpret_cast<const char*>(&half), sizeof half));
    m.node("Mul", {"x", "half"}, {"y"}, "/scale/Mul");
    m.output("y");
    CHECK_THAT(message_of(import_model(m)), Catch::Contains("Constant node '/const/half'") && Catch::Contains("float64"));
  }
  SECTION("a DOUBLE graph input") {
    OnnxModel m;
    m.input("x", {2, 3}, onnx::TensorProto::DOUBLE);
    m.node("Relu", {"x"}, {"y"});
    m.output("y");
    CHECK_THAT(message_of(import_model(m)), Catch::Contains("input 'x'") && Catch::Contains("float64"));
  }
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

TEST_CASE("an op pock lacks is named as such even when its first output is unnamed", "[onnx][errors]") {
  // GRU with only its final state read: output 0 is left empty, as exporters write it.
  OnnxModel m;
  m.input("x", {5, 1, 3}).input("w", {1, 6, 3}).input("r", {1, 6, 2});
  onnx::NodeProto& gru = m.node("GRU", {"x", "w", "r"}, {"", "h"}, "/rnn/GRU");
  OnnxModel::attr(gru, "hidden_size", int64_t{2});
  m.output("h");
  const std::string msg = message_of(import_model(m));
  CHECK_THAT(msg, Catch::Contains("no mapping for ONNX op 'GRU'"));
  CHECK_THAT(msg, !Catch::Contains("has no output"));
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
