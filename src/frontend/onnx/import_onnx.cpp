// import_onnx: reads the ModelProto, declares initializers and inputs, runs every node through
// ImportContext::process (pattern, fold, or convert), marks the outputs and drops dead nodes.
#include <algorithm>
#include <charconv>
#include <climits>
#include <filesystem>
#include <fstream>
#include <optional>

#include <google/protobuf/io/coded_stream.h>

#include "frontend/onnx/bound_inputs.hpp"
#include "frontend/onnx/control_flow.hpp"
#include "frontend/onnx/import_context.hpp"
#include "frontend/onnx/legacy_opsets.hpp"
#include "frontend/onnx/node_schemas.hpp"
#include "frontend/onnx/opset_adapters.hpp"
#include "pock/compiler/onnx.hpp"

namespace pock {
namespace {

using onnx_import::ImportContext;
using onnx_import::kMaxOpset;
using onnx_import::kMinOpset;
using onnx_import::Value;

// The default-domain opset the model declares (checked by check_opsets first).
int64_t default_opset(const onnx::ModelProto& model) {
  for (const auto& o : model.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  }
  return 0;
}

Status check_opsets(const onnx::ModelProto& model) {
  bool found = false;
  for (const auto& o : model.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") {
      found = true;
      if (o.version() < 1 || o.version() > kMaxOpset) {
        return Status(Code::kUnsupportedOp, "the model uses ONNX opset " + std::to_string(o.version()) +
                                                "; pock imports opsets " + std::to_string(kMinOpset) + " to " +
                                                std::to_string(kMaxOpset) +
                                                " (re-export at one of them, or convert with "
                                                "onnx.version_converter)");
      }
    }
  }
  // A model of training-domain ops alone (ONNX's optimizer tests) declares only that domain.
  for (const auto& o : model.opset_import()) found = found || o.domain() == onnx_import::kPreviewTrainingDomain;
  if (!found) return Status(Code::kInvalidArgument, "the model declares no default-domain opset (opset_import)");
  return Status::ok();
}

Status declare_initializers(ImportContext& ctx) {
  const auto& g = ctx.proto;
  if (g.sparse_initializer_size() > 0) {
    return Status(Code::kUnsupportedOp, "sparse initializer '" + g.sparse_initializer(0).values().name() +
                                            "' is not supported: densify it before import");
  }
  for (const auto& t : g.initializer()) {
    if (t.name().empty()) return Status(Code::kInvalidArgument, "an initializer has no name");
    if (ctx.find(t.name())) return Status(Code::kInvalidArgument, "initializer '" + t.name() + "' is defined twice");
    auto dt = onnx_import::dtype_from_onnx(t.data_type());
    if (!dt.is_ok()) return Status(dt.status().code(), "initializer '" + t.name() + "': " + dt.status().message());
    Value& v = ctx.define(t.name());
    v.dtype = dt.value();
    v.shape.assign(t.dims().begin(), t.dims().end());
    POCK_RETURN_IF_ERROR(onnx_import::check_dims(v.shape, "initializer '" + t.name() + "'"));
    v.initializer = &t;
    // Scalars are constants that exporters (tf2onnx) store as initializers, not weights.
    v.is_weight = is_float(v.dtype) && numel(v.shape) > 1;
  }
  return Status::ok();
}

std::string shape_hint(const std::string& name, const Shape& partial) {
  std::string hint = "--input-shape " + name + "=";
  for (size_t i = 0; i < partial.size(); ++i) {
    if (i) hint += ',';
    hint += partial[i] > 0 ? std::to_string(partial[i]) : std::string("N");
  }
  return hint;
}

// A static 0 is a size, not a missing one: say so, rather than ask for a size the model fixes.
Status zero_size_error(const std::string& name, int d, const std::string& where, const std::string& fix) {
  return Status(Code::kUnsupportedOp, "input '" + name + "' dimension " + std::to_string(d) + " is 0 " + where +
                                          " (a zero-size dimension, so the input has no elements): pock compiles "
                                          "only tensors with at least one element; " + fix);
}

Result<Shape> resolve_input_shape(const onnx::ValueInfoProto& in, const OnnxImportOptions& options) {
  const std::string& name = in.name();
  const auto& type = in.type().tensor_type();
  auto given = options.input_shapes.find(name);
  if (given != options.input_shapes.end()) {
    const Shape& s = given->second;
    if (type.has_shape() && type.shape().dim_size() != static_cast<int>(s.size())) {
      return Status(Code::kShapeMismatch, "input '" + name + "' has rank " + std::to_string(type.shape().dim_size()) +
                                              " in the model, but --input-shape gives " + shape_str(s));
    }
    for (size_t d = 0; d < s.size(); ++d) {
      if (s[d] == 0) return zero_size_error(name, static_cast<int>(d), "in --input-shape", "give a size of 1 or more");
    }
    for (int d = 0; type.has_shape() && d < type.shape().dim_size(); ++d) {
      const auto& dim = type.shape().dim(d);
      if (dim.has_dim_value() && dim.dim_value() > 0 && dim.dim_value() != s[d]) {
        return Status(Code::kShapeMismatch, "input '" + name + "' dimension " + std::to_string(d) + " is fixed to " +
                                                std::to_string(dim.dim_value()) + " in the model, but --input-shape gives " +
                                                shape_str(s));
      }
    }
    return s;
  }
  if (!type.has_shape()) {
    return Status(Code::kInvalidArgument, "input '" + name + "' has no shape in the model: give it with --input-shape " +
                                              name + "=d0,d1,...");
  }
  Shape partial(static_cast<size_t>(type.shape().dim_size()), -1);
  for (int d = 0; d < type.shape().dim_size(); ++d) {
    const auto& dim = type.shape().dim(d);
    if (d == 0 && options.batch_size > 0) partial[d] = options.batch_size;
    else if (dim.has_dim_value()) partial[d] = dim.dim_value();
    else if (dim.has_dim_param() && options.dim_values.count(dim.dim_param())) partial[d] = options.dim_values.at(dim.dim_param());
  }
  for (int d = 0; d < type.shape().dim_size(); ++d) {
    if (partial[d] > 0) continue;
    if (partial[d] == 0) {
      // Some exporters write 0 for a size they do not know; the override is the way out for both.
      partial[d] = -1;
      return zero_size_error(name, d, "in the model", "if the exporter meant an unknown size, give it with " +
                                                          shape_hint(name, partial));
    }
    const auto& dim = type.shape().dim(d);
    const std::string sym = dim.has_dim_param() ? " ('" + dim.dim_param() + "')" : "";
    return Status(Code::kInvalidArgument,
                  "input '" + name + "' dimension " + std::to_string(d) + sym +
                      " is symbolic: pock compiles static shapes. Give it with " + shape_hint(name, partial) +
                      (dim.has_dim_param() ? " or --input-shape @" + dim.dim_param() + "=N" : ""));
  }
  return partial;
}

// The shape the file fixes for an input whose static dimensions include a 0, none overridden.
std::optional<Shape> declared_zero_size(const onnx::ValueInfoProto& in, const OnnxImportOptions& options) {
  const auto& type = in.type().tensor_type();
  if (options.input_shapes.count(in.name()) || !type.has_shape()) return std::nullopt;
  Shape shape;
  for (int d = 0; d < type.shape().dim_size(); ++d) {
    const auto& dim = type.shape().dim(d);
    if (!dim.has_dim_value()) return std::nullopt;
    shape.push_back(d == 0 && options.batch_size > 0 ? options.batch_size : dim.dim_value());
  }
  return numel(shape) == 0 ? std::optional<Shape>(shape) : std::nullopt;
}

Status declare_inputs(ImportContext& ctx) {
  POCK_RETURN_IF_ERROR(onnx_import::check_bound_names(ctx));
  for (const auto& in : ctx.proto.input()) {
    if (ctx.find(in.name())) continue;  // an initializer listed as an input (old exporters)
    auto bound = ctx.options.bound_inputs.find(in.name());
    if (bound != ctx.options.bound_inputs.end()) {
      POCK_RETURN_IF_ERROR(onnx_import::declare_bound_input(ctx, in, bound->second));
      continue;
    }
    if (!in.type().has_tensor_type()) {
      return Status(Code::kUnsupportedOp, "input '" + in.name() + "' is not a tensor (sequences and maps are not supported)");
    }
    const int32_t elem = in.type().tensor_type().elem_type();
    auto dt = onnx_import::dtype_from_onnx(elem);
    if (!dt.is_ok()) return Status(dt.status().code(), "input '" + in.name() + "': " + dt.status().message());
    auto shape = resolve_input_shape(in, ctx.options);
    if (!shape.is_ok()) {
      // An input with no elements cannot be a graph tensor, but an operand read at compile time
      // (empty axes) can take its value from a binding: the node that reads it says which.
      const std::optional<Shape> empty = declared_zero_size(in, ctx.options);
      if (!empty) return shape.status();
      Value& v = ctx.define(in.name());
      v.dtype = dt.value();
      v.shape = *empty;
      v.graph_input = true;
      v.unusable_reason = shape.status().message();
      continue;
    }
    POCK_RETURN_IF_ERROR(onnx_import::check_dims(*shape, "input '" + in.name() + "'"));
    Value& v = ctx.define(in.name());
    v.dtype = dt.value();
    v.shape = *shape;
    v.graph_input = true;
    v.id = ctx.graph.add_input(in.name(), dt.value(), *shape);
  }
  for (const auto& name : ctx.options.input_shapes) {
    bool known = false;
    for (const auto& in : ctx.proto.input()) known = known || in.name() == name.first;
    if (!known) return Status(Code::kNotFound, "--input-shape names '" + name.first + "', which is not an input of the model");
  }
  return Status::ok();
}

// A folded output (`y = Shape(x)` on a static x) became a constant named 'y': it takes another
// name, since nobody selects folded values by name. An input or weight keeps its name (callers set
// and recipes select them by it), so the same name cannot also be an output.
Status release_output_name(Graph& graph, TensorId id) {
  const TensorDesc& t = graph.tensor(id);
  if (t.kind == TensorKind::kConstant) return graph.rename_tensor(id, graph.unique_name(t.name + "/folded"));
  if (t.kind == TensorKind::kActivation) {
    return Status(Code::kInvalidArgument, "output '" + t.name + "' is listed twice among the graph outputs");
  }
  const char* kind = t.kind == TensorKind::kInput ? "a graph input" : "an initializer";
  return Status(Code::kUnsupportedOp, "output '" + t.name + "' is also " + kind +
                                          " of that name; pock names an output and its source apart: return it "
                                          "through an Identity node with another output name");
}

Status mark_outputs(ImportContext& ctx) {
  if (ctx.proto.output_size() == 0) return Status(Code::kInvalidArgument, "the model has no outputs");
  for (const auto& out : ctx.proto.output()) {
    if (!ctx.find(out.name())) {
      return Status(Code::kInvalidArgument, "output '" + out.name() + "' is not produced by any node");
    }
    POCK_ASSIGN_OR_RETURN(TensorId id, ctx.materialize(out.name()));
    const TensorDesc& t = ctx.graph.tensor(id);
    bool already_output = false;
    for (TensorId o : ctx.graph.outputs()) already_output = already_output || o == id;
    const bool own_name = t.name == out.name() || ctx.graph.find(out.name()) == kNoTensor;
    if (t.kind == TensorKind::kActivation && !already_output && own_name) {
      POCK_RETURN_IF_ERROR(ctx.graph.mark_output(id, out.name()));
      continue;
    }
    // An input, weight or constant returned as is, or one tensor under two output names: copy.
    // The copy takes the output's name, so a source holding that name must give it up first.
    if (t.name == out.name()) POCK_RETURN_IF_ERROR(release_output_name(ctx.graph, id));
    auto copy = ctx.graph.add_node("Identity", {id}, {}, "output/" + out.name(), {out.name()});
    if (!copy.is_ok()) return copy.status();
    POCK_RETURN_IF_ERROR(ctx.graph.mark_output(copy.value()[0], out.name()));
  }
  return Status::ok();
}

// Re-emission and patterns can leave nodes nobody reads (the Div before a fused Gelu, a
// materialized weight whose consumer was fused): keep only what the outputs need, so that no
// dead parameter is mistaken for a trainable one.
Graph compact(const Graph& g) {
  std::vector<bool> live(g.num_tensors(), false);
  for (TensorId o : g.outputs()) live[o] = true;
  std::vector<bool> keep(g.nodes().size(), false);
  for (size_t k = g.nodes().size(); k-- > 0;) {
    const Node& n = g.nodes()[k];
    bool needed = false;
    for (TensorId o : n.outputs) needed = needed || live[o];
    if (!needed) continue;
    keep[k] = true;
    for (TensorId i : n.inputs) {
      if (i != kNoTensor) live[i] = true;
    }
  }
  for (size_t k = 0; k < g.nodes().size(); ++k) {  // unread outputs of kept nodes (LayerNorm's mean) stay
    if (!keep[k]) continue;
    for (TensorId o : g.nodes()[k].outputs) live[o] = true;
  }
  for (size_t t = 0; t < g.num_tensors(); ++t) {
    if (g.tensor(static_cast<TensorId>(t)).kind == TensorKind::kInput) live[t] = true;
  }
  Graph out;
  std::vector<TensorId> remap(g.num_tensors(), kNoTensor);
  for (size_t t = 0; t < g.num_tensors(); ++t) {
    if (live[t]) remap[t] = out.add_tensor(g.tensor(static_cast<TensorId>(t)));
  }
  for (size_t k = 0; k < g.nodes().size(); ++k) {
    if (!keep[k]) continue;
    Node n = g.nodes()[k];
    for (TensorId& i : n.inputs) i = i == kNoTensor ? kNoTensor : remap[i];
    for (TensorId& o : n.outputs) o = remap[o];
    out.mutable_nodes().push_back(std::move(n));
  }
  for (TensorId o : g.outputs()) (void)out.mark_output(remap[o]);
  return out;
}

Result<Graph> import_model(const onnx::ModelProto& model, const OnnxImportOptions& options, const std::string& base_dir,
                           OnnxImportRefusal* refusal) {
  POCK_RETURN_IF_ERROR(check_opsets(model));
  if (!model.has_graph()) return Status(Code::kInvalidArgument, "the file holds no graph");
  int64_t opset = default_opset(model);
  std::optional<onnx::ModelProto> upgraded;  // a model below opset 7 whose ops changed by 7, converted
  if (opset < kMinOpset) {  // ONNX's node tests write Not, Elu, ... at opsets 1 and 6; old PyTorch exports at 6
    POCK_ASSIGN_OR_RETURN(upgraded, onnx_import::upgrade_to_opset(model, opset, kMinOpset));
    opset = kMinOpset;
  }
  const onnx::GraphProto& source = upgraded ? upgraded->graph() : model.graph();
  POCK_RETURN_IF_ERROR(onnx_import::check_node_schemas(source, opset));
  POCK_ASSIGN_OR_RETURN(onnx::GraphProto graph, onnx_import::adapt_to_canonical(source, opset));
  std::string loop_input_to_bind;
  if (Status inlined = onnx_import::inline_control_flow(&graph, opset, options, base_dir, &loop_input_to_bind);
      !inlined.is_ok()) {
    if (refusal) refusal->input_to_bind = loop_input_to_bind;
    return inlined;
  }
  ImportContext ctx(graph, options, base_dir);
  Status s = declare_initializers(ctx);
  if (s.is_ok()) s = declare_inputs(ctx);
  for (int i = 0; s.is_ok() && i < graph.node_size(); ++i) s = ctx.process(i);
  if (s.is_ok()) s = mark_outputs(ctx);
  if (!s.is_ok()) {
    const bool for_binding = !ctx.needs_constant_message.empty() && s.message().find(ctx.needs_constant_message) != std::string::npos;
    if (refusal && for_binding) refusal->input_to_bind = ctx.input_to_bind;
    return s;
  }
  return compact(ctx.graph);
}

}  // namespace

