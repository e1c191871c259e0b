// ONNX If, Scan and Loop, inlined at import (src/frontend/onnx/control_flow.hpp): values against
// hand-computed sums, and the refusals for what pock cannot unroll.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "frontend/onnx_test_run.hpp"

using namespace pock;
using namespace pock::testing;

namespace {

void graph_attr(onnx::NodeProto& n, const std::string& name, const onnx::GraphProto& g) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = g;
}

void value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
           int elem = onnx::TensorProto::FLOAT) {
  auto* v = list->Add();
  v->set_name(name);
  v->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
}

onnx::NodeProto& body_node(onnx::GraphProto& g, const std::string& op, const std::vector<std::string>& inputs,
                           const std::vector<std::string>& outputs) {
  auto* n = g.add_node();
  n->set_op_type(op);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return *n;
}

// Scan body: sum_out = sum_in + next; scan_out = sum_out (a running sum of the rows).
onnx::GraphProto running_sum_body() {
  onnx::GraphProto body;
  body.set_name("running_sum");
  value(body.mutable_input(), "sum_in");
  value(body.mutable_input(), "next");
  value(body.mutable_output(), "sum_out");
  value(body.mutable_output(), "scan_out");
  body_node(body, "Add", {"sum_in", "next"}, {"sum_out"});
  body_node(body, "Identity", {"sum_out"}, {"scan_out"});
  return body;
}

OnnxModel scan_model(int64_t direction) {
  OnnxModel m(17);
  m.input("x", {3, 2}).floats("initial", {2}, {10, 20}).output("y").output("z");
  auto& scan = m.node("Scan", {"initial", "x"}, {"y", "z"}, "scan");
  OnnxModel::attr(scan, "num_scan_inputs", int64_t{1});
  OnnxModel::attr(scan, "scan_input_directions", std::vector<int64_t>{direction});
  graph_attr(scan, "body", running_sum_body());
  return m;
}

std::vector<float> run_two(const Graph& g, const std::vector<float>& x, const std::string& output) {
  return infer_one(g, "x", x, output);
}

// Loop body: y_out = y_in + step; scan_out = y_out (step: an outer-scope initializer).
onnx::GraphProto add_step_body(const std::string& cond_out_op) {
  onnx::GraphProto body;
  body.set_name("add_step");
  value(body.mutable_input(), "i", onnx::TensorProto::INT64);
  value(body.mutable_input(), "cond_in", onnx::TensorProto::BOOL);
  value(body.mutable_input(), "y_in");
  value(body.mutable_output(), "cond_out", onnx::TensorProto::BOOL);
  value(body.mutable_output(), "y_out");
  value(body.mutable_output(), "scan_out");
  if (cond_out_op == "Identity") body_node(body, "Identity", {"cond_in"}, {"cond_out"});
  else body_node(body, "Not", {"cond_in"}, {"cond_out"});
  body_node(body, "Add", {"y_in", "step"}, {"y_out"});
  body_node(body, "Identity", {"y_out"}, {"scan_out"});
  return body;
}

// A rank-0 graph input: OnnxModel::input writes no shape for empty dims.
void scalar_input(OnnxModel& m, const std::string& name, int elem) {
  m.input(name, {}, elem);
  m.graph().mutable_input(m.graph().input_size() - 1)->mutable_type()->mutable_tensor_type()->mutable_shape();
}

onnx::GraphProto branch(const std::string& name, const std::string& op, const std::vector<std::string>& inputs) {
  onnx::GraphProto g;
  g.set_name(name);
  value(g.mutable_output(), name + "_out");
  body_node(g, op, inputs, {name + "_out"});
  return g;
}

}  // namespace

