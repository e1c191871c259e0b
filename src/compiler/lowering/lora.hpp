// LoRA adapters (recipe "lora"), added to the model before any function is built, so that infer,
// train, eval and a decode function all run them: every Linear whose weight is the parameter
// "<module>.weight" of a planned module (pock/compiler/lora.hpp: plan_lora) becomes
//   y = Linear(x, W, b) + scaling * Linear(Linear(Dropout(x), A), B)
// with new parameters "<module>.lora_A.weight" [rank, in] (kaiming-uniform, a = sqrt(5): bound
// 1 / sqrt(in), as peft) and "<module>.lora_B.weight" [out, rank] (zeros), so the adapted model
// starts equal to the base one. The Dropout is the model's own op: identity in inference, a
// seeded mask in the train function. Autodiff then sees frozen base weights: sparse
// backpropagation computes no gradient for them and only the input gradients the adapters need.
#pragma once
#include "pock/compiler/compiler.hpp"
#include "pock/compiler/lora.hpp"

namespace pock {

// Returns the modules adapted (none for rank 0); an error when the recipe names none of the model's.
Result<std::vector<LoraModule>> add_lora_adapters(Graph& graph, const Recipe::Lora& lora);

// peft's module matching: a name without '.', '*', '?' or '{' matches the last component of the
// module name; anything else is a glob over the whole name (lowering/trainable.hpp).
bool lora_targets(const std::vector<std::string>& targets, const std::string& module);

// The blob metadata's "lora" member for these modules (lora_modules_from_metadata reads it back).
std::string lora_metadata_json(const Recipe::Lora& lora, const std::vector<LoraModule>& modules);

}  // namespace pock
