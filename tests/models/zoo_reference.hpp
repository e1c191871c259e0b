// Test support for the model-zoo parity test: runs make_reference.py (PyTorch under Debian's
// /usr/bin/python3) and reads the tensor files it writes (format described in the script).
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pock/compiler/models.hpp"

namespace pock::test {

struct RefTensor {
  uint32_t dtype = 0;  // 0 f32, 1 i64, 2 f64 (the script's codes)
  Shape shape;
  std::vector<uint8_t> bytes;

  template <typename T>
  std::vector<T> as() const {
    std::vector<T> out(bytes.size() / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
    return out;
  }
};
using RefTensors = std::map<std::string, RefTensor>;

inline Result<RefTensors> read_ref_tensors(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  auto bad = [&](const std::string& why) { return Status(Code::kIo, path.string() + ": " + why); };
  if (!in) return bad("cannot open");
  auto read = [&](void* dst, size_t n) {
    return static_cast<bool>(in.read(static_cast<char*>(dst), static_cast<std::streamsize>(n)));
  };
  char magic[8];
  uint32_t count = 0;
  if (!read(magic, 8) || std::memcmp(magic, "PKZOO1\n\0", 8) != 0 || !read(&count, 4)) return bad("bad header");
  RefTensors tensors;
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t name_len = 0, rank = 0;
    RefTensor t;
    if (!read(&name_len, 4) || name_len > 4096) return bad("bad name length");
    std::string name(name_len, '\0');
    if (!read(name.data(), name_len) || !read(&t.dtype, 4) || !read(&rank, 4) || t.dtype > 2 || rank > 8) {
      return bad("bad record for tensor " + std::to_string(i));
    }
    t.shape.resize(rank);
    if (rank && !read(t.shape.data(), rank * sizeof(int64_t))) return bad("bad shape of " + name);
    t.bytes.resize(static_cast<size_t>(numel(t.shape)) * (t.dtype == 0 ? 4 : 8));
    if (!t.bytes.empty() && !read(t.bytes.data(), t.bytes.size())) return bad("truncated data of " + name);
    tensors.emplace(std::move(name), std::move(t));
  }
  return tensors;
}

// The f32 tensors of a reference weights file, as load_weights() takes them.
inline models::WeightMap to_weight_map(const RefTensors& tensors) {
  models::WeightMap weights;
  for (const auto& [name, t] : tensors) {
    if (t.dtype == 0) weights[name] = t.as<float>();
  }
  return weights;
}

// Outcome of running the reference script once for every model of `spec`.
struct ReferenceRun {
  bool skipped = false;  // PyTorch / torchvision missing: nothing to compare against
  std::string error;     // the script failed (its log)
  std::filesystem::path dir;
};

// Writes `spec` and runs make_reference.py (in tests/models, POCK_TESTS_DIR from the build) into a
// per-process temporary directory.
inline ReferenceRun run_reference_script(const nlohmann::json& spec) {
  ReferenceRun run;
  const std::filesystem::path script = std::filesystem::path(POCK_TESTS_DIR) / "models" / "make_reference.py";
  if (!std::filesystem::exists("/usr/bin/python3")) {
    run.skipped = true;
    return run;
  }
  run.dir = std::filesystem::temp_directory_path() / ("pock_zoo_ref_" + std::to_string(::getpid()));
  std::filesystem::create_directories(run.dir);
  const std::filesystem::path spec_path = run.dir / "spec.json", log_path = run.dir / "log.txt";
  std::ofstream(spec_path) << spec.dump(1);
  const std::string command = "/usr/bin/python3 '" + script.string() + "' '" + spec_path.string() + "' '" +
                              run.dir.string() + "' > '" + log_path.string() + "' 2>&1";
  const int status = std::system(command.c_str());
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 77) {
    run.skipped = true;
  } else if (code != 0) {
    std::ifstream log(log_path);
    run.error = "make_reference.py exited with " + std::to_string(code) + ":\n" +
                std::string(std::istreambuf_iterator<char>(log), std::istreambuf_iterator<char>());
  }
  return run;
}

}  // namespace pock::test
