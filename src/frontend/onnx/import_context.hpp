// The state of one ONNX import: the ONNX value table (each name bound to a graph tensor, a value
// known at import time, or both), the graph being built, and a view of one node for converters.
//
// Values known at import time are folded lazily. A folded value that derives from a weight (a
// float initializer) is not baked into a constant when a real op needs it: the ops that produced
// it are re-emitted on the parameter instead, so `MatMul(x, Transpose(W))` keeps W trainable.
// Derivations that pock cannot express as ops (rotary tables from Cos/Sin of a frequency buffer)
// are baked: such buffers are constants, not parameters.
#pragma once
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <onnx/onnx_pb.h>

#include "frontend/onnx/host_tensor.hpp"
#include "frontend/onnx/proto_reading.hpp"
#include "ir/op_schema.hpp"
#include "pock/compiler/graph.hpp"
#include "pock/compiler/onnx.hpp"

namespace pock::onnx_import {

struct Value {
  DType dtype = DType::kF32;
  Shape shape;
  TensorId id = kNoTensor;                          // graph tensor, once materialized
  std::optional<HostTensor> constant;               // known at import time
  const onnx::TensorProto* initializer = nullptr;   // decoded on first use
  bool is_weight = false;       // a float initializer with more than one element
  bool weight_derived = false;  // folded from a weight: re-emitted as ops when a graph op reads it
  int producer = -1;            // index of the ONNX node that folded it
  bool graph_input = false;     // a model input the caller sets at run time (not a bound one)
  // Why this graph input cannot become a graph tensor (it has no elements): reported when an op
  // reads it at run time. An operand read at compile time asks for a binding instead.
  std::string unusable_reason;
};

class ImportContext;

// One ONNX node as a converter sees it: inputs by position, attributes, and emit helpers that
// name the node in every error.
class NodeView {
 public:
  NodeView(ImportContext& ctx, int index);
  const onnx::NodeProto& proto() const { return *proto_; }
  const std::string& op() const { return proto_->op_type(); }
  const std::string& where() const { return where_; }  // "Conv node '/conv1/Conv'"
  const NodeAttrs& attrs() const { return attrs_; }
  int index() const { return index_; }
  ImportContext& ctx() { return ctx_; }

  int num_inputs() const { return proto_->input_size(); }
  bool has_input(int i) const { return i < proto_->input_size() && !proto_->input(i).empty(); }
  // "" for an omitted or absent input, so that a malformed node never indexes out of range.
  const std::string& input_name(int i) const;
  int num_outputs() const { return proto_->output_size(); }
  bool has_output(int i) const { return i < proto_->output_size() && !proto_->output(i).empty(); }
  // An optional output that a later node or the graph reads.
  bool output_used(int i) const;

  const Value& value(int i) const;  // an empty Value for an absent input
  Result<TensorId> input(int i);    // materializes the input as a graph tensor
  Result<TensorId> input_as_state(int i);  // BatchNorm running statistics
  // A float initializer as a parameter even when it has one element (scalars are otherwise
  // constants, as exporters store literals): a learned scalar such as nn.PReLU()'s slope.
  Result<TensorId> input_as_weight(int i);
  // The input's value at import time; an error explains that the op needs it constant.
  Result<const HostTensor*> const_input(int i, const char* what);
  Result<std::vector<int64_t>> const_ints(int i, const char* what);
  Result<double> const_scalar(int i, const char* what);  // a constant one-element input
  bool input_is_constant(int i) const;
  std::optional<double> scalar_input(int i) const;  // a constant one-element input

  // Adds a pock node named after this ONNX node; its outputs are not bound to ONNX names.
  Result<std::vector<TensorId>> emit(const std::string& op, std::vector<TensorId> inputs, Attrs attrs = {},
                                     const std::string& suffix = {});
  // Adds the node whose outputs are this ONNX node's outputs (named like them) and binds them.
  Status emit_final(const std::string& op, std::vector<TensorId> inputs, Attrs attrs = {});
  // Binds ONNX output `i` to an existing tensor (Identity, no-op Cast, fused patterns).
  Status bind_output(int i, TensorId id);
  // Binds ONNX output `i` to a value known at import time (Shape of a static tensor).
  void bind_constant(int i, HostTensor value);

  Status error(const std::string& what) const;        // kInvalidArgument
  Status unsupported(const std::string& what) const;  // kUnsupportedOp
  Status input_error(int i, const std::string& what) const;

 private:
  ImportContext& ctx_;
  int index_;
  const onnx::NodeProto* proto_;
  std::string where_;
  NodeAttrs attrs_;
};

using Converter = Status (*)(NodeView& node);
// The one operator domain besides ai.onnx that pock imports; its converters are keyed
// "<domain>::<op>" so that its Adam is not the default domain's.
constexpr char kPreviewTrainingDomain[] = "ai.onnx.preview.training";
// A node's key in the converter table: the op for the default domain, else "<domain>::<op>".
std::string converter_key(const onnx::NodeProto& node);
// Host evaluation of an op whose inputs are all known; `folded` false means "not foldable here"
// (the converter runs instead).
using Folder = Status (*)(NodeView& node, const std::vector<const HostTensor*>& inputs,
                          std::vector<HostTensor>* outputs, bool* folded);
// A fusion that starts at a node of its op: returns true when it matched and bound the outputs
// of the last node it absorbed (those nodes are marked handled).
using Pattern = Result<bool> (*)(NodeView& node);

class ImportContext {
 public:
  ImportContext(const onnx::GraphProto& graph, const OnnxImportOptions& options, std::string base_dir);

