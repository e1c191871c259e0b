#include "frontend/onnx/control_flow.hpp"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <vector>

#include "frontend/onnx/bound_inputs.hpp"
#include "frontend/onnx/node_schemas.hpp"
#include "frontend/onnx/opset_adapters.hpp"
#include "frontend/onnx/proto_reading.hpp"

namespace pock::onnx_import {
namespace {

using NameMap = std::unordered_map<std::string, std::string>;

bool is_control_flow(const onnx::NodeProto& n) {
  const bool onnx_domain = n.domain().empty() || n.domain() == "ai.onnx";
  return onnx_domain && (n.op_type() == "If" || n.op_type() == "Scan" || n.op_type() == "Loop");
}

const onnx::GraphProto* graph_attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name && a.type() == onnx::AttributeProto::GRAPH) return &a.g();
  }
  return nullptr;
}

std::string describe(const onnx::NodeProto& n) {
  return n.op_type() + " node '" + (n.name().empty() ? n.output_size() ? n.output(0) : "" : n.name()) + "'";
}

// Unrolls the control-flow nodes of one graph into a new one, node by node in order.
class Inliner {
 public:
  // `graph` holds everything but its nodes, which are in `nodes`; run() writes the nodes back.
  Inliner(onnx::GraphProto& graph, const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, int64_t opset,
          const OnnxImportOptions& options, std::string base_dir, std::string* input_to_bind)
      : out_(graph),
        nodes_(nodes),
        opset_(opset),
        options_(options),
        base_dir_(std::move(base_dir)),
        input_to_bind_(input_to_bind) {}

  Status run() {
    collect_known_values();
    for (const auto& n : nodes_) {
      if (!is_control_flow(n)) {
        *out_.add_node() = n;
        note_constant_node(n);
        continue;
      }
      node_ = &n;
      prefix_ = (n.name().empty() ? n.output(0) : n.name()) + "/";
      if (n.op_type() == "If") POCK_RETURN_IF_ERROR(inline_if(n));
      else if (n.op_type() == "Scan") POCK_RETURN_IF_ERROR(inline_scan(n));
      else POCK_RETURN_IF_ERROR(inline_loop(n));
    }
    return Status::ok();
  }

 private:
  Status error(const std::string& what) const { return Status(Code::kUnsupportedOp, describe(*node_) + ": " + what); }

  // --- what is known before import: constants and static shapes -------------------------------

  void collect_known_values() {
    for (const auto& t : out_.initializer()) {
      constants_[t.name()] = &t;
      shapes_[t.name()] = Shape(t.dims().begin(), t.dims().end());
    }
    auto add_static = [&](const onnx::ValueInfoProto& v) {
      if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
      Shape s;
      for (const auto& d : v.type().tensor_type().shape().dim()) {
        if (!d.has_dim_value() || d.dim_value() <= 0) return;
        s.push_back(d.dim_value());
      }
      shapes_[v.name()] = s;
    };
    for (const auto& v : out_.value_info()) add_static(v);
    for (const auto& v : out_.input()) add_static(v);
    for (const auto& [name, shape] : options_.input_shapes) shapes_[name] = shape;
  }

  void note_constant_node(const onnx::NodeProto& n) {
    if (n.op_type() != "Constant" || n.output_size() != 1) return;
    for (const auto& a : n.attribute()) {
      if (a.name() == "value" && a.type() == onnx::AttributeProto::TENSOR) {
        constants_[n.output(0)] = &a.t();
        shapes_[n.output(0)] = Shape(a.t().dims().begin(), a.t().dims().end());
      }
    }
  }

