// What keeping frozen weights block-quantized saves (recipe frozen_weights "source" / "q8_0"):
// the weights the blob's LinearQ / LinearQInputGrad / GatherQ ops read, their bytes, and the
// bytes they would take as f32.
#pragma once
#include <nlohmann/json.hpp>

#include "blob/program_spec.hpp"

namespace pock::tools {

// {"tensors", "bytes", "f32_bytes", "saved_bytes", "by_format": {"q4_1": {...}, ...}}; each weight
// counted once however many ops read it.
nlohmann::ordered_json quantized_weights_report(const ProgramSpec& spec);

}  // namespace pock::tools
