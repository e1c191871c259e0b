// LoRA adapters (recipe "lora"), added to the model before any function is built, so that infer,
// train, eval and a decode function all run them: every Linear whose weight is the parameter
// "<module>.weight" of a targeted module becomes
//   y = Linear(x, W, b) + alpha / rank * Linear(Linear(Dropout(x), A), B)
// with new parameters "<module>.lora_A.weight" [rank, in] (kaiming-uniform, a = sqrt(5): bound
// 1 / sqrt(in), as peft) and "<module>.lora_B.weight" [out, rank] (zeros), so the adapted model
// starts equal to the base one. The Dropout is the model's own op: identity in inference, a
// seeded mask in the train function.
#pragma once
#include "pock/compiler/compiler.hpp"

namespace pock {

// Returns the number of modules adapted; an error when none matches.
Result<int> add_lora_adapters(Graph& graph, const Recipe::Lora& lora);

// peft's module matching: a name without '.', '*', '?' or '{' matches the last component of the
// module name; anything else is a glob over the whole name (lowering/trainable.hpp).
bool lora_targets(const std::vector<std::string>& targets, const std::string& module);

}  // namespace pock
