#include "frontend/onnx/legacy_opsets.hpp"

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <exception>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "frontend/onnx/node_schemas.hpp"

namespace pock::onnx_import {
namespace {

std::string node_text(int i, const onnx::NodeProto& node) {
  return "node " + std::to_string(i) + " '" + node.name() + "' (" + node.op_type() + ")";
}

// The rank and element count of each value whose shape the model states or ONNX infers.
struct KnownShapes {
  std::unordered_map<std::string, std::vector<int64_t>> dims;  // -1: a dimension without a value

  void note(const onnx::ValueInfoProto& v) {
    if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
    std::vector<int64_t>& d = dims[v.name()];
    d.clear();
    for (const auto& dim : v.type().tensor_type().shape().dim()) d.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
  }
  const std::vector<int64_t>* find(const std::string& name) const {
    auto it = dims.find(name);
    return it == dims.end() ? nullptr : &it->second;
  }
};

KnownShapes known_shapes(const onnx::GraphProto& g) {
  KnownShapes shapes;
  for (const auto& v : g.input()) shapes.note(v);
  for (const auto& v : g.value_info()) shapes.note(v);
  for (const auto& v : g.output()) shapes.note(v);
  for (const auto& t : g.initializer()) shapes.dims[t.name()].assign(t.dims().begin(), t.dims().end());
  return shapes;
}

// Rewrites the two forms onnx's converter gets wrong, into forms it converts as meant. Shapes come
// from ONNX's shape inference over the model; a node that needs one it cannot find is refused.
class ConverterFixes {
 public:
  explicit ConverterFixes(onnx::ModelProto* model) : model_(*model), g_(*model->mutable_graph()) {
    infer_shapes();
    shapes_ = known_shapes(g_);
    for (const auto& kv : shapes_.dims) names_.insert(kv.first);
    for (const auto& n : g_.node()) names_.insert(n.output().begin(), n.output().end());
  }

  Status run() {
    for (int i = 0; i < g_.node_size(); ++i) {
      onnx::NodeProto node = g_.node(i);
      if (node.domain().empty() || node.domain() == "ai.onnx") {
        if (node.op_type() == "PRelu") POCK_RETURN_IF_ERROR(slope_per_channel(i, node));
        if (kBroadcastOps.count(node.op_type())) POCK_RETURN_IF_ERROR(broadcast_at_axis(i, node));
      }
      *nodes_.Add() = std::move(node);
    }
    g_.mutable_node()->Swap(&nodes_);
    infer_shapes();  // the converter reads the shapes of the values added here too
    return Status::ok();
  }

 private:
  // The ops whose `broadcast` and `axis` attributes opset 7 replaced by numpy broadcasting.
  inline static const std::unordered_set<std::string> kBroadcastOps = {"Add", "Sub", "Mul", "Div", "Pow"};

  // Before opset 7 PRelu does not broadcast: a slope of C values applies per channel (axis 1), as in
  // PyTorch and Caffe2, which wrote those files. From 7 a slope broadcasts as numpy does, against the
  // last axis, yet onnx's converter passes PRelu through unchanged. So a 1-D slope of C > 1 values
  // on an input of rank r > 2 is unsqueezed to [C, 1, ..., 1] (r - 1 axes): per channel at 7 too.
  Status slope_per_channel(int i, onnx::NodeProto& node) {
    const std::vector<int64_t>* x = shapes_.find(node.input(0));
    const std::vector<int64_t>* slope = shapes_.find(node.input(1));
    if (!x || !slope) return unknown_ranks(i, node, "its slope applies per channel");
    if (x->size() <= 2 || slope->size() != 1 || (*slope)[0] == 1) return Status::ok();
    node.set_input(1, unsqueezed(node.input(1), 1, static_cast<int64_t>(x->size()) - 2));
    return Status::ok();
  }

  // Before opset 7, B with `broadcast` = 1 and `axis` lines up with A's axes from `axis` on. onnx's
  // converter pads B with rank(A) - rank(B) unit axes at its end, right only for axis 0; here B gets
  // rank(A) - axis - rank(B) of them, which numpy broadcasting then aligns as meant.
  Status broadcast_at_axis(int i, onnx::NodeProto& node) {
    const onnx::AttributeProto* axis_attr = nullptr;
    bool broadcast = false;
    for (const auto& a : node.attribute()) {
      if (a.name() == "axis") axis_attr = &a;
      if (a.name() == "broadcast") broadcast = a.i() != 0;
    }
    if (!broadcast || !axis_attr) return Status::ok();
    const std::vector<int64_t>* a = shapes_.find(node.input(0));
    const std::vector<int64_t>* b = shapes_.find(node.input(1));
    if (!a || !b) return unknown_ranks(i, node, "B broadcasts from attribute `axis`");
    const int64_t rank_a = static_cast<int64_t>(a->size()), rank_b = static_cast<int64_t>(b->size());
    const int64_t axis = axis_attr->i() < 0 ? axis_attr->i() + rank_a : axis_attr->i();
    const int64_t trailing = rank_a - axis - rank_b;
    if (axis < 0 || trailing < 0) {
      return Status(Code::kInvalidArgument, node_text(i, node) + ": axis " + std::to_string(axis_attr->i()) +
                                                " does not fit B of rank " + std::to_string(rank_b) + " into A of rank " +
                                                std::to_string(rank_a));
    }
    if (trailing > 0) node.set_input(1, unsqueezed(node.input(1), rank_b, trailing));
    auto* attrs = node.mutable_attribute();
    for (int k = attrs->size(); k-- > 0;) {
      if (attrs->Get(k).name() == "axis") attrs->DeleteSubrange(k, 1);
    }
    return Status::ok();
  }

