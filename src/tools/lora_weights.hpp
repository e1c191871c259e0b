// LoRA adapters in the weights pockc writes: `pockc train --save-weights W.npz --merge-lora`
// folds each trained adapter pair into its module's weight (W + scaling B A, the scalings the
// blob's metadata records), so that W.npz is a plain model again.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "pock/status.hpp"
#include "tools/npz.hpp"

namespace pock::tools {

// Merges the adapters of the modules that `metadata` (the blob's checked metadata) records into
// `arrays` (parameters by name, f32) and removes the adapter arrays. A blob without adapters is
// an error saying so.
Status merge_lora_arrays(const nlohmann::json& metadata, NpzFile* arrays);

// One line per blob with adapters for `pockc inspect`: rank, alpha, scaling, the modules. "" without.
std::string lora_summary(const nlohmann::ordered_json& lora);

}  // namespace pock::tools
