// LoRA adapters (the recipe's "lora", docs/recipe.md) seen from outside the compiler: which
// modules a recipe adapts, the record a blob keeps of them, and the trained adapters merged back
// into the base weights for export (pockc train --merge-lora, a GGUF or safetensors writer).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pock/compiler/compiler.hpp"
#include "pock/compiler/models.hpp"

namespace pock {

// One adapted Linear layer: its weight "<name>.weight" [out, in], the adapters
// "<name>.lora_A.weight" [rank, in] and "<name>.lora_B.weight" [out, rank] (peft's names).
struct LoraModule {
  std::string name;  // "model.layers.0.self_attn.q_proj"
  int64_t in = 0, out = 0, rank = 0;
  double scaling = 0.0;  // alpha / rank, or alpha / sqrt(rank) with use_rslora
};

// The modules `lora` adapts in `model`, in graph order: exactly those compile() adds adapters to.
// rank 0 gives none; a target list matching no Linear layer, or a malformed `layers`, is an error
// naming the field.
Result<std::vector<LoraModule>> plan_lora(const Graph& model, const Recipe::Lora& lora);

// The modules a compiled blob's metadata records (the JSON object `pockc inspect --json` shows
// under "metadata"; its member "lora", docs/blob-format.md). No member: no modules. A member of
// the wrong shape is an error.
Result<std::vector<LoraModule>> lora_modules_from_metadata(std::string_view metadata_json);

// W + scaling * B A for every module, in place, with `weights` named as the engine's parameters
// (Engine::get_parameter, `pockc train --save-weights`); the adapter weights leave the map, so it
// loads into the base model (models::load_weights). A module whose weight or adapters are missing
// or of the wrong size is an error naming it; on error `weights` is unchanged.
Status merge_lora(models::WeightMap& weights, const std::vector<LoraModule>& modules);

}  // namespace pock
