// What `pockc inspect` reports about a blob, as JSON: ops per function, FLOPs per phase, which
// parameters (and channels) train, the compiler's memory report, and each op's backend — the
// blob's preference and what the runtime binds on this machine.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/blob_contents.hpp"

namespace pock {
class EngineCore;
}

namespace pock::tools {

// The runtime's binding on this machine: a backend name per op, or why the engine did not open.
struct Binding {
  std::vector<std::string> op_backends;
  std::string error;
  int64_t workspace_bytes = -1;  // kernels' scratch once bound here; -1: not opened here
  struct Loaded {
    std::string name, library, error;  // error "": usable
  };
  std::vector<Loaded> backends;  // built-ins, then each plugin asked for
};

// How an engine opened from `path` with `backend` and `plugins` binds the blob on this machine;
// a blob that cannot open here gives the reason in `error`.
Binding bind_blob(const std::string& path, const std::string& backend, const std::vector<std::string>& plugins);
// How `engine` bound its blob.
Binding binding_of(const EngineCore& engine);

nlohmann::ordered_json inspect_report(const std::string& path, const BlobContents& blob, const Binding& binding);

}  // namespace pock::tools
