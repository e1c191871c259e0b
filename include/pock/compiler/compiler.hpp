// The compiler's public API: a model Graph (built in C++ or imported) plus a Recipe become a
// training-graph blob. docs/recipe.md documents every recipe field.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pock/compiler/graph.hpp"
#include "pock/status.hpp"

namespace pock {

// One selection rule of trainable parameters (the sparse-BP language; see docs/recipe.md).
struct TrainableRule {
  std::string match;          // glob over parameter names ("*.bias", "features.15.*.weight")
  std::string layers;         // "last:4", "first:2", "3:7" over the model's layers; empty: any
  bool bias_only = false;
  double channel_ratio = -1;  // partial-channel update: fraction of leading output channels
  int64_t channels = -1;      // or an explicit count
  // "last:4", "first:2", "3:7" over the model's numbered blocks (block i: every parameter whose
  // name has i as an inner component, "model.layers.3.mlp.up_proj.weight": whole transformer
  // blocks, unlike `layers`); empty: any
  std::string blocks;
};

struct Recipe {
  int64_t batch_size = 0;  // 0: keep the model's input shapes
  struct Loss {
    std::string type = "cross_entropy";  // cross_entropy | mse | output (the model's scalar output)
    std::string logits;                  // model output that the loss reads ("" = the only output)
    std::string labels = "label";        // name of the label input created for the loss
    int64_t ignore_index = -100;
    double label_smoothing = 0.0;
  } loss;
  struct Optimizer {
    std::string type = "sgd";  // sgd | adam | adamw
    double lr = 0.01;
    double momentum = 0.0;
    bool nesterov = false;
    double weight_decay = 0.0;
    double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  } optimizer;
  struct Schedule {
    std::string type = "constant";  // constant | linear_warmup | cosine
    int64_t warmup_steps = 0;
    int64_t total_steps = 0;
    double min_lr = 0.0;
  } schedule;
  int64_t grad_accumulation = 1;  // micro-batches per update
  double clip_grad_norm = 0.0;    // 0: off
  std::vector<TrainableRule> trainable;  // empty: every parameter trains
  bool freeze_batchnorm_stats = false;   // frozen layers' BatchNorm uses running stats
  // "f32", or "int8": frozen Linear weights stored as int8 with a scale per output row, run as
  // LinearInt8 (docs/recipe.md); "source": frozen Linear and embedding weights that the importer
  // read block-quantized (GGUF Q8_0/Q4_x) stay in those blocks, run as LinearQ / GatherQ;
  // "q8_0": the same with every frozen f32 weight quantized to Q8_0. Trainable weights stay f32.
  std::string frozen_weights = "f32";
  // How the weights frozen_weights keeps in blocks multiply: "f32" (exact against the decoded
  // values) or "int8" (activations and output gradients quantized per 32-value block, integer
  // dot products: llama.cpp's arithmetic, on AVX-512 VNNI; docs/recipe.md).
  std::string frozen_matmul = "f32";
  // "fp32" or "bf16": the GEMMs of Linear and MatMul, forward and backward, in every compiled
  // function, round both operands to bf16 and sum in f32 (docs/recipe.md); weights, gradients and
  // optimizer state stay f32.
  std::string precision = "fp32";
  // LoRA (docs/recipe.md): low-rank adapters added at compile time beside the targeted Linear
  // layers, y = W x + scaling * B A dropout(x), in every function (infer and decode too);
  // only the adapters train (plus what `trainable` adds). rank 0: off.
  struct Lora {
    int64_t rank = 0;
    double alpha = 8.0;  // peft's lora_alpha default
    double dropout = 0.0;
    // Module names (a Linear's weight name without ".weight"): a plain name ("q_proj") matches
    // the last component, as peft's target_modules; anything else is a glob over the whole name.
    std::vector<std::string> target_modules;
    uint64_t seed = 0;  // lora_A's kaiming-uniform draws come from (seed, parameter name)
    // Only modules in these blocks ("last:4", "first:2", "a:b" over the model's numbered blocks, as
    // trainable[].blocks; peft's layers_to_transform); empty: every block, and modules outside blocks.
    std::string layers;
    bool use_rslora = false;  // peft's rank-stabilized scaling alpha / sqrt(rank) instead of alpha / rank
    double scaling() const;   // what the adapter's output is multiplied by
  } lora;
};

// Parses a recipe; unknown fields, wrong types and bad values give an error naming the field.
Result<Recipe> parse_recipe(std::string_view json);
Result<Recipe> load_recipe(const std::string& path);

struct CompileOptions {
  std::string backend;         // preferred backend recorded per op ("" = heuristic)
  // Backend plugins whose capabilities the compiler may place ops by (the same libraries the app
  // will load; see pock_engine_options::backend_plugins). A plugin that keeps tensors in memory of
  // its own gets its ops' tensors planned there, with Copy ops where a tensor crosses over.
  std::vector<std::string> backend_plugins;
  bool optimize = true;        // fusion, folding, DCE, CSE
  // Apply each parameter's update as soon as its gradient is ready (the paper's operator
  // reordering) instead of after the whole backward. Unset, the compiler decides (updates_reordered):
  // after the backward where the updates run on host backends, because the engine's default
  // rollback (pock_engine_options::rollback_on_failure) then checks the gradients before the
  // first update and copies nothing, where reordered updates need a snapshot of every weight and
  // its optimizer state, larger than all the arena reordering saves (BERT full BP: +2.4 MB of
  // arena against a 180 MB snapshot); reordered where they may run on a device or plugin backend,
  // whose rollback needs the snapshot either way. true suits an app that opens with rollback off.
  std::optional<bool> reorder_updates;
  bool memory_schedule = true; // reorder each function's nodes to lower its arena peak (never raises it)
  // Before autodiff, a frozen Conv2d -> frozen-scale BatchNorm whose shift trains becomes one
  // Conv2d with the scale in its weight and the shift in its bias (docs/recipe.md). With optimize.
  bool fold_frozen_scales = true;
  std::string profile_path;    // measured kernel timings from `pockc tune` (optional)
  // The train function also outputs each trainable parameter's gradient as a persistent tensor
  // named "<param>.grad" (tests, debugging). With grad_accumulation > 1 it is this micro-batch's.
  bool expose_gradients = false;
  // Layout choice: chains of frozen convolutions that the cpu backend runs channels-last (XNNPACK)
  // stay NHWC, with Transposes only where a chain is entered or left (docs/pockc.md). Applies
  // with optimize, when no backend other than cpu is requested.
  bool layout = true;
  // Refuse a plan whose arenas and persistent regions (all memory spaces) exceed this many bytes,
  // naming both figures, rather than write a blob the device cannot open. 0: no budget.
  uint64_t memory_budget_bytes = 0;
};

// What the compiler built, for `pockc inspect` and the memory tests.
struct CompileReport {
  uint64_t weights_bytes = 0;
  uint64_t trainable_bytes = 0;         // trained rows only under a partial-channel update
  uint64_t optimizer_state_bytes = 0;   // moments, momentum buffers, accumulators (not BatchNorm statistics)
  uint64_t saved_activation_bytes = 0;  // forward activations kept alive for the backward pass
  uint64_t arena_peak_bytes = 0;        // the train function's plan (infer if no recipe)
  uint64_t arena_lower_bound_bytes = 0; // largest total of simultaneously live tensors
  uint64_t persistent_bytes = 0;
  std::string json;                     // the full report
};

// Without a recipe only the inference function is built.
Result<std::vector<uint8_t>> compile(const Graph& model, const Recipe* recipe, const CompileOptions& options = {},
                                     CompileReport* report = nullptr);
Status compile_to_file(const Graph& model, const Recipe* recipe, const std::string& path,
                       const CompileOptions& options = {}, CompileReport* report = nullptr);

}  // namespace pock
