// Loading a blob: structural checks (header, sections, checksums, FlatBuffer verifier) and then
// full consistency (every index, offset, size and op type), before anything runs.
#pragma once
#include <functional>
#include <cstdint>
#include <string>

#include "blob/program_spec.hpp"
#include "pock/status.hpp"

namespace pock {
namespace fb {
struct Program;
}

struct BlobView {
  const fb::Program* program = nullptr;
  const uint8_t* weights = nullptr;
  uint64_t weights_size = 0;
};

struct VerifyOptions {
  bool check_weights_crc = true;  // costs one pass over the weights
  // Called on each checked stretch of the weights section, in order: a file-backed caller lets
  // those pages go as the check passes, instead of holding the whole blob resident at its end.
  std::function<void(const uint8_t* data, size_t size)> after_check;
};

// Level 1 and 2 verification. On success `view` points into `data`, which must outlive it.
Status open_blob(const uint8_t* data, size_t size, const VerifyOptions& options, BlobView* view);

// Copies a verified blob into plain data (inspection, round-trip tests). Without `with_weights`
// the weights section stays out of the copy (a caller after the program only: that is all of a
// 550 MB blob but a few pages).
Result<ProgramSpec> read_program_spec(const BlobView& view, bool with_weights = true);

}  // namespace pock
