#include "runtime/plugin_loader.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <new>

namespace pock {
namespace {

// The struct the runtime hands to an init function, with the library that filled it: `api` is
// the first member, so the BackendHandle's pointer converts back to its owner.
struct OwnedBackend {
  pock_backend_v1 api;
  void* library;
};

void release_backend(pock_backend_v1* backend) {
  auto* owned = reinterpret_cast<OwnedBackend*>(backend);
  if (backend->destroy) backend->destroy(backend->context);
  void* library = owned->library;
  delete owned;
  if (library) dlclose(library);
}

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// A bare name found in a POCK_BACKEND_PATH directory becomes that path; otherwise the name goes
// to dlopen unchanged, which searches the system's library path.
std::string resolve(const std::string& entry) {
  if (entry.find('/') != std::string::npos) return entry;
  const char* search = std::getenv("POCK_BACKEND_PATH");
  if (!search) return entry;
  const std::string dirs(search);
  size_t begin = 0;
  while (begin <= dirs.size()) {
    size_t end = dirs.find(':', begin);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = dirs.substr(begin, end - begin);
    if (!dir.empty() && is_file(dir + "/" + entry)) return dir + "/" + entry;
    begin = end + 1;
  }
  return entry;
}

Status check_filled(const pock_backend_v1& b, const std::string& what) {
  auto fail = [&](const std::string& why) { return Status(Code::kBackend, what + ": " + why); };
  if (b.abi_version != POCK_BACKEND_ABI_VERSION) {
    return fail("filled the struct for backend ABI version " + std::to_string(b.abi_version) +
                "; this runtime implements version " + std::to_string(POCK_BACKEND_ABI_VERSION));
  }
  if (b.struct_size < sizeof(pock_backend_v1)) {
    return fail("struct_size " + std::to_string(b.struct_size) + " is smaller than version 1's " +
                std::to_string(sizeof(pock_backend_v1)));
  }
  if (!b.name || !*b.name) return fail("has no name");
  if (!b.supports_op || !b.prepare_op || !b.execute_op || !b.last_error) {
    return fail("leaves a required member NULL (supports_op, prepare_op, execute_op and last_error are required)");
  }
  const int memory_members = (b.alloc != nullptr) + (b.free != nullptr) + (b.copy != nullptr);
  if (memory_members != 0 && memory_members != 3) {
    return fail("sets only some of alloc, free and copy: a backend with memory of its own needs all three");
  }
  return Status::ok();
}

}  // namespace

Status init_backend(pock_backend_init_v1_fn init, const std::string& what, BackendHandle* out, void* library) {
  auto* owned = new (std::nothrow) OwnedBackend{};
  if (!owned) return Status(Code::kOutOfMemory, what + ": out of memory");
  owned->api.abi_version = POCK_BACKEND_ABI_VERSION;
  owned->api.struct_size = sizeof(pock_backend_v1);
  pock_status s = POCK_ERR_INTERNAL;
  try {
    s = init(&owned->api);
  } catch (...) {  // a C++ plugin that breaks the no-exceptions rule must not take the app down
    delete owned;
    return Status(Code::kBackend, what + ": pock_backend_init_v1 threw an exception");
  }
  if (s != POCK_OK) {
    delete owned;  // a failed init owns nothing the runtime could release
    return Status(Code::kBackend, what + ": pock_backend_init_v1 failed (" +
                                      pock_status_string(s) + ")");
  }
  Status filled = check_filled(owned->api, what);
  if (!filled.is_ok()) {
    if (owned->api.destroy) owned->api.destroy(owned->api.context);
    delete owned;
    return filled;
  }
  owned->library = library;
  *out = BackendHandle(&owned->api, release_backend);
  return Status::ok();
}

BackendEntry load_backend_plugin(const std::string& entry) {
  BackendEntry e;
  e.name = entry;
  if (entry.empty()) {  // dlopen("") would open the program itself and bind any init symbol it exports
    e.status = Status(Code::kBackend, "backend plugin entry is empty: name a library or a path");
    return e;
  }
  e.library = resolve(entry);
  dlerror();
  void* library = dlopen(e.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* why = dlerror();
    e.status = Status(Code::kBackend, "backend plugin '" + entry + "' cannot be loaded: " + (why ? why : "dlopen failed") +
                                          " (POCK_BACKEND_PATH is searched for bare file names)");
    return e;
  }
  auto init = reinterpret_cast<pock_backend_init_v1_fn>(dlsym(library, POCK_BACKEND_INIT_SYMBOL));
  if (!init) {
    dlclose(library);
    e.status = Status(Code::kBackend, "backend plugin '" + e.library + "' does not export " POCK_BACKEND_INIT_SYMBOL);
    return e;
  }
  e.status = init_backend(init, "backend plugin '" + e.library + "'", &e.backend, library);
  if (!e.status.is_ok()) {
    dlclose(library);
    return e;
  }
  e.name = e.backend->name;
  return e;
}

}  // namespace pock
