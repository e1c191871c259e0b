// The backends an engine can bind ops to, best first, ref always last.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "pock/backend.h"

namespace pock {

using BackendHandle = std::unique_ptr<pock_backend_v1, void (*)(pock_backend_v1*)>;

// `preferred` (may be empty) moves that backend to the front; unknown names are ignored here and
// reported by the engine when no kernel binds.
std::vector<BackendHandle> make_backends(const std::string& preferred);
// Names of the in-tree backends compiled into this build.
std::vector<std::string> builtin_backend_names();

}  // namespace pock
