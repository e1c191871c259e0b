#include "pock/status.hpp"

namespace pock {

const char* code_name(Code code) { return pock_status_string(static_cast<pock_status>(code)); }

std::string Status::to_string() const {
  if (is_ok()) return "ok";
  return std::string(code_name(code_)) + ": " + message_;
}

}  // namespace pock

extern "C" const char* pock_status_string(pock_status status) {
  switch (status) {
    case POCK_OK: return "ok";
    case POCK_ERR_INVALID_ARGUMENT: return "invalid argument";
    case POCK_ERR_INVALID_BLOB: return "invalid blob";
    case POCK_ERR_UNSUPPORTED_OP: return "unsupported op";
    case POCK_ERR_MISSING_KERNEL: return "missing kernel";
    case POCK_ERR_SHAPE_MISMATCH: return "shape mismatch";
    case POCK_ERR_OUT_OF_MEMORY: return "out of memory";
    case POCK_ERR_NUMERICAL: return "numerical error";
    case POCK_ERR_IO: return "i/o error";
    case POCK_ERR_NOT_FOUND: return "not found";
    case POCK_ERR_INTERNAL: return "internal error";
    case POCK_ERR_BACKEND: return "backend error";
    case POCK_ERR_BUSY: return "engine busy";
  }
  return "unknown status";
}
