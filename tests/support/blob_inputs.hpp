// The caller-set tensors (inputs and labels) of a blob, and a helper that sets them all to zeros:
// for tests that measure or exercise a step regardless of the data in it.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "blob/reader.hpp"
#include "pock/pock.h"

namespace pock::test {

// Names and byte sizes; empty when the blob does not verify.
inline std::vector<std::pair<std::string, size_t>> blob_inputs(const std::vector<uint8_t>& bytes) {
  std::vector<std::pair<std::string, size_t>> out;
  BlobView view;
  if (!open_blob(bytes.data(), bytes.size(), VerifyOptions{}, &view).is_ok()) return out;
  Result<ProgramSpec> spec = read_program_spec(view, /*with_weights=*/false);
  if (!spec.is_ok()) return out;
  for (const TensorSpec& t : spec.value().tensors) {
    if (t.kind == TensorKind::kInput) out.emplace_back(t.name, t.nbytes);
  }
  return out;
}

// Sets every input of `engine` (opened from `bytes`) to zeros; false if one cannot be set.
inline bool set_inputs_to_zero(pock_engine* engine, const std::vector<uint8_t>& bytes) {
  for (const auto& [name, nbytes] : blob_inputs(bytes)) {
    const std::vector<uint8_t> zeros(nbytes, 0);
    if (pock_engine_set_input(engine, name.c_str(), zeros.data(), zeros.size()) != POCK_OK) return false;
  }
  return true;
}

}  // namespace pock::test