Result<Graph> import_onnx_bytes(const void* data, size_t size, const OnnxImportOptions& options,
                                const std::string& base_dir, OnnxImportRefusal* refusal) {
  if (refusal) *refusal = {};
  if (size > static_cast<size_t>(INT_MAX)) {
    return Status(Code::kInvalidArgument, "the ONNX file is larger than 2 GiB: store the weights as external data");
  }
  onnx::ModelProto model;
  google::protobuf::io::CodedInputStream stream(static_cast<const uint8_t*>(data), static_cast<int>(size));
  stream.SetTotalBytesLimit(INT_MAX);
  if (!model.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage()) {
    return Status(Code::kInvalidArgument, "not a valid ONNX model: the protobuf does not parse (truncated or not .onnx)");
  }
  // Every read of the file is checked; this fence turns a missed check into an error, not an abort.
  try {
    return import_model(model, options, base_dir, refusal);
  } catch (const std::exception& e) {
    return Status(Code::kInvalidArgument, std::string("malformed ONNX model: ") + e.what());
  }
}

Result<Graph> import_onnx(const std::string& path, const OnnxImportOptions& options) {
  return import_onnx(path, options, nullptr);
}

Result<Graph> import_onnx(const std::string& path, const OnnxImportOptions& options, OnnxImportRefusal* refusal) {
  if (refusal) *refusal = {};
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(Code::kIo, "cannot open ONNX file '" + path + "'");
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return Status(Code::kIo, "cannot read ONNX file '" + path + "'");
  const std::string dir = std::filesystem::path(path).parent_path().string();
  auto g = import_onnx_bytes(bytes.data(), bytes.size(), options, dir.empty() ? "." : dir, refusal);
  if (!g.is_ok()) return Status(g.status().code(), path + ": " + g.status().message());
  return g;
}