  // The one-element value of `name` when it is a constant or a bound graph input; nullopt otherwise
  // (and a graph input is then named as the one to bind).
  Result<std::optional<int64_t>> constant_scalar(const std::string& name) const {
    HostTensor t;
    auto it = constants_.find(name);
    if (it != constants_.end()) {
      POCK_ASSIGN_OR_RETURN(t, decode_host_tensor(*it->second, base_dir_));
    } else if (const onnx::ValueInfoProto* in = graph_input(name)) {
      auto bound = options_.bound_inputs.find(name);
      if (bound == options_.bound_inputs.end()) {
        *input_to_bind_ = name;
        return std::optional<int64_t>();
      }
      POCK_ASSIGN_OR_RETURN(t, bound_input_value(*in, bound->second, options_));
    } else {
      return std::optional<int64_t>();
    }
    if (t.size() != 1) return error("'" + name + "' must hold one value, it has shape " + shape_str(t.shape));
    return std::optional<int64_t>(t.as_int(0));
  }

  const onnx::ValueInfoProto* graph_input(const std::string& name) const {
    for (const auto& in : out_.input()) {
      if (in.name() == name) return &in;
    }
    return nullptr;
  }

  Result<Shape> static_shape(const std::string& name, const char* role) const {
    auto it = shapes_.find(name);
    if (it != shapes_.end()) return it->second;
    return error(std::string(role) + " '" + name + "' has no static shape in the file, and pock unrolls the loop " +
                 "over its length: run onnx.shape_inference.infer_shapes on the model first, or give the input's " +
                 "shape with --input-shape");
  }

  // --- emitting nodes ---------------------------------------------------------------------------

  std::string fresh(const std::string& what) { return prefix_ + what + "#" + std::to_string(counter_++); }

  onnx::NodeProto& add(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs) {
    onnx::NodeProto& n = *out_.add_node();
    n.set_op_type(op);
    n.set_name(outputs.empty() ? fresh(op) : outputs[0]);
    for (auto& i : inputs) n.add_input(std::move(i));
    for (auto& o : outputs) n.add_output(std::move(o));
    return n;
  }

