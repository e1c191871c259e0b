// Graph inputs bound to values at compile time (OnnxImportOptions::bound_inputs, pockc --bind):
// a shape operand fed as a graph input compiles and runs once bound; a binding that names no
// input, or whose dtype or shape disagree with the file, is refused by name; the refusal that
// asks for a binding names the input in its message and in OnnxImportRefusal; a zero-size input,
// bound to its empty value, makes what it feeds empty, computed by no kernel.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>

#include "frontend/onnx_test_run.hpp"

using namespace pock;
using pock::testing::import_model;
using pock::testing::infer_one;
using pock::testing::OnnxModel;

namespace {

OnnxModel reshape_model() {
  OnnxModel m;
  m.input("x", {2, 6}).input("target", {2}, onnx::TensorProto::INT64);
  m.node("Reshape", {"x", "target"}, {"y"}, "/view/Reshape");
  m.output("y");
  return m;
}

OnnxBoundValue int64s(const Shape& shape, const std::vector<int64_t>& values) {
  OnnxBoundValue v;
  v.dtype = DType::kI64;
  v.shape = shape;
  v.bytes.resize(values.size() * sizeof(int64_t));
  std::memcpy(v.bytes.data(), values.data(), v.bytes.size());
  return v;
}

std::string message_of(const Result<Graph>& g) {
  REQUIRE_FALSE(g.is_ok());
  return g.status().message();
}

}  // namespace

TEST_CASE("a bound shape input makes Reshape compile and run", "[onnx][bind]") {
  const OnnxModel m = reshape_model();
  OnnxImportRefusal refusal;
  const std::string bytes = m.bytes();
  auto refused = import_onnx_bytes(bytes.data(), bytes.size(), {}, ".", &refusal);
  const std::string msg = message_of(refused);
  CHECK(refusal.input_to_bind == "target");
  CHECK_THAT(msg, Catch::Contains("input 1 ('target', shape) is a graph input") && Catch::Contains("--bind target="));

  for (const char* form : {"typed", "text"}) {
    SECTION(form) {
      OnnxImportOptions options;
      if (std::string(form) == "typed") options.bound_inputs["target"] = int64s({2}, {3, 4});
      else REQUIRE(parse_bind_arg("target=3,4", &options).is_ok());
      auto g = import_model(m, options);
      REQUIRE(g.is_ok());
      CHECK(g->find("target") == kNoTensor);  // a constant, not an input of the blob
      std::vector<float> x(12);
      for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(k);
      CHECK(infer_one(*g, "x", x, "y") == x);  // a reshape moves no element
      auto blob = compile(*g, nullptr);
      REQUIRE(blob.is_ok());
      auto engine = Engine::open_buffer(blob->data(), blob->size());
      REQUIRE(engine.is_ok());
      CHECK(engine->info("target").status().code() == Code::kNotFound);
      auto y = engine->info("y");
      REQUIRE(y.is_ok());
      CHECK(Shape(y->dims, y->dims + y->rank) == Shape{3, 4});
    }
  }
}

TEST_CASE("a binding that disagrees with the model is refused by name", "[onnx][bind]") {
  const OnnxModel m = reshape_model();
  OnnxImportOptions not_an_input;
  not_an_input.bound_inputs["shape"] = int64s({2}, {3, 4});
  auto g = import_model(m, not_an_input);
  CHECK(g.status().code() == Code::kNotFound);
  CHECK_THAT(message_of(g), Catch::Contains("--bind names 'shape', which is not an input of the model"));

  OnnxImportOptions wrong_dtype;
  wrong_dtype.bound_inputs["target"] = int64s({2}, {3, 4});
  wrong_dtype.bound_inputs["target"].dtype = DType::kI32;
  wrong_dtype.bound_inputs["target"].bytes.resize(8);
  CHECK_THAT(message_of(import_model(m, wrong_dtype)),
             Catch::Contains("--bind target: the value is i32, but the model declares the input i64"));

  OnnxImportOptions wrong_shape;
  wrong_shape.bound_inputs["target"] = int64s({3}, {3, 2, 2});
  CHECK_THAT(message_of(import_model(m, wrong_shape)),
             Catch::Contains("--bind target: the value has shape [3], but the model declares the input [2]"));

  OnnxImportOptions short_bytes;
  short_bytes.bound_inputs["target"] = int64s({2}, {3});
  CHECK_THAT(message_of(import_model(m, short_bytes)), Catch::Contains("--bind target"));

  OnnxImportOptions not_an_int;
  REQUIRE(parse_bind_arg("target=3,4.5", &not_an_int).is_ok());
  CHECK_THAT(message_of(import_model(m, not_an_int)), Catch::Contains("--bind target: '4.5' is not a i64 value"));

  OnnxImportOptions too_many;
  REQUIRE(parse_bind_arg("target=1,3,4", &too_many).is_ok());
  CHECK_THAT(message_of(import_model(m, too_many)), Catch::Contains("the value has shape [3]"));

  OnnxImportOptions initializer;  // an initializer's value is known already
  OnnxModel with_weight = reshape_model();
  with_weight.floats("w", {2}, {1, 2});
  initializer.bound_inputs["w"] = int64s({2}, {1, 2});
  CHECK_THAT(message_of(import_model(with_weight, initializer)), Catch::Contains("which is an initializer"));
}