TEST_CASE("ONNX Scan unrolls over the scan axis: final state and stacked outputs", "[onnx][control_flow]") {
  auto g = import_model(scan_model(0));
  REQUIRE(g.is_ok());
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  CHECK(run_two(g.value(), x, "y") == std::vector<float>{19, 32});
  CHECK(run_two(g.value(), x, "z") == std::vector<float>{11, 22, 14, 26, 19, 32});
  auto reversed = import_model(scan_model(1));  // rows taken last to first
  REQUIRE(reversed.is_ok());
  CHECK(run_two(reversed.value(), x, "z") == std::vector<float>{15, 26, 18, 30, 19, 32});
}

TEST_CASE("ONNX Scan-8 runs each batch element over its own sequence", "[onnx][control_flow]") {
  OnnxModel m(8);
  m.input("x", {2, 3, 1}).floats("initial", {2, 1}, {0, 100}).output("y").output("z");
  auto& scan = m.node("Scan", {"", "initial", "x"}, {"y", "z"}, "scan8");
  OnnxModel::attr(scan, "num_scan_inputs", int64_t{1});
  graph_attr(scan, "body", running_sum_body());
  auto g = import_model(m);
  REQUIRE(g.is_ok());
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  CHECK(run_two(g.value(), x, "y") == std::vector<float>{6, 115});
  CHECK(run_two(g.value(), x, "z") == std::vector<float>{1, 3, 6, 104, 109, 115});
}

TEST_CASE("ONNX Scan over a value of unknown length is refused, saying how to give it", "[onnx][control_flow][errors]") {
  OnnxModel m(17);
  m.input("x", {3, 2}).floats("initial", {2}, {0, 0}).output("y").output("z");
  m.node("Relu", {"x"}, {"r"});  // r has no value_info: its length is unknown before import
  auto& scan = m.node("Scan", {"initial", "r"}, {"y", "z"}, "scan");
  OnnxModel::attr(scan, "num_scan_inputs", int64_t{1});
  graph_attr(scan, "body", running_sum_body());
  auto g = import_model(m);
  REQUIRE_FALSE(g.is_ok());
  CHECK(g.status().message().find("no static shape") != std::string::npos);
  CHECK(g.status().message().find("infer_shapes") != std::string::npos);
}

TEST_CASE("ONNX Loop with a constant trip count unrolls; a run-time one is refused", "[onnx][control_flow]") {
  auto loop_model = [](bool constant_trips, const std::string& cond_out_op) {
    OnnxModel m(17);
    m.input("x", {2}).floats("step", {2}, {1, 10}).output("y").output("steps");
    if (constant_trips) m.ints("trips", {}, {3});
    else scalar_input(m, "trips", onnx::TensorProto::INT64);
    auto& loop = m.node("Loop", {"trips", "", "x"}, {"y", "steps"}, "loop");
    graph_attr(loop, "body", add_step_body(cond_out_op));
    return m;
  };
  auto g = import_model(loop_model(true, "Identity"));
  REQUIRE(g.is_ok());
  CHECK(infer_one(g.value(), "x", {0, 0}, "y") == std::vector<float>{3, 30});
  CHECK(infer_one(g.value(), "x", {0, 0}, "steps") == std::vector<float>{1, 10, 2, 20, 3, 30});
  // The outer-scope weight every iteration reads stays one parameter (training sums over them).
  const TensorId step = g->find("step");
  REQUIRE(step != kNoTensor);
  CHECK(g->tensor(step).kind == TensorKind::kParameter);
  int readers = 0;
  for (const Node& n : g->nodes()) readers += static_cast<int>(std::count(n.inputs.begin(), n.inputs.end(), step));
  CHECK(readers == 3);

  auto run_time = import_model(loop_model(false, "Identity"));
  REQUIRE_FALSE(run_time.is_ok());
  CHECK(run_time.status().message().find("trip count 'trips' is computed at run time") != std::string::npos);

  auto stops = import_model(loop_model(true, "Not"));  // the body decides when to stop
  REQUIRE_FALSE(stops.is_ok());
  CHECK(stops.status().message().find("cond_out") != std::string::npos);
}

