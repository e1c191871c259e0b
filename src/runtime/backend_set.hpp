// The backends one engine (or one compilation) can bind ops to: the built-in ones, registered
// through one generated list (builtin_backends.cpp), then the plugins it was asked to load
// (plugin_loader.cpp). Every one of them is a pock_backend_v1; a plugin that failed to load stays
// in the list as a report with no backend, so that callers can say which library failed and why.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "pock/backend.h"
#include "pock/status.hpp"

namespace pock {

// Owns a filled pock_backend_v1: calls its destroy, then unloads its library (plugins).
using BackendHandle = std::unique_ptr<pock_backend_v1, void (*)(pock_backend_v1*)>;

struct BackendEntry {
  std::string name;     // the backend's name; for a failed plugin, the entry that was asked for
  std::string library;  // resolved plugin path; "" for a built-in backend
  Status status;        // ok: `backend` is usable
  BackendHandle backend{nullptr, nullptr};
};

// Whether a backend keeps tensors in a memory space of its own (alloc, free and copy all set).
bool owns_memory(const pock_backend_v1& backend);

class BackendSet {
 public:
  // Built-ins first (best first, ref last), then `plugins` in order. Never fails as a whole: a
  // plugin that cannot be loaded becomes an entry with an error status.
  static BackendSet open(const std::vector<std::string>& plugins);

  const std::vector<BackendEntry>& entries() const { return entries_; }
  // The usable backends in binding order: plugins first (an app loads one to use it), then the
  // built-ins; ties in supports_op's score go to the earlier one.
  const std::vector<pock_backend_v1*>& usable() const { return usable_; }
  pock_backend_v1* find(const std::string& name) const;  // nullptr: absent or not usable
  // What the compiler places ops by: the usable backends, less the built-in ones with memory of
  // their own (cuda) unless `requested` names them. A plugin is loaded because it is wanted; a
  // built-in GPU backend is merely compiled in, and a host compile must not move to it unasked.
  std::vector<pock_backend_v1*> placeable(const std::string& requested) const;

  // A backend that failed on its device: no longer usable for binding, its entry says why. It
  // stays loaded, since ops and buffers it handed out are still to be released through it.
  void mark_failed(const pock_backend_v1* backend, const Status& why);

 private:
  std::vector<BackendEntry> entries_;
  std::vector<pock_backend_v1*> usable_;
};

// Names of the built-in backends of this build, best first.
std::vector<std::string> builtin_backend_names();

}  // namespace pock
