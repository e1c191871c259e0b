#pragma once
#include <string>
#include <vector>

#include "blob/atomic_file.hpp"  // write_file_atomic, used with write_blob
#include "blob/program_spec.hpp"

namespace pock {

// Serializes a program into the .pock container.
Status write_blob(const ProgramSpec& spec, std::vector<uint8_t>* out);
// Writes atomically: a temporary file beside `path`, fsync, rename. A crash keeps the old file.
Status write_blob_file(const ProgramSpec& spec, const std::string& path);

}  // namespace pock
