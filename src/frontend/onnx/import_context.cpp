#include "frontend/onnx/import_context.hpp"

#include <cmath>

namespace pock::onnx_import {
namespace {

std::string describe(const onnx::NodeProto& n, int index) {
  const std::string op = n.domain().empty() || n.domain() == "ai.onnx" ? n.op_type() : n.domain() + "::" + n.op_type();
  if (!n.name().empty()) return op + " node '" + n.name() + "'";
  return op + " node #" + std::to_string(index) + (n.output_size() ? " (output '" + n.output(0) + "')" : "");
}

}  // namespace

std::string converter_key(const onnx::NodeProto& node) {
  if (node.domain().empty() || node.domain() == "ai.onnx") return node.op_type();
  return node.domain() + "::" + node.op_type();
}

const Converter* find_converter(const std::string& op) {
  static const auto table = [] {
    std::unordered_map<std::string, Converter> t;
    register_math_converters(t);
    register_nn_converters(t);
    register_shape_converters(t);
    register_loss_converters(t);
    register_activation_converters(t);
    register_instance_norm_converters(t);
    register_tile_converters(t);
    register_conv_transpose_converters(t);
    register_depth_space_converters(t);
    register_gather_scatter_converters(t);
    register_resize_converters(t);
    register_eye_like_converters(t);
    register_tfidf_converters(t);
    register_control_flow_converters(t);
    register_math_unary_converters(t);
    register_logic_converters(t);
    register_cumsum_converters(t);
    register_einsum_converters(t);
    register_indexing_converters(t);
    register_grid_sample_converters(t);
    register_lrn_converters(t);
    register_mvn_converters(t);
    register_determinant_converters(t);
    register_dft_converters(t);
    register_compress_converters(t);
    register_max_unpool_converters(t);
    register_data_dependent_converters(t);
    register_roi_align_converters(t);
    register_recurrent_converters(t);
    register_preview_training_converters(t);
    register_quantize_converters(t);
    register_quantize_conv_converters(t);
    return t;
  }();
  auto it = table.find(op);
  return it == table.end() ? nullptr : &it->second;
}

const Folder* find_folder(const std::string& op) {
  static const auto table = [] {
    std::unordered_map<std::string, Folder> t;
    register_folders(t);
    return t;
  }();
  auto it = table.find(op);
  return it == table.end() ? nullptr : &it->second;
}

const Pattern* find_pattern(const std::string& op) {
  static const auto table = [] {
    std::unordered_map<std::string, Pattern> t;
    register_patterns(t);
    return t;
  }();
  auto it = table.find(op);
  return it == table.end() ? nullptr : &it->second;
}

// --- NodeView --------------------------------------------------------------------------------

NodeView::NodeView(ImportContext& ctx, int index)
    : ctx_(ctx),
      index_(index),
      proto_(&ctx.proto.node(index)),
      where_(describe(*proto_, index)),
      attrs_(*proto_, where_) {}

bool NodeView::output_used(int i) const {
  if (!has_output(i)) return false;
  return !ctx_.consumers(proto_->output(i)).empty() || ctx_.is_graph_output(proto_->output(i));
}

const std::string& NodeView::input_name(int i) const {
  static const std::string none;
  return i >= 0 && i < proto_->input_size() ? proto_->input(i) : none;
}

const Value& NodeView::value(int i) const {
  static const Value none;
  const Value* v = has_input(i) ? ctx_.find(proto_->input(i)) : nullptr;
  return v ? *v : none;
}

Result<TensorId> NodeView::input(int i) {
  if (!has_input(i)) return input_error(i, "is required");
  auto id = ctx_.materialize(proto_->input(i));
  if (!id.is_ok()) return Status(id.status().code(), where_ + ": input " + std::to_string(i) + ": " + id.status().message());
  return id;
}

Result<TensorId> NodeView::input_as_state(int i) {
  if (!has_input(i)) return input_error(i, "is required");
  auto id = ctx_.materialize(proto_->input(i), TensorKind::kState);
  if (!id.is_ok()) return Status(id.status().code(), where_ + ": input " + std::to_string(i) + ": " + id.status().message());
  return id;
}

namespace {

// Marks the float initializer `name` comes from as a weight, through the layout ops exporters put
// between a parameter and its use (PyTorch unsqueezes nn.PReLU()'s [1] slope to [1, 1, 1]); the
// values folded on the way become weight-derived, so they are re-emitted as ops on the parameter.
bool mark_weight_source(ImportContext& ctx, const std::string& name, int depth) {
  Value* v = ctx.find(name);
  if (!v || v->id != kNoTensor || !is_float(v->dtype)) return false;
  if (v->initializer) {
    v->is_weight = true;
    return true;
  }
  if (v->producer < 0 || depth == 0) return false;
  const onnx::NodeProto& p = ctx.proto.node(v->producer);
  static const char* const kLayout[] = {"Unsqueeze", "Reshape", "Squeeze", "Identity", "Flatten", "Expand"};
  bool layout = false;
  for (const char* op : kLayout) layout = layout || p.op_type() == op;
  if (!layout || p.input_size() == 0 || !mark_weight_source(ctx, p.input(0), depth - 1)) return false;
  v = ctx.find(name);
  v->weight_derived = true;
  return true;
}

}  // namespace

Result<TensorId> NodeView::input_as_weight(int i) {
  if (has_input(i)) mark_weight_source(ctx_, proto_->input(i), 4);
  return input(i);
}

bool NodeView::input_is_constant(int i) const {
  if (!has_input(i)) return false;
  const Value& v = value(i);
  return v.constant.has_value() || v.initializer != nullptr;
}

Result<const HostTensor*> NodeView::const_input(int i, const char* what) {
  if (!has_input(i)) return input_error(i, std::string("(") + what + ") is required");
  if (!input_is_constant(i)) {
    const std::string operand = where_ + ": input " + std::to_string(i) + " ('" + proto_->input(i) + "', " + what + ")";
    return ctx_.needs_constant(operand, proto_->input(i), what);
  }
  return ctx_.constant_of(proto_->input(i));
}

Result<std::vector<int64_t>> NodeView::const_ints(int i, const char* what) {
  POCK_ASSIGN_OR_RETURN(const HostTensor* t, const_input(i, what));
  if (t->is_float()) return input_error(i, std::string("(") + what + ") must hold integers");
  return t->ints();
}

Result<double> NodeView::const_scalar(int i, const char* what) {
  POCK_ASSIGN_OR_RETURN(const HostTensor* t, const_input(i, what));
  if (t->size() != 1) return input_error(i, std::string("(") + what + ") must be a scalar, got shape " + shape_str(t->shape));
  return t->as_double(0);
}

std::optional<double> NodeView::scalar_input(int i) const {
  if (!input_is_constant(i)) return std::nullopt;
  const Value& v = value(i);
  if (numel(v.shape) != 1) return std::nullopt;
  auto t = ctx_.constant_of(proto_->input(i));
  if (!t.is_ok()) return std::nullopt;
  return t.value()->as_double(0);
}

Result<std::vector<TensorId>> NodeView::emit(const std::string& op, std::vector<TensorId> inputs, Attrs attrs,
                                             const std::string& suffix) {
  const std::string base = proto_->name().empty() ? proto_->op_type() + "_" + std::to_string(index_) : proto_->name();
  auto out = ctx_.graph.add_node(op, std::move(inputs), std::move(attrs), suffix.empty() ? base : base + "/" + suffix);
  if (!out.is_ok()) return Status(out.status().code(), where_ + ": " + out.status().message());
  return out;
}

Status NodeView::emit_final(const std::string& op, std::vector<TensorId> inputs, Attrs attrs) {
  const std::string base = proto_->name().empty() ? proto_->op_type() + "_" + std::to_string(index_) : proto_->name();
  std::vector<std::string> names;
  for (const auto& o : proto_->output()) names.push_back(o);
  auto out = ctx_.graph.add_node(op, std::move(inputs), std::move(attrs), base, names);
  if (!out.is_ok()) return Status(out.status().code(), where_ + ": " + out.status().message());
  const int n = std::min<int>(num_outputs(), static_cast<int>(out->size()));
  for (int i = 0; i < n; ++i) {
    if (has_output(i)) POCK_RETURN_IF_ERROR(bind_output(i, out.value()[i]));
  }
  return Status::ok();
}

Status NodeView::bind_output(int i, TensorId id) {
  if (!has_output(i)) return Status::ok();
  Value& v = ctx_.define(proto_->output(i));
  v.id = id;
  v.dtype = ctx_.graph.tensor(id).dtype;
  v.shape = ctx_.graph.tensor(id).shape;
  return Status::ok();
}

void NodeView::bind_constant(int i, HostTensor t) {
  if (!has_output(i)) return;
  Value& v = ctx_.define(proto_->output(i));
  v.dtype = t.dtype;
  v.shape = t.shape;
  v.constant = std::move(t);
  v.producer = index_;
}

Status NodeView::error(const std::string& what) const { return Status(Code::kInvalidArgument, where_ + ": " + what); }
Status NodeView::unsupported(const std::string& what) const { return Status(Code::kUnsupportedOp, where_ + ": " + what); }
Status NodeView::input_error(int i, const std::string& what) const {
  const std::string name = i < proto_->input_size() && !proto_->input(i).empty() ? " ('" + proto_->input(i) + "')" : "";
  return Status(Code::kInvalidArgument, where_ + ": input " + std::to_string(i) + name + " " + what);
}

// --- ImportContext ---------------------------------------------------------------------------

ImportContext::ImportContext(const onnx::GraphProto& g, const OnnxImportOptions& opts, std::string dir)
    : proto(g), options(opts), base_dir(std::move(dir)) {
  handled_.assign(static_cast<size_t>(g.node_size()), false);
  emitting_.assign(static_cast<size_t>(g.node_size()), false);
  for (int i = 0; i < g.node_size(); ++i) {
    for (const auto& in : g.node(i).input()) {
      if (!in.empty()) consumers_[in].push_back(i);
    }
    for (const auto& out : g.node(i).output()) {
      if (!out.empty()) producers_.emplace(out, i);
    }
  }
  for (const auto& o : g.output()) graph_outputs_[o.name()] = true;
}

Value* ImportContext::find(const std::string& name) {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

Value& ImportContext::define(const std::string& name) { return values_[name]; }

const std::vector<int>& ImportContext::consumers(const std::string& name) const {
  static const std::vector<int> none;
  auto it = consumers_.find(name);
  return it == consumers_.end() ? none : it->second;
}

int ImportContext::producer_of(const std::string& name) const {
  auto it = producers_.find(name);
  return it == producers_.end() ? -1 : it->second;
}

bool ImportContext::is_graph_output(const std::string& name) const { return graph_outputs_.count(name) > 0; }

bool ImportContext::is_graph_input(const std::string& name) const {
  auto it = values_.find(name);
  return it != values_.end() && it->second.graph_input;
}

std::vector<std::string> ImportContext::graph_inputs_feeding(const std::string& name) const {
  std::vector<std::string> found, pending{name};
  std::unordered_map<std::string, bool> seen;
  while (!pending.empty()) {
    const std::string n = pending.back();
    pending.pop_back();
    if (seen[n]) continue;
    seen[n] = true;
    auto v = values_.find(n);
    if (v != values_.end() && (v->second.constant || v->second.initializer)) continue;
    if (is_graph_input(n)) {
      found.push_back(n);
      continue;
    }
    const int p = producer_of(n);
    if (p < 0) continue;
    for (const auto& in : proto.node(p).input()) {
      if (!in.empty()) pending.push_back(in);
    }
  }
  // In the file's order, so that the advice is stable.
  std::vector<std::string> ordered;
  for (const auto& in : proto.input()) {
    for (const auto& f : found) {
      if (f == in.name()) ordered.push_back(f);
    }
  }
  return ordered;
}

Status ImportContext::needs_constant(const std::string& operand, const std::string& value_name, const std::string& what) {
  const std::vector<std::string> sources = graph_inputs_feeding(value_name);
  if (sources.empty()) {
    return Status(Code::kInvalidArgument,
                  operand + " is computed at run time, but pock needs it at compile time: the model has a dynamic "
                            "shape. Export with static shapes, or give every symbolic input dimension with "
                            "--input-shape NAME=d0,d1,...");
  }
  // A graph input is set by the caller at every run; binding it to the value the app always
  // feeds makes it a constant, which is what pock compiles.
  input_to_bind = sources[0];
  const std::string how = "bind the input to the value it always takes with --bind " + input_to_bind +
                          "=v0,v1,... (or --bind " + input_to_bind + "=@values.npy), or make it an initializer or a "
                          "Constant node";
  std::string from;
  for (const auto& s : sources) from += (from.empty() ? "'" : ", '") + s + "'";
  needs_constant_message =
      sources[0] == value_name
          ? operand + " is a graph input, so its value is known only at run time; pock needs the " + what +
                " operand at compile time: " + how
          : operand + " is computed at run time from graph input " + from + ", but pock needs the " + what +
                " operand at compile time: " + how;
  return Status(Code::kInvalidArgument, needs_constant_message);
}

Result<const HostTensor*> ImportContext::constant_of(const std::string& name) {
  Value* v = find(name);
  if (!v) return Status(Code::kInternal, "value '" + name + "' is not defined");
  if (!v->constant && v->initializer) {
    POCK_ASSIGN_OR_RETURN(HostTensor t, decode_host_tensor(*v->initializer, base_dir));
    v->constant = std::move(t);
  }
  if (!v->constant) return Status(Code::kInvalidArgument, "value '" + name + "' is not known at compile time");
  return &*v->constant;
}

Result<TensorId> ImportContext::materialize(const std::string& name, TensorKind kind) {
  Value* v = find(name);
  if (!v) return Status(Code::kInternal, "value '" + name + "' is not defined");
  if (v->id != kNoTensor) {
    // Running statistics are updated in place by their BatchNorm: an initializer that is also
    // a weight, or the statistics of a second BatchNorm, would be overwritten. tf2onnx's
    // merge_duplication optimizer writes such files when weights are equal (fresh gamma = 1 and
    // running variance = 1).
    const bool was_state = graph.tensor(v->id).kind == TensorKind::kState;
    if (v->initializer && v->is_weight && (kind == TensorKind::kState || was_state)) {
      return Status(Code::kInvalidArgument,
                    "initializer '" + name + "' is read as BatchNormalization running statistics " +
                        (kind == TensorKind::kState && was_state ? "twice" : "and as a weight") +
                        ": pock updates running statistics in place, so they cannot share a tensor. The "
                        "exporter merged equal initializers (tf2onnx: export without its merge_duplication "
                        "optimizer, docs/exporting.md)");
    }
    return v->id;
  }
  if (!v->unusable_reason.empty()) {
    // A 0 in the file may be a size the exporter did not know; if the input really has no
    // elements, its one possible value can be bound, and what it feeds has no elements either.
    input_to_bind = name;
    needs_constant_message = v->unusable_reason + "; if it really has no elements, bind it to that value: --bind " +
                             name + "=@empty.npy (or --bind " + name + "= for a 1-D input)";
    return Status(Code::kUnsupportedOp, needs_constant_message);
  }
  if (v->initializer && v->is_weight) {
    POCK_ASSIGN_OR_RETURN(DecodedTensor d, decode_tensor(*v->initializer, base_dir));
    TensorDesc desc;
    desc.name = name;
    desc.dtype = d.dtype;
    desc.shape = d.shape;
    desc.kind = kind;
    desc.data = std::make_shared<const std::vector<uint8_t>>(std::move(d.bytes));
    v = find(name);  // graph growth never invalidates values_, but keep the lookup explicit
    v->id = graph.add_tensor(std::move(desc));
    return v->id;
  }
  const int producer = v->producer;
  if (v->weight_derived && producer >= 0 && !emitting_[producer]) {
    emitting_[producer] = true;
    const Status emitted = run_converter(producer);
    emitting_[producer] = false;
    v = find(name);
    if (emitted.is_ok() && v->id != kNoTensor) return v->id;
    // Not expressible as pock ops: bake the folded value (it was a buffer, not a weight).
  }
  POCK_ASSIGN_OR_RETURN(const HostTensor* t, constant_of(name));
  v = find(name);
  v->id = graph.add_constant(name, t->dtype, t->shape, t->to_bytes());
  return v->id;
}

namespace {

// Folded ops whose every input decides the output's shape (ConstantOfShape's shape, Range's
// start, limit and delta): pock compiles static shapes, so those inputs are operands to bind.
bool sizes_output(const std::string& op) { return op == "ConstantOfShape" || op == "Range"; }

Status no_mapping(NodeView& node) {
  return node.unsupported("pock has no mapping for ONNX op '" + node.op() + "' (docs/onnx.md lists the supported ops)");
}

}  // namespace

// An output with no elements needs no kernel to compute it: it becomes the empty constant of its
// shape, and the node that would have written it is dropped unless another output needs it.
void ImportContext::bind_empty_outputs(int index) {
  for (const auto& name : proto.node(index).output()) {
    Value* v = name.empty() ? nullptr : find(name);
    if (!v || v->constant || v->id == kNoTensor || numel(v->shape) != 0) continue;
    // The dropped tensor gives up the ONNX name, which the constant takes if it is an output.
    if (graph.tensor(v->id).name == name) (void)graph.rename_tensor(v->id, graph.unique_name(name + "/empty"));
    v->constant = HostTensor::zeros(v->dtype, v->shape);
    v->id = kNoTensor;
    v->producer = index;
  }
}

Status ImportContext::run_converter(int index) {
  NodeView node(*this, index);
  const Converter* convert = find_converter(converter_key(node.proto()));
  if (!convert && find_folder(node.op())) {
    for (int i = 0; i < node.num_inputs(); ++i) {
      if (node.has_input(i) && !node.input_is_constant(i) && sizes_output(node.op())) {
        const std::string operand = node.where() + ": input " + std::to_string(i) + " ('" + node.input_name(i) + "')";
        return needs_constant(operand, node.input_name(i), "output-size");
      }
      // An op pock only folds has no kernel to take the operand at run time: a graph input
      // feeding it is one the user binds, as for a size.
      if (node.has_input(i) && !node.input_is_constant(i) && !graph_inputs_feeding(node.input_name(i)).empty()) {
        const std::string operand = node.where() + ": input " + std::to_string(i) + " ('" + node.input_name(i) + "')";
        return needs_constant(operand, node.input_name(i), node.op());
      }
      if (node.has_input(i) && !node.input_is_constant(i)) {
        return node.unsupported("pock has no op for ONNX '" + node.op() +
                                "': it is folded when its inputs are known at compile time, but input " +
                                std::to_string(i) + " ('" + node.input_name(i) + "') is computed at run time");
      }
    }
  }
  if (!convert) return no_mapping(node);
  POCK_RETURN_IF_ERROR((*convert)(node));
  for (int i = 0; i < node.num_outputs(); ++i) {
    if (!node.output_used(i)) continue;
    const Value* v = find(node.proto().output(i));
    if (!v || (v->id == kNoTensor && !v->constant)) {
      return node.unsupported("output " + std::to_string(i) + " ('" + node.proto().output(i) +
                              "') is read by the model, but pock does not produce it");
    }
  }
  return Status::ok();
}

Status ImportContext::process(int index) {
  if (handled_[index]) return Status::ok();
  NodeView node(*this, index);
  const auto& p = node.proto();
  if (!p.domain().empty() && p.domain() != "ai.onnx" && p.domain() != kPreviewTrainingDomain) {
    return node.unsupported("operator domain '" + p.domain() + "' is not supported (only the default ONNX domain and " +
                            kPreviewTrainingDomain + ")");
  }
  // RNN, GRU and LSTM may leave output 0 unnamed when only the final state is read; converters
  // bind only the outputs that are named.
  bool any_output = false;
  for (const auto& o : p.output()) any_output = any_output || !o.empty();
  if (!any_output) return node.error("has no output");
  bool all_constant = true;
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (!node.has_input(i)) continue;
    if (!find(p.input(i))) {
      return node.input_error(i, "is not produced by any earlier node, initializer or graph input (the file is "
                                 "malformed or not topologically sorted)");
    }
    all_constant = all_constant && node.input_is_constant(i);
  }
  const Pattern* pattern = all_constant ? nullptr : find_pattern(node.op());
  if (pattern) {
    POCK_ASSIGN_OR_RETURN(bool matched, (*pattern)(node));
    if (matched) {
      handled_[index] = true;
      return Status::ok();
    }
  }
  const Folder* fold = find_folder(node.op());
  if (fold && all_constant) {
    std::vector<const HostTensor*> inputs;
    bool from_weight = false;
    for (int i = 0; i < node.num_inputs(); ++i) {
      if (!node.has_input(i)) {
        inputs.push_back(nullptr);
        continue;
      }
      POCK_ASSIGN_OR_RETURN(const HostTensor* t, constant_of(p.input(i)));
      inputs.push_back(t);
      const Value* v = find(p.input(i));
      from_weight = from_weight || v->is_weight || v->weight_derived;
    }
    std::vector<HostTensor> outputs;
    bool folded = false;
    POCK_RETURN_IF_ERROR((*fold)(node, inputs, &outputs, &folded));
    if (folded) {
      for (size_t k = 0; k < outputs.size() && static_cast<int>(k) < node.num_outputs(); ++k) {
        if (!node.has_output(static_cast<int>(k))) continue;
        Value& out = define(p.output(static_cast<int>(k)));
        out.dtype = outputs[k].dtype;
        out.shape = outputs[k].shape;
        out.constant = std::move(outputs[k]);
        out.producer = index;
        out.weight_derived = from_weight;
      }
      return Status::ok();
    }
  }
  POCK_RETURN_IF_ERROR(run_converter(index));
  bind_empty_outputs(index);
  return Status::ok();
}

}  // namespace pock::onnx_import
