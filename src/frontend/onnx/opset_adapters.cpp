#include "frontend/onnx/opset_adapters.hpp"

#include <string>
#include <unordered_set>
#include <vector>

namespace pock::onnx_import {
namespace {

// An operand that was an attribute before opset `until` and is input `position` from then on.
struct MovedOperand {
  const char* op;
  int64_t until;
  const char* attribute;
  int position;
  bool is_float;  // a float scalar (Clip's bounds, Pad's value, Dropout's ratio); else int64s
};

constexpr MovedOperand kMovedOperands[] = {
    {"Squeeze", 13, "axes", 1, false},         {"Unsqueeze", 13, "axes", 1, false},
    {"ReduceSum", 13, "axes", 1, false},       {"ReduceMean", 18, "axes", 1, false},
    {"ReduceMax", 18, "axes", 1, false},       {"ReduceMin", 18, "axes", 1, false},
    {"ReduceProd", 18, "axes", 1, false},      {"ReduceL1", 18, "axes", 1, false},
    {"ReduceL2", 18, "axes", 1, false},        {"ReduceLogSum", 18, "axes", 1, false},
    {"ReduceLogSumExp", 18, "axes", 1, false}, {"ReduceSumSquare", 18, "axes", 1, false},
    {"Split", 13, "split", 1, false},          {"Slice", 10, "starts", 1, false},
    {"Slice", 10, "ends", 2, false},           {"Slice", 10, "axes", 3, false},
    {"Pad", 11, "pads", 1, false},             {"Pad", 11, "value", 2, true},
    {"Clip", 11, "min", 1, true},              {"Clip", 11, "max", 2, true},
    {"Dropout", 12, "ratio", 1, true},         {"TopK", 10, "k", 1, false},
    {"DFT", 20, "axis", 2, false},
};

class Adapter {
 public:
  Adapter(const onnx::GraphProto& graph, int64_t opset) : in_(graph), opset_(opset) {
    auto note = [&](const std::string& n) { names_.insert(n); };
    for (const auto& t : graph.initializer()) note(t.name());
    for (const auto& v : graph.input()) note(v.name());
    for (const auto& n : graph.node()) {
      for (const auto& i : n.input()) note(i), read_.insert(i);
      for (const auto& o : n.output()) note(o);
    }
    for (const auto& o : graph.output()) read_.insert(o.name());
  }

  Result<onnx::GraphProto> run() {
    out_ = in_;
    out_.clear_node();
    for (index_ = 0; index_ < in_.node_size(); ++index_) {
      onnx::NodeProto node = in_.node(index_);
      if (!node.domain().empty() && node.domain() != "ai.onnx") {
        *out_.add_node() = node;
        continue;
      }
      POCK_RETURN_IF_ERROR(adapt(node));
    }
    return out_;
  }

