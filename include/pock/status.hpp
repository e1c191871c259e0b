// Errors as values: a code grouped by cause plus a message naming the tensor, op or offset at fault.
#pragma once
#include <string>
#include <utility>
#include <variant>

#include "pock/pock.h"

namespace pock {

// Mirrors pock_status in the C API so the two layers never translate codes.
enum class Code : int {
  kOk = POCK_OK,
  kInvalidArgument = POCK_ERR_INVALID_ARGUMENT,
  kInvalidBlob = POCK_ERR_INVALID_BLOB,
  kUnsupportedOp = POCK_ERR_UNSUPPORTED_OP,
  kMissingKernel = POCK_ERR_MISSING_KERNEL,
  kShapeMismatch = POCK_ERR_SHAPE_MISMATCH,
  kOutOfMemory = POCK_ERR_OUT_OF_MEMORY,
  kNumerical = POCK_ERR_NUMERICAL,
  kIo = POCK_ERR_IO,
  kNotFound = POCK_ERR_NOT_FOUND,
  kInternal = POCK_ERR_INTERNAL,
  kBackend = POCK_ERR_BACKEND,
  kBusy = POCK_ERR_BUSY,
};

const char* code_name(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status ok() { return Status(); }
  bool is_ok() const { return code_ == Code::kOk; }
  explicit operator bool() const { return is_ok(); }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid blob: tensor 'x' offset 12 past end" — code name first, for logs.
  std::string to_string() const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}            // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}     // NOLINT: implicit by design
  bool is_ok() const { return v_.index() == 0; }
  explicit operator bool() const { return is_ok(); }
  T& value() & { return std::get<0>(v_); }
  // By value: `for (x : f().value())` must not dangle once the temporary Result dies.
  T value() && { return std::get<0>(std::move(v_)); }
  const T& value() const& { return std::get<0>(v_); }
  T* operator->() { return &std::get<0>(v_); }
  const T* operator->() const { return &std::get<0>(v_); }
  T& operator*() { return std::get<0>(v_); }
  Status status() const { return is_ok() ? Status() : std::get<1>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace pock

#define POCK_RETURN_IF_ERROR(expr)          \
  do {                                      \
    ::pock::Status pock_status_ = (expr);   \
    if (!pock_status_.is_ok()) return pock_status_; \
  } while (0)

#define POCK_CONCAT_INNER_(a, b) a##b
#define POCK_CONCAT_(a, b) POCK_CONCAT_INNER_(a, b)
#define POCK_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.is_ok()) return tmp.status();            \
  lhs = std::move(tmp.value())
#define POCK_ASSIGN_OR_RETURN(lhs, expr) \
  POCK_ASSIGN_OR_RETURN_IMPL_(POCK_CONCAT_(pock_result_, __LINE__), lhs, expr)