Status parse_input_shape_arg(const std::string& arg, OnnxImportOptions* options) {
  const size_t eq = arg.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size()) {
    return Status(Code::kInvalidArgument, "--input-shape '" + arg + "' must look like NAME=d0,d1,... or @DIM=N");
  }
  const std::string name = arg.substr(0, eq);
  Shape dims;
  const char* p = arg.data() + eq + 1;
  const char* end = arg.data() + arg.size();
  while (p < end) {
    int64_t d = 0;
    auto [next, ec] = std::from_chars(p, end, d);
    if (ec == std::errc() && d == 0 && (next == end || *next == ',')) {
      return Status(Code::kInvalidArgument, "--input-shape '" + arg + "': a dimension is 0; pock compiles only "
                                            "tensors with at least one element (no zero-size dimensions)");
    }
    if (ec != std::errc() || d < 0 || (next != end && *next != ',')) {
      return Status(Code::kInvalidArgument, "--input-shape '" + arg + "': dimensions must be positive integers separated by commas");
    }
    dims.push_back(d);
    p = next == end ? end : next + 1;
  }
  if (name[0] == '@') {
    if (dims.size() != 1) return Status(Code::kInvalidArgument, "--input-shape '" + arg + "': a named dimension takes one value");
    options->dim_values[name.substr(1)] = dims[0];
  } else {
    if (dims.size() > static_cast<size_t>(kMaxRank)) {
      return Status(Code::kInvalidArgument, "--input-shape '" + arg + "': rank above " + std::to_string(kMaxRank));
    }
    options->input_shapes[name] = dims;
  }
  return Status::ok();
}

Status parse_bind_arg(const std::string& arg, OnnxImportOptions* options) {
  const size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Status(Code::kInvalidArgument, "--bind '" + arg + "' must look like NAME=v0,v1,... or NAME=@values.npy");
  }
  std::vector<std::string> values;  // "NAME=" binds a value with no elements (empty axes)
  for (size_t start = eq + 1; start < arg.size();) {
    const size_t comma = std::min(arg.find(',', start), arg.size());
    values.push_back(arg.substr(start, comma - start));
    if (values.back().empty() || comma + 1 == arg.size()) {
      return Status(Code::kInvalidArgument, "--bind '" + arg + "': an empty value between commas");
    }
    start = comma + 1;
  }
  const std::string name = arg.substr(0, eq);
  if (options->bound_inputs.count(name)) return Status(Code::kInvalidArgument, "--bind names '" + name + "' twice");
  options->bound_inputs[name].literal = std::move(values);
  return Status::ok();
}

}  // namespace pock