TEST_CASE("ONNX If with a run-time condition selects between both branches", "[onnx][control_flow]") {
  OnnxModel m(17);
  m.input("x", {3}).floats("two", {1}, {2}).output("y");
  scalar_input(m, "c", onnx::TensorProto::BOOL);
  auto& node = m.node("If", {"c"}, {"y"}, "if");
  graph_attr(node, "then_branch", branch("then", "Mul", {"x", "two"}));
  graph_attr(node, "else_branch", branch("else", "Neg", {"x"}));
  auto g = import_model(m);
  INFO(g.status().message());
  REQUIRE(g.is_ok());
  auto blob = compile(g.value(), nullptr);
  REQUIRE(blob.is_ok());
  auto engine = Engine::open_buffer(blob->data(), blob->size());
  REQUIRE(engine.is_ok());
  REQUIRE(engine->set_input("x", std::vector<float>{1, -2, 3}).is_ok());
  for (uint8_t cond : {uint8_t{1}, uint8_t{0}}) {
    REQUIRE(engine->set_input("c", &cond, 1).is_ok());
    REQUIRE(engine->infer().is_ok());
    auto y = engine->output<float>("y");
    REQUIRE(y.is_ok());
    CHECK(y.value() == (cond ? std::vector<float>{2, -4, 6} : std::vector<float>{-1, 2, -3}));
  }
}

TEST_CASE("ONNX If with a constant condition keeps only the chosen branch", "[onnx][control_flow]") {
  OnnxModel m(17);
  m.input("x", {3}).floats("two", {1}, {2}).output("y");
  {
    auto& c = m.node("Constant", {}, {"c"}, "cond");
    auto* a = c.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::BOOL);
    a->mutable_t()->add_int32_data(0);
  }
  auto& node = m.node("If", {"c"}, {"y"}, "if");
  graph_attr(node, "then_branch", branch("then", "Mul", {"x", "two"}));
  graph_attr(node, "else_branch", branch("else", "Neg", {"x"}));
  auto g = import_model(m);
  REQUIRE(g.is_ok());
  const auto ops = ops_of(g.value());
  CHECK(std::find(ops.begin(), ops.end(), "Mul") == ops.end());
  CHECK(std::find(ops.begin(), ops.end(), "Where") == ops.end());
  CHECK(infer_one(g.value(), "x", {1, -2, 3}, "y") == std::vector<float>{-1, 2, -3});
}

TEST_CASE("ONNX If whose branches disagree on a shape is refused when the condition is computed",
          "[onnx][control_flow][errors]") {
  OnnxModel m(17);
  m.input("x", {3}).ints("axes", {1}, {0}).output("y");
  scalar_input(m, "c", onnx::TensorProto::BOOL);
  auto& node = m.node("If", {"c"}, {"y"}, "if");
  graph_attr(node, "then_branch", branch("then", "Neg", {"x"}));
  graph_attr(node, "else_branch", branch("else", "Unsqueeze", {"x", "axes"}));
  auto g = import_model(m);
  INFO(g.status().message());
  REQUIRE_FALSE(g.is_ok());
  CHECK(g.status().message().find("runs both branches") != std::string::npos);
  CHECK(g.status().message().find("[1, 3]") != std::string::npos);
}

TEST_CASE("ONNX control flow nested in a loop body is refused by name", "[onnx][control_flow][errors]") {
  OnnxModel m(17);
  m.input("x", {3, 2}).floats("initial", {2}, {0, 0}).output("y").output("z");
  onnx::GraphProto body = running_sum_body();
  auto& inner = body_node(body, "If", {"flag"}, {"unused"});
  graph_attr(inner, "then_branch", branch("then", "Neg", {"next"}));
  graph_attr(inner, "else_branch", branch("else", "Neg", {"next"}));
  auto& scan = m.node("Scan", {"initial", "x"}, {"y", "z"}, "outer");
  OnnxModel::attr(scan, "num_scan_inputs", int64_t{1});
  graph_attr(scan, "body", body);
  auto g = import_model(m);
  REQUIRE_FALSE(g.is_ok());
  CHECK(g.status().message().find("control flow of its own") != std::string::npos);
}