  std::string add_ints(const std::vector<int64_t>& values, bool scalar, onnx::TensorProto::DataType type) {
    const std::string name = fresh("const");
    onnx::NodeProto& n = add("Constant", {}, {name});
    onnx::AttributeProto& a = *n.add_attribute();
    a.set_name("value");
    a.set_type(onnx::AttributeProto::TENSOR);
    onnx::TensorProto& t = *a.mutable_t();
    t.set_data_type(type);
    if (!scalar) t.add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) {
      if (type == onnx::TensorProto::INT64) t.add_int64_data(v);
      else t.add_int32_data(static_cast<int32_t>(v));
    }
    return name;
  }

  std::string add_with_axis(const std::string& op, std::vector<std::string> inputs, int64_t axis) {
    const std::string name = fresh(op);
    onnx::AttributeProto& a = *add(op, std::move(inputs), {name}).add_attribute();
    a.set_name("axis");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(axis);
    return name;
  }

  std::string take(const std::string& x, int64_t index, int64_t axis) {
    return add_with_axis("Gather", {x, add_ints({index}, true, onnx::TensorProto::INT64)}, axis);
  }

  // Stacks per-iteration values along a new `axis` (in the given order).
  std::string stack(const std::vector<std::string>& parts, int64_t axis, const std::string& name) {
    const std::string axes = add_ints({axis}, false, onnx::TensorProto::INT64);
    std::vector<std::string> expanded;
    for (const auto& p : parts) {
      expanded.push_back(fresh("unsqueeze"));
      add("Unsqueeze", {p, axes}, {expanded.back()});
    }
    onnx::NodeProto& concat = add("Concat", expanded, {name});
    onnx::AttributeProto& a = *concat.add_attribute();
    a.set_name("axis");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(axis);
    return name;
  }

  void alias(const std::string& from, const std::string& to) { add("Identity", {from}, {to}); }

  // --- bodies -----------------------------------------------------------------------------------

  Result<onnx::GraphProto> canonical_body(const char* attr) {
    const onnx::GraphProto* body = graph_attr(*node_, attr);
    if (!body) return error(std::string("has no '") + attr + "' graph");
    for (const auto& n : body->node()) {
      for (const auto& a : n.attribute()) {
        if (a.type() == onnx::AttributeProto::GRAPH || a.type() == onnx::AttributeProto::GRAPHS) {
          return error("its body holds control flow of its own (" + describe(n) + "); pock inlines one level");
        }
      }
    }
    POCK_RETURN_IF_ERROR(check_node_schemas(*body, opset_));
    return adapt_to_canonical(*body, opset_);
  }

  // Copies the body's nodes under `prefix`: a name the body defines gets the prefix, a body input
  // the name `bound` gives it, an outer-scope name stays. Returns the names of the body's outputs.
  std::vector<std::string> splice(const onnx::GraphProto& body, NameMap bound, const std::string& prefix) {
    for (const auto& t : body.initializer()) {
      const std::string name = prefix_ + "init/" + t.name();
      if (!hoisted_.count(name)) {
        hoisted_[name] = true;
        onnx::TensorProto& copy = *out_.add_initializer();
        copy = t;
        copy.set_name(name);
      }
      bound[t.name()] = name;
    }
    for (const auto& n : body.node()) {
      onnx::NodeProto& copy = *out_.add_node();
      copy = n;
      copy.set_name(prefix + (n.name().empty() ? n.output(0) : n.name()));
      for (int i = 0; i < copy.input_size(); ++i) {
        auto it = bound.find(copy.input(i));
        if (it != bound.end()) copy.set_input(i, it->second);
      }
      for (int i = 0; i < copy.output_size(); ++i) {
        if (copy.output(i).empty()) continue;
        const std::string renamed = prefix + copy.output(i);
        bound[copy.output(i)] = renamed;
        copy.set_output(i, renamed);
      }
      note_constant_node(copy);
    }
    std::vector<std::string> outputs;
    for (const auto& o : body.output()) {
      auto it = bound.find(o.name());
      outputs.push_back(it == bound.end() ? o.name() : it->second);
    }
    return outputs;
  }

  // --- If ---------------------------------------------------------------------------------------

  Status inline_if(const onnx::NodeProto& n) {
    POCK_ASSIGN_OR_RETURN(onnx::GraphProto then_body, canonical_body("then_branch"));
    POCK_ASSIGN_OR_RETURN(onnx::GraphProto else_body, canonical_body("else_branch"));
    const int outputs = n.output_size();
    if (then_body.output_size() != outputs || else_body.output_size() != outputs) {
      return error("its branches give " + std::to_string(then_body.output_size()) + " and " +
                   std::to_string(else_body.output_size()) + " outputs, the node has " + std::to_string(outputs));
    }
    POCK_ASSIGN_OR_RETURN(std::optional<int64_t> cond, constant_scalar(n.input(0)));
    input_to_bind_->clear();  // a run-time condition is fine here: both branches run
    if (cond) {
      const std::vector<std::string> chosen = splice(*cond ? then_body : else_body, {}, prefix_ + (*cond ? "then/" : "else/"));
      for (int k = 0; k < outputs; ++k) {
        if (!n.output(k).empty()) alias(chosen[k], n.output(k));
      }
      return Status::ok();
    }
    const std::vector<std::string> then_out = splice(then_body, {}, prefix_ + "then/");
    const std::vector<std::string> else_out = splice(else_body, {}, prefix_ + "else/");
    for (int k = 0; k < outputs; ++k) {
      if (!n.output(k).empty()) add(kBranchSelectOp, {n.input(0), then_out[k], else_out[k]}, {n.output(k)});
    }
    return Status::ok();
  }

  // --- Scan -------------------------------------------------------------------------------------

  struct ScanPlan {
    int64_t states = 0, scans = 0, length = 0;
    std::vector<int64_t> in_axes, in_reverse, out_axes, out_reverse;
  };

  Result<std::vector<int64_t>> ints_attr(const std::string& name, size_t count, int64_t fallback) const {
    NodeAttrs attrs(*node_, describe(*node_));
    POCK_ASSIGN_OR_RETURN(std::vector<int64_t> v, attrs.get_ints(name, std::vector<int64_t>(count, fallback)));
    if (v.size() != count) {
      return error("attribute '" + name + "' has " + std::to_string(v.size()) + " values, the node needs " +
                   std::to_string(count));
    }
    return v;
  }

  // Runs the body over `length` steps; `states` and `scans` name this run's inputs (a scan input's
  // step t is element t along its axis). Returns the final states then the stacked scan outputs.
  Result<std::vector<std::string>> unroll_scan(const onnx::GraphProto& body, const ScanPlan& plan,
                                               std::vector<std::string> states, const std::vector<std::string>& scans,
                                               const std::vector<std::string>& result_names, const std::string& prefix) {
    const int64_t outputs = body.output_size() - plan.states;
    std::vector<std::vector<std::string>> parts(static_cast<size_t>(outputs));
    for (int64_t t = 0; t < plan.length; ++t) {
      NameMap bound;
      for (int64_t k = 0; k < plan.states; ++k) bound[body.input(static_cast<int>(k)).name()] = states[k];
      for (int64_t j = 0; j < plan.scans; ++j) {
        const int64_t at = plan.in_reverse[j] ? plan.length - 1 - t : t;
        bound[body.input(static_cast<int>(plan.states + j)).name()] = take(scans[j], at, plan.in_axes[j]);
      }
      const std::vector<std::string> out = splice(body, bound, prefix + "iter" + std::to_string(t) + "/");
      for (int64_t k = 0; k < plan.states; ++k) states[k] = out[k];
      for (int64_t k = 0; k < outputs; ++k) parts[k].push_back(out[plan.states + k]);
    }
    std::vector<std::string> results;
    for (int64_t k = 0; k < plan.states; ++k) {
      results.push_back(result_names[k].empty() ? states[k] : result_names[k]);
      if (!result_names[k].empty()) alias(states[k], result_names[k]);
    }
    for (int64_t k = 0; k < outputs; ++k) {
      std::vector<std::string>& p = parts[k];
      if (plan.out_reverse[k]) std::reverse(p.begin(), p.end());
      const std::string& want = result_names[plan.states + k];
      results.push_back(stack(p, plan.out_axes[k], want.empty() ? fresh("scan_out") : want));
    }
    return results;
  }

  Status inline_scan(const onnx::NodeProto& n) {
    POCK_ASSIGN_OR_RETURN(onnx::GraphProto body, canonical_body("body"));
    NodeAttrs attrs(n, describe(n));
    POCK_ASSIGN_OR_RETURN(int64_t scans, attrs.get_int("num_scan_inputs", 0));
    const bool batched = opset_ < 9;  // Scan-8: a leading batch axis everywhere, the scan axis 1
    const int first = batched ? 1 : 0;  // Scan-8's input 0 is sequence_lens
    ScanPlan plan;
    plan.scans = scans;
    plan.states = n.input_size() - first - scans;
    if (scans < 1 || plan.states < 0 || body.input_size() != plan.states + scans ||
        body.output_size() < plan.states || n.output_size() != body.output_size()) {
      return error("num_scan_inputs " + std::to_string(scans) + " does not fit its " + std::to_string(n.input_size()) +
                   " inputs, " + std::to_string(n.output_size()) + " outputs and a body of " +
                   std::to_string(body.input_size()) + " inputs and " + std::to_string(body.output_size()) + " outputs");
    }
    if (batched && !n.input(0).empty()) {
      return error("sequence_lens (per-batch lengths) is not supported: pock unrolls every sequence to full length");
    }
    const size_t outs = static_cast<size_t>(body.output_size() - plan.states);
    POCK_ASSIGN_OR_RETURN(plan.in_axes, ints_attr("scan_input_axes", static_cast<size_t>(scans), 0));
    POCK_ASSIGN_OR_RETURN(plan.in_reverse, ints_attr(batched ? "directions" : "scan_input_directions",
                                                     static_cast<size_t>(scans), 0));
    POCK_ASSIGN_OR_RETURN(plan.out_axes, ints_attr("scan_output_axes", outs, 0));
    POCK_ASSIGN_OR_RETURN(plan.out_reverse, ints_attr("scan_output_directions", outs, 0));
    std::vector<std::string> states(n.input().begin() + first, n.input().begin() + first + plan.states);
    std::vector<std::string> scan_inputs(n.input().begin() + first + plan.states, n.input().end());
    for (size_t j = 0; j < scan_inputs.size(); ++j) {
      POCK_ASSIGN_OR_RETURN(Shape shape, static_shape(scan_inputs[j], "scan input"));
      const int64_t rank = static_cast<int64_t>(shape.size()) - (batched ? 1 : 0);
      int64_t& axis = plan.in_axes[j];
      if (axis < 0) axis += rank;
      if (axis < 0 || axis >= rank) return error("scan_input_axes " + std::to_string(axis) + " is out of range");
      const int64_t length = shape[static_cast<size_t>(axis + (batched ? 1 : 0))];
      if (j > 0 && length != plan.length) {
        return error("its scan inputs have lengths " + std::to_string(plan.length) + " and " + std::to_string(length));
      }
      plan.length = length;
    }
    for (size_t k = 0; k < outs; ++k) {
      if (plan.out_axes[k] < 0) return error("a negative scan_output_axes is not supported; give the axis from 0");
    }
    const std::vector<std::string> names(n.output().begin(), n.output().end());
    if (!batched) return unroll_scan(body, plan, states, scan_inputs, names, prefix_).status();

    // Scan-8: each batch element is its own run over its slices; the results are stacked on axis 0.
    POCK_ASSIGN_OR_RETURN(Shape first_shape, static_shape(scan_inputs[0], "scan input"));
    const int64_t batch = first_shape[0];
    std::vector<std::vector<std::string>> per_batch(names.size());
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<std::string> s, x;
      for (const auto& name : states) s.push_back(take(name, b, 0));
      for (const auto& name : scan_inputs) x.push_back(take(name, b, 0));
      const std::vector<std::string> unnamed(names.size());
      POCK_ASSIGN_OR_RETURN(std::vector<std::string> r,
                            unroll_scan(body, plan, s, x, unnamed, prefix_ + "batch" + std::to_string(b) + "/"));
      for (size_t k = 0; k < names.size(); ++k) per_batch[k].push_back(r[k]);
    }
    for (size_t k = 0; k < names.size(); ++k) {
      if (!names[k].empty()) stack(per_batch[k], 0, names[k]);
    }
    return Status::ok();
  }

  // --- Loop -------------------------------------------------------------------------------------

  // True when the body's cond_out is its cond_in passed through, or a constant true.
  bool keeps_going(const onnx::GraphProto& body) const {
    std::string name = body.output(0).name();
    const std::string& cond_in = body.input(1).name();
    for (int hops = 0; hops <= body.node_size(); ++hops) {
      if (name == cond_in) return true;
      const onnx::NodeProto* producer = nullptr;
      for (const auto& node : body.node()) {
        for (const auto& o : node.output()) {
          if (o == name) producer = &node;
        }
      }
      if (!producer) return false;
      if (producer->op_type() == "Identity") {
        name = producer->input(0);
        continue;
      }
      if (producer->op_type() != "Constant") return false;
      for (const auto& a : producer->attribute()) {
        if (a.name() == "value" && a.type() == onnx::AttributeProto::TENSOR) {
          auto t = decode_host_tensor(a.t(), base_dir_);
          return t.is_ok() && t->size() == 1 && t->as_int(0) != 0;
        }
      }
      return false;
    }
    return false;
  }

  Status inline_loop(const onnx::NodeProto& n) {
    POCK_ASSIGN_OR_RETURN(onnx::GraphProto body, canonical_body("body"));
    const int carried = n.input_size() - 2;
    if (carried < 0 || body.input_size() != carried + 2 || body.output_size() < carried + 1 ||
        n.output_size() != body.output_size() - 1) {
      return error("its inputs, outputs and body do not match (" + std::to_string(n.input_size()) + " inputs, " +
                   std::to_string(n.output_size()) + " outputs, body " + std::to_string(body.input_size()) + " -> " +
                   std::to_string(body.output_size()) + ")");
    }
    if (n.input(0).empty()) return error("it has no trip count: pock unrolls loops of a known number of iterations");
    POCK_ASSIGN_OR_RETURN(std::optional<int64_t> trips, constant_scalar(n.input(0)));
    if (!trips) {
      return error("its trip count '" + n.input(0) + "' is computed at run time; pock unrolls loops of a trip count " +
                   "known at compile time (a constant, or a graph input bound to a value)");
    }
    if (*trips < 1 || *trips > 4096) {
      return error("trip count " + std::to_string(*trips) + ": pock unrolls 1 to 4096 iterations");
    }
    if (!n.input(1).empty()) {
      POCK_ASSIGN_OR_RETURN(std::optional<int64_t> cond, constant_scalar(n.input(1)));
      if (!cond) {
        return error("its condition '" + n.input(1) + "' is computed at run time; pock unrolls loops whose condition " +
                     "is a constant true");
      }
      if (!*cond) return error("its condition is false, so it runs no iteration; remove the loop");
    }
    if (!keeps_going(body)) {
      return error("its body computes whether to stop (cond_out); pock unrolls loops that run every iteration");
    }
    const std::string truth = fresh("true");
    {
      onnx::NodeProto& c = add("Constant", {}, {truth});
      onnx::AttributeProto& a = *c.add_attribute();
      a.set_name("value");
      a.set_type(onnx::AttributeProto::TENSOR);
      a.mutable_t()->set_data_type(onnx::TensorProto::BOOL);
      a.mutable_t()->add_int32_data(1);
    }
    std::vector<std::string> state(n.input().begin() + 2, n.input().end());
    const int scans = body.output_size() - 1 - carried;
    std::vector<std::vector<std::string>> parts(static_cast<size_t>(scans));
    for (int64_t t = 0; t < *trips; ++t) {
      NameMap bound;
      bound[body.input(0).name()] = add_ints({t}, true, onnx::TensorProto::INT64);
      bound[body.input(1).name()] = truth;
      for (int k = 0; k < carried; ++k) bound[body.input(k + 2).name()] = state[static_cast<size_t>(k)];
      const std::vector<std::string> out = splice(body, bound, prefix_ + "iter" + std::to_string(t) + "/");
      for (int k = 0; k < carried; ++k) state[static_cast<size_t>(k)] = out[static_cast<size_t>(k + 1)];
      for (int k = 0; k < scans; ++k) parts[static_cast<size_t>(k)].push_back(out[static_cast<size_t>(1 + carried + k)]);
    }
    for (int k = 0; k < carried; ++k) {
      if (!n.output(k).empty()) alias(state[static_cast<size_t>(k)], n.output(k));
    }
    for (int k = 0; k < scans; ++k) {
      if (!n.output(carried + k).empty()) stack(parts[static_cast<size_t>(k)], 0, n.output(carried + k));
    }
    return Status::ok();
  }

  onnx::GraphProto& out_;
  const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes_;
  const int64_t opset_;
  const OnnxImportOptions& options_;
  const std::string base_dir_;
  std::string* input_to_bind_;
  std::unordered_map<std::string, const onnx::TensorProto*> constants_;
  std::unordered_map<std::string, Shape> shapes_;
  std::unordered_map<std::string, bool> hoisted_;
  const onnx::NodeProto* node_ = nullptr;
  std::string prefix_;
  int64_t counter_ = 0;
};

}  // namespace

Status inline_control_flow(onnx::GraphProto* graph, int64_t opset, const OnnxImportOptions& options,
                           const std::string& base_dir, std::string* input_to_bind) {
  bool any = false;
  for (const auto& n : graph->node()) any = any || is_control_flow(n);
  if (!any) return Status::ok();
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  nodes.Swap(graph->mutable_node());
  return Inliner(*graph, nodes, opset, options, base_dir, input_to_bind).run();
}

}  // namespace pock::onnx_import
