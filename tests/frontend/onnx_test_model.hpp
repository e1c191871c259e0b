// Builds small ONNX models in memory for the frontend tests, the way an exporter would write them.
#pragma once
#include <cstring>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace pock::testing {

class OnnxModel {
 public:
  explicit OnnxModel(int64_t opset = 17) {
    model_.set_ir_version(8);
    auto* o = model_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
  }

  onnx::GraphProto& graph() { return *model_.mutable_graph(); }
  // Declares one more operator set (a domain besides the default one).
  OnnxModel& opset(const std::string& domain, int64_t version) {
    auto* o = model_.add_opset_import();
    o->set_domain(domain);
    o->set_version(version);
    return *this;
  }

  // dims < 0 become symbolic ("dim_param"), named by `symbols` in order.
  OnnxModel& input(const std::string& name, const std::vector<int64_t>& dims, int elem = onnx::TensorProto::FLOAT,
                   const std::vector<std::string>& symbols = {}) {
    auto* v = graph().add_input();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem);
    size_t sym = 0;
    for (int64_t d : dims) {
      auto* dim = t->mutable_shape()->add_dim();
      if (d >= 0) dim->set_dim_value(d);
      else dim->set_dim_param(sym < symbols.size() ? symbols[sym++] : "N");
    }
    return *this;
  }

  OnnxModel& output(const std::string& name) {
    graph().add_output()->set_name(name);
    return *this;
  }

  OnnxModel& floats(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& values) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
    return *this;
  }

  OnnxModel& ints(const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& values) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : dims) t->add_dims(d);
    for (int64_t v : values) t->add_int64_data(v);
    return *this;
  }

  // A Constant node holding a float scalar, as PyTorch writes literals.
  OnnxModel& scalar(const std::string& output, float value) {
    onnx::NodeProto& n = node("Constant", {}, {output}, "const_" + output);
    auto* a = n.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    a->mutable_t()->set_raw_data(std::string(reinterpret_cast<const char*>(&value), sizeof value));
    return *this;
  }

  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "") {
    auto* n = graph().add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }

  static void attr(onnx::NodeProto& n, const std::string& name, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr(onnx::NodeProto& n, const std::string& name, float v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void attr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }

  static void attr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }

  std::string bytes() const { return model_.SerializeAsString(); }

 private:
  onnx::ModelProto model_;
};

}  // namespace pock::testing
