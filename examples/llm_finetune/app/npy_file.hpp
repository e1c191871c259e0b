// Writes an int64 array as a NumPy .npy file (format 1.0), for the PyTorch side of the example
// to train on exactly the tokens this app trained on.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace llm_finetune {

bool write_npy_i64(const std::string& path, const std::vector<int64_t>& shape, const std::vector<int64_t>& values);

}  // namespace llm_finetune
