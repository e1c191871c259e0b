// Fuzz target: a blob that verifies is run, one training step (or one inference for an
// inference-only blob) and an evaluation, on inputs of zeros. The verifier's promise is that
// anything it accepts runs without reading or writing out of bounds.
#include <cstdint>
#include <vector>

#include "fuzz_support.hpp"
#include "pock/pock.h"
#include "support/blob_inputs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  pock::fuzz::repair_blob_checksums(bytes);
  pock_engine_options options;
  pock_engine_options_init(&options);
  options.num_threads = 1;
  pock_engine* engine = nullptr;
  if (pock_engine_open_buffer(bytes.data(), bytes.size(), &options, &engine) != POCK_OK) return 0;
  pock::test::set_inputs_to_zero(engine, bytes);
  float loss = 0;
  if (pock_engine_can_train(engine)) {
    pock_engine_train_step(engine, &loss);
    pock_engine_eval_step(engine, &loss);
  }
  pock_engine_infer(engine);
  pock_engine_close(engine);
  return 0;
}