  Graph graph;
  const onnx::GraphProto& proto;
  const OnnxImportOptions& options;
  const std::string base_dir;

  Value* find(const std::string& name);
  Value& define(const std::string& name);
  const std::vector<int>& consumers(const std::string& name) const;
  int producer_of(const std::string& name) const;  // ONNX node writing it; -1: input or initializer
  bool is_graph_output(const std::string& name) const;
  bool is_graph_input(const std::string& name) const;  // a model input the caller sets at run time
  // The graph inputs whose run-time values `name` is computed from (itself, when it is one).
  std::vector<std::string> graph_inputs_feeding(const std::string& name) const;
  // Refuses the import because `operand` (a node's input, described in `operand`) must be known
  // at compile time but comes from a graph input, which the error names for --bind; the name is
  // also kept for OnnxImportRefusal.
  Status needs_constant(const std::string& operand, const std::string& value_name, const std::string& what);
  void mark_handled(int node) { handled_[node] = true; }
  bool handled(int node) const { return handled_[node]; }

  Result<const HostTensor*> constant_of(const std::string& name);
  Result<TensorId> materialize(const std::string& name, TensorKind kind = TensorKind::kParameter);

  // Runs one node: a pattern, folding, or its converter.
  Status process(int node);
  Status run_converter(int node);
  void bind_empty_outputs(int node);

  // The graph input whose binding would let a refused import go on (OnnxImportRefusal), valid
  // when the import's error is the one needs_constant made (a converter may try and fall back).
  std::string input_to_bind;
  std::string needs_constant_message;

 private:
  friend class NodeView;
  std::unordered_map<std::string, Value> values_;
  std::unordered_map<std::string, std::vector<int>> consumers_;
  std::unordered_map<std::string, int> producers_;
  std::unordered_map<std::string, bool> graph_outputs_;
  std::vector<bool> handled_;
  std::vector<bool> emitting_;  // re-emission in progress (guards against cycles in bad files)
};

// Tables filled by the converter files (one per op family).
const Converter* find_converter(const std::string& op);
const Folder* find_folder(const std::string& op);
const Pattern* find_pattern(const std::string& op);

void register_math_converters(std::unordered_map<std::string, Converter>& table);
void register_nn_converters(std::unordered_map<std::string, Converter>& table);
void register_shape_converters(std::unordered_map<std::string, Converter>& table);
void register_loss_converters(std::unordered_map<std::string, Converter>& table);
void register_activation_converters(std::unordered_map<std::string, Converter>& table);
void register_instance_norm_converters(std::unordered_map<std::string, Converter>& table);
void register_tile_converters(std::unordered_map<std::string, Converter>& table);
void register_conv_transpose_converters(std::unordered_map<std::string, Converter>& table);
void register_depth_space_converters(std::unordered_map<std::string, Converter>& table);
void register_gather_scatter_converters(std::unordered_map<std::string, Converter>& table);
void register_resize_converters(std::unordered_map<std::string, Converter>& table);
void register_eye_like_converters(std::unordered_map<std::string, Converter>& table);
void register_tfidf_converters(std::unordered_map<std::string, Converter>& table);
void register_control_flow_converters(std::unordered_map<std::string, Converter>& table);
void register_math_unary_converters(std::unordered_map<std::string, Converter>& table);
void register_logic_converters(std::unordered_map<std::string, Converter>& table);
void register_cumsum_converters(std::unordered_map<std::string, Converter>& table);
void register_einsum_converters(std::unordered_map<std::string, Converter>& table);
void register_indexing_converters(std::unordered_map<std::string, Converter>& table);
void register_grid_sample_converters(std::unordered_map<std::string, Converter>& table);
void register_lrn_converters(std::unordered_map<std::string, Converter>& table);
void register_mvn_converters(std::unordered_map<std::string, Converter>& table);
void register_determinant_converters(std::unordered_map<std::string, Converter>& table);
void register_dft_converters(std::unordered_map<std::string, Converter>& table);
void register_compress_converters(std::unordered_map<std::string, Converter>& table);
void register_max_unpool_converters(std::unordered_map<std::string, Converter>& table);
void register_data_dependent_converters(std::unordered_map<std::string, Converter>& table);
void register_roi_align_converters(std::unordered_map<std::string, Converter>& table);
void register_recurrent_converters(std::unordered_map<std::string, Converter>& table);
void register_preview_training_converters(std::unordered_map<std::string, Converter>& table);
void register_quantize_converters(std::unordered_map<std::string, Converter>& table);
void register_quantize_conv_converters(std::unordered_map<std::string, Converter>& table);
void register_folders(std::unordered_map<std::string, Folder>& table);
void register_patterns(std::unordered_map<std::string, Pattern>& table);

}  // namespace pock::onnx_import