TEST_CASE("bind arguments are parsed strictly", "[onnx][bind]") {
  OnnxImportOptions o;
  CHECK_FALSE(parse_bind_arg("=1,2", &o).is_ok());
  CHECK_FALSE(parse_bind_arg("x", &o).is_ok());
  CHECK_FALSE(parse_bind_arg("x=1,,2", &o).is_ok());
  CHECK_FALSE(parse_bind_arg("x=1,", &o).is_ok());
  REQUIRE(parse_bind_arg("x=1,2", &o).is_ok());
  CHECK_FALSE(parse_bind_arg("x=3", &o).is_ok());  // bound twice
  REQUIRE(parse_bind_arg("axes=", &o).is_ok());    // an empty value (no axes)
  CHECK(o.bound_inputs["axes"].literal->empty());
}

TEST_CASE("text bindings take the declared dtype and rank", "[onnx][bind]") {
  // Pad with a constant value given as a rank-0 float input, pads as an int64 input.
  OnnxModel m;
  m.input("x", {1, 2}).input("pads", {4}, onnx::TensorProto::INT64).input("value", {}, onnx::TensorProto::FLOAT);
  m.graph().mutable_input(2)->mutable_type()->mutable_tensor_type()->mutable_shape();  // declared rank 0
  m.node("Pad", {"x", "pads", "value"}, {"y"}, "pad");
  m.output("y");
  OnnxImportRefusal refusal;
  const std::string bytes = m.bytes();
  CHECK_FALSE(import_onnx_bytes(bytes.data(), bytes.size(), {}, ".", &refusal).is_ok());
  CHECK(refusal.input_to_bind == "pads");

  OnnxImportOptions options;
  REQUIRE(parse_bind_arg("pads=0,1,0,0", &options).is_ok());
  REQUIRE(parse_bind_arg("value=2.5", &options).is_ok());
  auto g = import_model(m, options);
  REQUIRE(g.is_ok());
  CHECK(infer_one(*g, "x", {7, 8}, "y") == std::vector<float>{2.5f, 7, 8});

  OnnxImportOptions two_values;
  REQUIRE(parse_bind_arg("pads=0,1,0,0", &two_values).is_ok());
  REQUIRE(parse_bind_arg("value=1,2", &two_values).is_ok());
  CHECK_THAT(message_of(import_model(m, two_values)), Catch::Contains("the input is a scalar, but 2 values are given"));

  OnnxImportOptions out_of_range;  // int32 declared: a value past its range is refused, not wrapped
  OnnxModel m32;
  m32.input("x", {2, 6}).input("target", {2}, onnx::TensorProto::INT32);
  m32.node("Reshape", {"x", "target"}, {"y"});
  m32.output("y");
  REQUIRE(parse_bind_arg("target=4294967299,4", &out_of_range).is_ok());
  CHECK_THAT(message_of(import_model(m32, out_of_range)), Catch::Contains("out of range for i32"));
}

