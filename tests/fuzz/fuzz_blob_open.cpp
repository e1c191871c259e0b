// Fuzz target: open (verify + bind) a blob whose checksums are made valid, as a forger would make
// them. Any crash, sanitizer report or leak is a finding; a clean rejection is not.
#include <cstdint>
#include <vector>

#include "fuzz_support.hpp"
#include "pock/pock.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  pock::fuzz::repair_blob_checksums(bytes);
  pock_engine* engine = nullptr;
  if (pock_engine_open_buffer(bytes.data(), bytes.size(), nullptr, &engine) == POCK_OK) pock_engine_close(engine);
  return 0;
}
