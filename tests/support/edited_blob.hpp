// Test support: opens a compiled program after a hostile edit (checksums recomputed by the
// writer, as a forger would), for verifier tests.
#pragma once
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "blob/program_spec.hpp"
#include "blob/reader.hpp"
#include "blob/writer.hpp"
#include "pock/pock.h"

namespace pock::test {

// The program of a compiled blob, weights included, as a forger would start from it.
inline ProgramSpec program_of(const std::vector<uint8_t>& blob) {
  BlobView view;
  REQUIRE(open_blob(blob.data(), blob.size(), VerifyOptions{}, &view).is_ok());
  auto spec = read_program_spec(view, /*with_weights=*/true);
  REQUIRE(spec.is_ok());
  return std::move(spec.value());
}

// Opens `spec` after `edit`; returns the status and the open error.
inline std::pair<pock_status, std::string> open_edited(ProgramSpec spec, const std::function<void(ProgramSpec&)>& edit) {
  edit(spec);
  std::vector<uint8_t> bytes;
  REQUIRE(write_blob(spec, &bytes).is_ok());
  pock_engine* engine = nullptr;
  const pock_status s = pock_engine_open_buffer(bytes.data(), bytes.size(), nullptr, &engine);
  const std::string message = pock_last_open_error();
  if (engine) pock_engine_close(engine);
  return {s, message};
}

// The first op of type `op` in the program.
inline OpSpec& find_op(ProgramSpec& spec, const std::string& op) {
  for (OpSpec& o : spec.ops) {
    if (o.op == op) return o;
  }
  FAIL("no " << op << " op in the compiled blob");
  return spec.ops[0];
}

}  // namespace pock::test