 private:
  Status adapt(onnx::NodeProto& node) {
    const std::string& op = node.op_type();
    // DFT's axis defaults to 1 before opset 20 and to -2 from then on: written out, it moves to
    // the input (below) with the meaning of the node's opset.
    if (op == "DFT" && opset_ < 20 && !has_attribute(node, "axis")) set_int(node, "axis", 1);
    for (const MovedOperand& m : kMovedOperands) {
      if (op == m.op && opset_ < m.until) move_to_input(node, m);
    }
    if (op == "BatchNormalization") POCK_RETURN_IF_ERROR(adapt_batch_norm(node));
    if (op == "Split") POCK_RETURN_IF_ERROR(drop_num_outputs(node));
    if (op == "Cast" || op == "CastLike") drop_attribute(node, "saturate");
    // Before opset 16 RoiAlign had no choice of mode and did not shift by half a pixel.
    if (op == "RoiAlign" && opset_ < 16 && !has_attribute(node, "coordinate_transformation_mode")) {
      set_string(node, "coordinate_transformation_mode", "output_half_pixel");
    }  // only float8 targets saturate
    if (op == "GroupNormalization" && opset_ < 21) {
      return refuse(node, "before opset 21 its scale and bias are per group, not per channel; re-export at opset 21");
    }
    if ((op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") && opset_ < 13) return coerce_to_2d(node);
    *out_.add_node() = node;
    return Status::ok();
  }

  // Before opset 13 these ops flatten x to 2-D at `axis` (default 1) and normalize each row:
  // Flatten, the op along the last axis, and a Reshape back. For a 2-D x the Flatten and Reshape
  // are identities, which the converters drop.
  Status coerce_to_2d(onnx::NodeProto& node) {
    int64_t axis = 1;
    for (const auto& a : node.attribute()) {
      if (a.name() == "axis") axis = a.i();
    }
    drop_attribute(node, "axis");
    if (axis == -1) {  // the last axis: the same rows either way
      set_int(node, "axis", -1);
      *out_.add_node() = node;
      return Status::ok();
    }
    const std::string x = node.input(0), y = node.output(0), base = node.name().empty() ? y : node.name();
    const std::string flat = unique(y + "/flat"), rows = unique(y + "/rows"), shape = unique(y + "/shape");
    onnx::NodeProto& flatten = add_node("Flatten", {x}, {flat}, base + "/flatten");
    set_int(flatten, "axis", axis);
    onnx::NodeProto& inner = add_node(node.op_type(), {flat}, {rows}, base);
    set_int(inner, "axis", 1);
    add_node("Shape", {x}, {shape}, base + "/shape");
    add_node("Reshape", {rows, shape}, {y}, base + "/reshape");
    return Status::ok();
  }

  Status adapt_batch_norm(onnx::NodeProto& node) {
    if (opset_ < 9) {
      for (const auto& a : node.attribute()) {
        if (a.name() == "spatial" && a.i() == 0) {
          return refuse(node, "spatial = 0 (statistics per activation, not per channel) is not supported");
        }
      }
      drop_attribute(node, "spatial");
    }
    // Outputs 3 and 4 (before opset 14): the batch's mean and variance, which pock keeps inside
    // its training step.
    for (int k = 3; k < node.output_size(); ++k) {
      if (!node.output(k).empty() && read_.count(node.output(k))) {
        return refuse(node, "output " + std::to_string(k) + " (the batch's saved " + (k == 3 ? "mean" : "variance") +
                                ") is read by the model; pock does not export it");
      }
    }
    while (node.output_size() > 3) node.mutable_output()->RemoveLast();
    return Status::ok();
  }

  // Opset 18: `num_outputs` equal parts, the last one smaller when the axis does not divide; the
  // converter splits that way whenever no sizes are given, so only the count needs checking.
  Status drop_num_outputs(onnx::NodeProto& node) {
    for (const auto& a : node.attribute()) {
      if (a.name() == "num_outputs" && a.i() != node.output_size()) {
        return Status(Code::kInvalidArgument, where(node) + ": num_outputs " + std::to_string(a.i()) + " but " +
                                                  std::to_string(node.output_size()) + " outputs");
      }
    }
    drop_attribute(node, "num_outputs");
    return Status::ok();
  }

  void move_to_input(onnx::NodeProto& node, const MovedOperand& m) {
    const onnx::AttributeProto* attr = nullptr;
    for (const auto& a : node.attribute()) {
      if (a.name() == m.attribute) attr = &a;
    }
    if (!attr) return;  // absent attribute, absent input: the same default
    const std::string name = unique((node.name().empty() ? node.output(0) : node.name()) + "/" + m.attribute);
    onnx::TensorProto* t = out_.add_initializer();
    t->set_name(name);
    if (m.is_float) {
      t->set_data_type(onnx::TensorProto::FLOAT);
      t->add_float_data(attr->f());
    } else {
      t->set_data_type(onnx::TensorProto::INT64);
      if (attr->type() == onnx::AttributeProto::INT) {
        t->add_dims(1);
        t->add_int64_data(attr->i());
      } else {
        t->add_dims(attr->ints_size());
        for (int64_t v : attr->ints()) t->add_int64_data(v);
      }
    }
    while (node.input_size() <= m.position) node.add_input("");
    node.set_input(m.position, name);
    drop_attribute(node, m.attribute);
  }

  static void drop_attribute(onnx::NodeProto& node, const std::string& name) {
    auto* attrs = node.mutable_attribute();
    for (int i = attrs->size(); i-- > 0;) {
      if (attrs->Get(i).name() == name) attrs->DeleteSubrange(i, 1);
    }
  }

  static bool has_attribute(const onnx::NodeProto& node, const std::string& name) {
    for (const auto& a : node.attribute()) {
      if (a.name() == name) return true;
    }
    return false;
  }

  static void set_string(onnx::NodeProto& node, const std::string& name, const std::string& v) {
    auto* a = node.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }

  static void set_int(onnx::NodeProto& node, const std::string& name, int64_t v) {
    auto* a = node.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }

  onnx::NodeProto& add_node(const std::string& op, const std::vector<std::string>& inputs,
                            const std::vector<std::string>& outputs, const std::string& name) {
    onnx::NodeProto* n = out_.add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }

  std::string unique(const std::string& base) {
    std::string name = base;
    for (int k = 1; names_.count(name); ++k) name = base + "_" + std::to_string(k);
    names_.insert(name);
    return name;
  }

  std::string where(const onnx::NodeProto& node) const {
    return "node " + std::to_string(index_) + " '" + node.name() + "' (" + node.op_type() + ", opset " +
           std::to_string(opset_) + ")";
  }

  Status refuse(const onnx::NodeProto& node, const std::string& what) const {
    return Status(Code::kUnsupportedOp, where(node) + ": " + what);
  }

  const onnx::GraphProto& in_;
  const int64_t opset_;
  onnx::GraphProto out_;
  int index_ = 0;
  std::unordered_set<std::string> names_;  // every value name, so that added ones are new
  std::unordered_set<std::string> read_;   // values some node or the graph output reads
};

}  // namespace

Result<onnx::GraphProto> adapt_to_canonical(const onnx::GraphProto& graph, int64_t opset) {
  return Adapter(graph, opset).run();
}

}  // namespace pock::onnx_import
