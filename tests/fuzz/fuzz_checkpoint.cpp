// Fuzz target: load a checkpoint (its CRC made valid) into an engine of the fuzz MLP. A rejected
// checkpoint must leave every parameter and the step exactly as they were; an accepted one must
// give a non-negative step and an engine that still trains.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "pock/pock.h"

namespace {

pock_engine* g_engine = nullptr;
std::vector<uint8_t> g_blob;
std::string g_path;
const char* const kParameters[] = {"embed.weight", "norm.weight", "fc1.weight", "fc2.bias"};

std::vector<uint8_t> parameter_bytes() {
  std::vector<uint8_t> all;
  for (const char* name : kParameters) {
    pock_tensor_info info;
    if (pock_engine_tensor_info(g_engine, name, &info) != POCK_OK) std::abort();
    std::vector<uint8_t> v(info.nbytes);
    if (pock_engine_get_parameter(g_engine, name, v.data(), v.size()) != POCK_OK) std::abort();
    all.insert(all.end(), v.begin(), v.end());
  }
  return all;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_blob = pock::fuzz::mlp_blob();
  if (pock_engine_open_buffer(g_blob.data(), g_blob.size(), nullptr, &g_engine) != POCK_OK) std::abort();
  char dir[] = "/tmp/pock-fuzz-ckpt-XXXXXX";
  if (!mkdtemp(dir)) std::abort();
  g_path = std::string(dir) + "/checkpoint";
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  pock::fuzz::repair_checkpoint_checksum(bytes);
  FILE* f = std::fopen(g_path.c_str(), "wb");
  if (!f) std::abort();
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  const std::vector<uint8_t> before = parameter_bytes();
  const int64_t step_before = pock_engine_step(g_engine);
  if (pock_engine_load_checkpoint(g_engine, g_path.c_str()) != POCK_OK) {
    if (parameter_bytes() != before || pock_engine_step(g_engine) != step_before) {
      std::fprintf(stderr, "a rejected checkpoint changed the engine\n");
      std::abort();
    }
    return 0;
  }
  if (pock_engine_step(g_engine) < 0) {
    std::fprintf(stderr, "a checkpoint set a negative step\n");
    std::abort();
  }
  std::vector<uint8_t> tokens(2 * 3 * 8, 0), labels(2 * 8, 0);
  pock_engine_set_input(g_engine, "tokens", tokens.data(), tokens.size());
  pock_engine_set_input(g_engine, "label", labels.data(), labels.size());
  float loss = 0;
  pock_engine_train_step(g_engine, &loss);  // NaN weights from a checkpoint fail cleanly
  return 0;
}
