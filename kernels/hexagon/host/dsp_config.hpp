// Where the DSP side comes from and how it is run: the DSP program (next to the plugin, or
// POCK_HEXAGON_DSP), the emulator that runs it here (qemu-hexagon on PATH, or POCK_HEXAGON_QEMU;
// set empty to exec the program directly), the shared region's size and the reply deadline.
#pragma once
#include <cstddef>
#include <string>

namespace pock::hexagon {

struct DspConfig {
  std::string program;
  std::string emulator;
  size_t region_bytes = size_t{256} << 20;
  int timeout_ms = 30000;
};

// false with *error naming what is missing.
bool load_dsp_config(DspConfig* out, std::string* error);

}  // namespace pock::hexagon
