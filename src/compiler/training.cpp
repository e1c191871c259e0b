// Builds the "train" and "eval" functions: train-mode forward, loss, reverse-mode gradients,
// optimizer updates. Each step lives in its own file under lowering/ and autodiff/.
#include "compiler/training.hpp"

#include <algorithm>
#include <unordered_set>

#include "compiler/autodiff/autodiff.hpp"
#include "compiler/lowering/bf16_compute.hpp"
#include "compiler/lowering/bf16_convs.hpp"
#include "compiler/lowering/bf16_operands.hpp"
#include "compiler/lowering/bf16_producers.hpp"
#include "compiler/lowering/batch_size.hpp"
#include "compiler/lowering/fold_frozen_scale.hpp"
#include "compiler/lowering/quantize_frozen.hpp"
#include "compiler/lowering/fuse_head_loss.hpp"
#include "compiler/lowering/quantize_source.hpp"
#include "compiler/lowering/loss.hpp"
#include "compiler/lowering/optimizer.hpp"
#include "compiler/lowering/train_mode.hpp"
#include "compiler/lowering/trainable.hpp"
#include "compiler/recipe.hpp"

namespace pock {
namespace {

// The caller-fed tensors a function reads, in first-use order.
std::vector<TensorId> function_inputs(const Graph& g, const std::vector<Node>& nodes) {
  std::vector<TensorId> out;
  for (const Node& n : nodes) {
    for (TensorId id : n.inputs) {
      if (id != kNoTensor && g.tensor(id).kind == TensorKind::kInput &&
          std::find(out.begin(), out.end(), id) == out.end()) {
        out.push_back(id);
      }
    }
  }
  return out;
}

TensorId add_step_counter(Graph& g) {
  TensorDesc d;
  d.name = "step";
  d.dtype = DType::kI64;
  d.shape = {};
  d.kind = TensorKind::kState;
  d.data = std::make_shared<const std::vector<uint8_t>>(sizeof(int64_t), uint8_t{0});
  return g.add_tensor(std::move(d));
}

// Copies each parameter's final gradient into a persistent output "<param>.grad".
Status expose_gradients(Graph& g, FunctionDef& fn, const std::vector<ParamGrad>& grads) {
  for (const ParamGrad& pg : grads) {
    const std::string name = g.tensor(pg.param).name + ".grad";
    if (g.find(name) != kNoTensor) {
      return Status(Code::kInvalidArgument, "expose_gradients: the model already has a tensor named '" + name + "'");
    }
    auto node = g.create_node("Identity", {pg.grad}, {}, name, {name});
    if (!node.is_ok()) return node.status();
    node->phase = Phase::kBackward;
    fn.outputs.push_back(node->outputs[0]);
    fn.nodes.push_back(std::move(node.value()));
  }
  return Status::ok();
}

// Frozen-scale folding (lowering/fold_frozen_scale.hpp) over every function that has one: with
// optimize on, in each function alike, sharing the constants so that the folded weights replace
// the originals in the blob instead of joining them.
// Frozen Linear weights to int8 (lowering/quantize_frozen.hpp) or kept block-quantized
// (lowering/quantize_source.hpp) when the recipe asks, in every function alike, sharing the
// constants.
struct Int8Quantizing {
  bool enabled = false;
  std::unordered_set<TensorId> mutated;
  Int8Weights shared;
  BlockWeights blocks;  // blocks.mode "source" / "q8_0"; empty: off
  Status apply(Graph& g, FunctionDef* fn) {
    if (fn == nullptr) return Status::ok();
    if (!blocks.mode.empty()) POCK_RETURN_IF_ERROR(quantize_frozen_to_blocks(g, fn->nodes, mutated, blocks).status());
    if (!enabled) return Status::ok();
    return quantize_frozen_linears(g, *fn, mutated, shared).status();
  }
};

struct ScaleFolding {
  bool enabled = false;
  std::unordered_set<TensorId> mutated;
  ConvBatchNormFolds folds;
  Status apply(Graph& g, FunctionDef* fn) {
    if (!enabled || fn == nullptr) return Status::ok();
    return fold_frozen_scales(g, *fn, mutated, folds).status();
  }
};

Status build_eval(TrainingProgram& program, const Recipe& recipe, TensorId source, TensorId labels,
                  ScaleFolding& folding, Int8Quantizing& int8) {
  Graph& g = program.graph;
  POCK_ASSIGN_OR_RETURN(ForwardClone fwd, clone_forward(g, ForwardMode::kEval, "eval/", {}, program.step));
  FunctionDef fn;
  fn.name = "eval";
  fn.nodes = std::move(fwd.nodes);
  POCK_ASSIGN_OR_RETURN(fn.loss, append_loss(g, fn.nodes, recipe.loss, fwd.map(source), labels, "eval_loss"));
  POCK_RETURN_IF_ERROR(folding.apply(g, &fn));
  POCK_RETURN_IF_ERROR(int8.apply(g, &fn));
  if (int8.blocks.int8_compute) POCK_RETURN_IF_ERROR(fuse_head_loss(g, fn.nodes, fn.loss, false).status());
  fn.inputs = function_inputs(g, fn.nodes);
  program.functions.push_back(std::move(fn));
  return Status::ok();
}

}  // namespace

Status build_training_functions(TrainingProgram& program, const Recipe& recipe, const CompileOptions& options) {
  POCK_RETURN_IF_ERROR(validate_recipe(recipe));
  Graph& g = program.graph;
  if (recipe.batch_size > 0) POCK_RETURN_IF_ERROR(set_batch_size(g, recipe.batch_size));

  POCK_ASSIGN_OR_RETURN(const TensorId source, resolve_loss_source(g, recipe.loss));
  POCK_ASSIGN_OR_RETURN(const TensorId labels, create_label_input(g, recipe.loss, source));
  // With LoRA the adapters train, and only what the rules add besides.
  std::vector<TrainableRule> rules = recipe.trainable;
  if (recipe.lora.rank > 0) {
    for (const char* glob : {"*.lora_A.weight", "*.lora_B.weight"}) {
      TrainableRule adapters;
      adapters.match = glob;
      rules.push_back(adapters);
    }
  }
  POCK_ASSIGN_OR_RETURN(const std::vector<TensorId> trainable, select_trainable(g, rules, batchnorm_running_stats(g)));
  if (trainable.empty()) return Status(Code::kInvalidArgument, "trainable: no parameter is selected for training");
  const std::unordered_set<size_t> train_bn = batchnorm_nodes_in_train_form(g, recipe.freeze_batchnorm_stats);
  POCK_RETURN_IF_ERROR(make_running_stats_state(g, train_bn));
  program.step = add_step_counter(g);

  // train: forward (train form) -> loss -> backward -> optimizer.
  POCK_ASSIGN_OR_RETURN(ForwardClone fwd, clone_forward(g, ForwardMode::kTrain, "train/", train_bn, program.step));
  FunctionDef fn;
  fn.name = "train";
  fn.nodes = std::move(fwd.nodes);
  POCK_ASSIGN_OR_RETURN(fn.loss, append_loss(g, fn.nodes, recipe.loss, fwd.map(source), labels, "loss"));
  // Before autodiff, so that the backward is derived from the folded forward. What may change is
  // known now: the trainable flags, and the running statistics the train forward updates (the
  // optimizer writes only trainable parameters and its own state). The infer function goes
  // first, which names the new constants after the model's nodes.
  ScaleFolding folding;
  folding.enabled = options.optimize && options.fold_frozen_scales;
  folding.mutated = tensors_mutated_by(fn.nodes);
  POCK_RETURN_IF_ERROR(folding.apply(g, program.function("infer")));
  POCK_RETURN_IF_ERROR(folding.apply(g, &fn));
  // After folding (a folded layer's weight is a new constant, not a frozen parameter).
  Int8Quantizing int8;
  int8.enabled = recipe.frozen_weights == "int8";
  int8.mutated = folding.mutated;
  if (recipe.frozen_weights == "source" || recipe.frozen_weights == "q8_0") int8.blocks.mode = recipe.frozen_weights;
  int8.blocks.int8_compute = recipe.frozen_matmul == "int8";
  POCK_RETURN_IF_ERROR(int8.apply(g, program.function("infer")));
  POCK_RETURN_IF_ERROR(int8.apply(g, &fn));
  for (GraphFunction& f : g.mutable_functions()) {  // the model's own (decode), over the same weights
    if (!int8.blocks.mode.empty()) POCK_RETURN_IF_ERROR(quantize_frozen_to_blocks(g, f.nodes, int8.mutated, int8.blocks).status());
  }
  if (int8.blocks.int8_compute) POCK_RETURN_IF_ERROR(fuse_head_loss(g, fn.nodes, fn.loss, true).status());
  POCK_ASSIGN_OR_RETURN(Backward bwd, build_backward(g, fn.nodes, fn.loss, trainable));
  std::vector<ParamGrad> grads;
  for (TensorId p : trainable) {
    auto it = bwd.grads.find(p);
    if (it != bwd.grads.end()) grads.push_back({p, it->second});
  }
  if (grads.empty()) {
    return Status(Code::kInvalidArgument, "no trainable parameter influences the loss '" + g.tensor(fn.loss).name + "'");
  }
  fn.backward_begin = static_cast<int32_t>(fn.nodes.size());
  for (Node& n : bwd.nodes) fn.nodes.push_back(std::move(n));
  if (options.expose_gradients) POCK_RETURN_IF_ERROR(expose_gradients(g, fn, grads));
  POCK_RETURN_IF_ERROR(append_optimizer(g, fn.nodes, recipe, program.step, grads));
  fn.inputs = function_inputs(g, fn.nodes);
  program.functions.push_back(std::move(fn));

  POCK_RETURN_IF_ERROR(build_eval(program, recipe, source, labels, folding, int8));
  if (recipe.precision == "bf16") {
    for (FunctionDef& f : program.functions) {
      mark_bf16_gemms(f.nodes);
      if (bf16_operands_apply(options)) {
        POCK_RETURN_IF_ERROR(share_bf16_operands(g, f).status());
        fold_bf16_casts_into_producers(g, f);
        mark_bf16_convs(g, f.nodes);
      }
    }
  }
  return Status::ok();
}

}  // namespace pock