  // `value` with `count` unit axes inserted from axis `first` on, by an Unsqueeze (opset-1 form)
  // placed before the node being rewritten.
  std::string unsqueezed(const std::string& value, int64_t first, int64_t count) {
    std::string name = value + "/unsqueezed";
    while (names_.count(name)) name += "_";
    names_.insert(name);
    onnx::NodeProto* unsqueeze = nodes_.Add();
    unsqueeze->set_op_type("Unsqueeze");
    unsqueeze->set_name(name);
    unsqueeze->add_input(value);
    unsqueeze->add_output(name);
    onnx::AttributeProto* axes = unsqueeze->add_attribute();
    axes->set_name("axes");
    axes->set_type(onnx::AttributeProto::INTS);
    for (int64_t k = 0; k < count; ++k) axes->add_ints(first + k);
    return name;
  }

  void infer_shapes() {
    try {
      onnx::shape_inference::InferShapes(model_);
    } catch (const std::exception&) {  // the shapes stay unknown; a node that needs one says so
    }
  }

  static Status unknown_ranks(int i, const onnx::NodeProto& node, const std::string& why) {
    return Status(Code::kUnsupportedOp, node_text(i, node) + ": before opset 7 " + why +
                                            "; converting it needs the ranks of its inputs, which ONNX's shape "
                                            "inference does not find (state them in the model's value_info)");
  }

  onnx::ModelProto& model_;
  onnx::GraphProto& g_;
  KnownShapes shapes_;
  std::unordered_set<std::string> names_;  // every value name, so that added ones are new
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes_;
};

}  // namespace

// ONNX's shape inference and converter assume what its checker checks of each node: ops and
// attributes as their schema says, and every input a value defined before the node (on a hostile
// model, a dangling name or a wrong attribute makes them read through null pointers). The
// checker's whole-model rules that they do not rely on (a graph's name, declared output types)
// are left out, so a hand-written old model still converts.
Status check_nodes_for_onnx_tools(const onnx::ModelProto& model, int64_t opset) {
  onnx::checker::CheckerContext context;
  context.set_ir_version(model.ir_version() > 0 ? static_cast<int>(model.ir_version()) : 3);
  std::unordered_map<std::string, int> imports;
  for (const auto& o : model.opset_import()) imports[o.domain()] = static_cast<int>(o.version());
  imports[""] = static_cast<int>(opset);
  context.set_opset_imports(imports);
  onnx::checker::LexicalScopeContext defined;
  for (const auto& v : model.graph().input()) defined.add(v.name());
  for (const auto& t : model.graph().initializer()) defined.add(t.name());
  for (int i = 0; i < model.graph().node_size(); ++i) {
    const onnx::NodeProto& node = model.graph().node(i);
    for (const std::string& input : node.input()) {
      if (!input.empty() && !defined.this_or_ancestor_graph_has(input)) {
        return Status(Code::kInvalidArgument, node_text(i, node) + " reads '" + input + "', which no graph input, "
                                                  "initializer or earlier node defines");
      }
    }
    try {
      onnx::checker::check_node(node, context, defined);
    } catch (const std::exception& e) {
      return Status(Code::kInvalidArgument, node_text(i, node) + " is not valid at opset " + std::to_string(opset) +
                                                ": " + e.what());
    }
    for (const std::string& output : node.output()) {
      if (!output.empty()) defined.add(output);
    }
  }
  return Status::ok();
}

Result<std::optional<onnx::ModelProto>> upgrade_to_opset(const onnx::ModelProto& model, int64_t opset, int64_t target) {
  const Status unchanged = check_unchanged_until(model.graph(), opset, target);
  if (unchanged.is_ok()) return std::optional<onnx::ModelProto>();
  // The converter assumes nodes valid at their own opset; an invalid one is named here instead.
  POCK_RETURN_IF_ERROR(check_node_schemas(model.graph(), opset));
  POCK_RETURN_IF_ERROR(check_nodes_for_onnx_tools(model, opset));
  onnx::ModelProto upgraded = model;
  POCK_RETURN_IF_ERROR(ConverterFixes(&upgraded).run());
  try {
    upgraded = onnx::version_conversion::ConvertVersion(upgraded, static_cast<int>(target));
  } catch (const std::exception& e) {
    const std::string oldest = std::to_string(target);
    return Status(Code::kUnsupportedOp, "the model uses ONNX opset " + std::to_string(opset) + ", below " + oldest +
                                            ", the oldest pock reads, and onnx's version converter cannot convert "
                                            "it: " + e.what() + " (re-export at opset " + oldest + " or newer)");
  }
  return std::optional<onnx::ModelProto>(std::move(upgraded));
}

}  // namespace pock::onnx_import
