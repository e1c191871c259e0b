// Writes tensors as one safetensors file (Hugging Face's format; the reader is
// src/frontend/safetensors/safetensors_file.hpp): an 8-byte little-endian header length, a JSON
// header of {name: {dtype, shape, data_offsets}}, padded with spaces to a multiple of 8 bytes so
// that the data stays aligned, then the data in header order. Written atomically.
#pragma once
#include <string>
#include <vector>

#include "pock/status.hpp"
#include "tools/trained_weights.hpp"

namespace pock::tools {

// Every tensor must be typed (dtype and shape known) and hold numel * dtype_size bytes.
Status write_safetensors(const std::string& path, const std::vector<TrainedTensor>& tensors);

}  // namespace pock::tools
