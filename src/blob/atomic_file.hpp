// Crash-safe file replacement, shared by the blob writer (compiler) and checkpoints (runtime).
#pragma once
#include <cstddef>
#include <string>

#include "pock/status.hpp"

namespace pock {

// Writes atomically: a temporary file beside `path`, fsync, rename. A crash keeps the old file.
Status write_file_atomic(const std::string& path, const void* data, size_t size);

}  // namespace pock