TEST_CASE("an operand computed from a graph input names that input for binding", "[onnx][bind]") {
  // Unsqueeze's axes computed at run time from the graph input 'a' (a Cast in between).
  OnnxModel m;
  m.input("x", {3}).input("a", {1}, onnx::TensorProto::INT32);
  OnnxModel::attr(m.node("Cast", {"a"}, {"axes"}), "to", int64_t{onnx::TensorProto::INT64});
  m.node("Unsqueeze", {"x", "axes"}, {"y"}, "unsqueeze");
  m.output("y");
  OnnxImportRefusal refusal;
  const std::string bytes = m.bytes();
  const std::string msg = message_of(import_onnx_bytes(bytes.data(), bytes.size(), {}, ".", &refusal));
  CHECK(refusal.input_to_bind == "a");
  CHECK_THAT(msg, Catch::Contains("is computed at run time from graph input 'a'") && Catch::Contains("--bind a="));

  OnnxImportOptions options;
  REQUIRE(parse_bind_arg("a=1", &options).is_ok());
  auto g = import_model(m, options);
  REQUIRE(g.is_ok());
  auto blob = compile(*g, nullptr);
  REQUIRE(blob.is_ok());
  auto engine = Engine::open_buffer(blob->data(), blob->size());
  REQUIRE(engine.is_ok());
  auto y = engine->info("y");
  REQUIRE(y.is_ok());
  CHECK(Shape(y->dims, y->dims + y->rank) == Shape{3, 1});
}

TEST_CASE("a bound empty axes input reduces over every axis", "[onnx][bind]") {
  // ReduceSum-13 with its axes a graph input of static size 0: no graph tensor can hold it, but
  // bound, it is the empty axes list (reduce everything, or nothing with noop_with_empty_axes).
  for (int64_t noop : {0, 1}) {
    OnnxModel m;
    m.input("x", {2, 2}).input("axes", {0}, onnx::TensorProto::INT64);
    OnnxModel::attr(m.node("ReduceSum", {"x", "axes"}, {"y"}, "sum"), "noop_with_empty_axes", noop);
    m.output("y");
    OnnxImportRefusal refusal;
    const std::string bytes = m.bytes();
    const std::string msg = message_of(import_onnx_bytes(bytes.data(), bytes.size(), {}, ".", &refusal));
    CHECK(refusal.input_to_bind == "axes");
    CHECK_THAT(msg, Catch::Contains("--bind axes="));

    OnnxImportOptions options;
    REQUIRE(parse_bind_arg("axes=", &options).is_ok());
    auto g = import_model(m, options);
    REQUIRE(g.is_ok());
    const std::vector<float> x{1, 2, 3, 4};
    CHECK(infer_one(*g, "x", x, "y") == (noop ? x : std::vector<float>{10}));
  }
}

TEST_CASE("a zero-size data input is refused until bound; then what it feeds has no elements and no kernel", "[onnx][bind]") {
  // x [0, 3] may be an exporter's 0 for an unknown size: refused, with both ways out. Bound to
  // its one (empty) value, Relu of it has no elements (no kernel runs) and Concat reads b alone.
  OnnxModel m;
  m.input("x", {0, 3}).input("b", {1, 3});
  m.node("Relu", {"x"}, {"r"}, "relu");
  OnnxModel::attr(m.node("Concat", {"r", "b"}, {"y"}, "cat"), "axis", int64_t{0});
  m.output("y");
  OnnxImportRefusal refusal;
  const std::string bytes = m.bytes();
  const std::string msg = message_of(import_onnx_bytes(bytes.data(), bytes.size(), {}, ".", &refusal));
  CHECK(refusal.input_to_bind == "x");
  CHECK_THAT(msg, Catch::Contains("zero-size") && Catch::Contains("--input-shape x=") && Catch::Contains("--bind x=@empty.npy"));

  OnnxBoundValue empty;
  empty.dtype = DType::kF32;
  empty.shape = {0, 3};
  OnnxImportOptions options;
  options.bound_inputs["x"] = empty;
  auto g = import_model(m, options);
  INFO(g.status().to_string());
  REQUIRE(g.is_ok());
  const std::vector<std::string> ops = pock::testing::ops_of(*g);
  CHECK(std::find(ops.begin(), ops.end(), "Relu") == ops.end());
  CHECK(infer_one(*g, "b", {-1, 0, 2}, "y") == std::vector<float>{-1, 0, 2});
}
