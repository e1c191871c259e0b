#include "dsp_config.hpp"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "../hx_wire.h"

namespace pock::hexagon {
namespace {

bool is_executable(const std::string& path) {
  struct stat st {};
  return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

std::string on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  const std::string dirs = path ? path : "/usr/bin:/bin";
  size_t begin = 0;
  while (begin <= dirs.size()) {
    size_t end = dirs.find(':', begin);
    if (end == std::string::npos) end = dirs.size();
    const std::string candidate = dirs.substr(begin, end - begin) + "/" + name;
    if (end > begin && is_executable(candidate)) return candidate;
    begin = end + 1;
  }
  return "";
}

// The directory of the library this code is in.
std::string plugin_dir() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&load_dsp_config), &info) || !info.dli_fname) return ".";
  const std::string file = info.dli_fname;
  const size_t slash = file.rfind('/');
  return slash == std::string::npos ? "." : file.substr(0, slash);
}

long env_number(const char* name, long fallback, long lo, long hi) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < lo || n > hi) return fallback;
  return n;
}

}  // namespace

bool load_dsp_config(DspConfig* out, std::string* error) {
  const char* program = std::getenv("POCK_HEXAGON_DSP");
  out->program = program && *program ? program : plugin_dir() + "/pock_hexagon_dsp";
  if (!is_executable(out->program)) {
    *error = "the DSP program '" + out->program + "' is missing (build it with clang-14 and ld.lld, or set POCK_HEXAGON_DSP)";
    return false;
  }
  const char* emulator = std::getenv("POCK_HEXAGON_QEMU");
  out->emulator = emulator ? emulator : on_path("qemu-hexagon");
  if (emulator && !*emulator) {
    out->emulator.clear();  // run the program directly
  } else if (!is_executable(out->emulator)) {
    *error = "qemu-hexagon was not found on PATH (install qemu-user, or set POCK_HEXAGON_QEMU)";
    return false;
  }
  out->region_bytes = static_cast<size_t>(env_number("POCK_HEXAGON_REGION_MB", 256, 1, HX_MAX_REGION >> 20)) << 20;
  out->timeout_ms = static_cast<int>(env_number("POCK_HEXAGON_TIMEOUT_MS", 30000, 1, 3600 * 1000));
  return true;
}

}  // namespace pock::hexagon
