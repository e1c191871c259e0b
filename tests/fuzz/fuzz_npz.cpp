// Fuzz target: read an .npz (a zip of .npy arrays) from bytes, as pockc train/infer read batches.
#include <cstdint>

#include "tools/npz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)pock::tools::read_npz_bytes(data, size, "fuzz.npz");
  return 0;
}
