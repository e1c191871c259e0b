// A pock::Status on its way to Python: thrown by the bindings, turned by module.cpp's translator
// into the pockengine.Error subclass of its code (pockengine/_errors.py), message unchanged.
#pragma once
#include <exception>
#include <string>
#include <utility>

#include "pock/status.hpp"

namespace pock::python {

class StatusError : public std::exception {
 public:
  explicit StatusError(Status status) : status_(std::move(status)), what_(status_.to_string()) {}
  const Status& status() const { return status_; }
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  Status status_;
  std::string what_;
};

inline void throw_if_error(const Status& status) {
  if (!status.is_ok()) throw StatusError(status);
}

template <typename T>
T value_or_throw(Result<T> result) {
  if (!result.is_ok()) throw StatusError(result.status());
  return std::move(result.value());
}

}  // namespace pock::python
