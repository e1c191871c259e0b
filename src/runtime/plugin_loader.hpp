// Loads a backend plugin: a shared library exporting pock_backend_init_v1 (include/pock/backend.h).
#pragma once
#include <string>

#include "runtime/backend_set.hpp"

namespace pock {

// `entry` is a path (it contains '/') or a file name looked up in the directories of
// POCK_BACKEND_PATH (':'-separated), then by the system loader. Never throws; the result's status
// names the library and what went wrong (kBackend): not found, no init symbol, init failed, an ABI
// version or struct size this runtime does not know, required members missing.
BackendEntry load_backend_plugin(const std::string& entry);

// Fills a runtime-allocated struct through `init` and checks what it filled, as for a plugin.
// Built-in backends go through the same path (builtin_backends.cpp).
Status init_backend(pock_backend_init_v1_fn init, const std::string& what, BackendHandle* out, void* library);

}  // namespace pock
