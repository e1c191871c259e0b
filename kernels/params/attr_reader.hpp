// Reads an op's attributes by name, with their types checked: what the per-family parsers
// (kernels/params/<family>.cpp) use once, at prepare. Kernels never read attributes themselves.
#pragma once
#include <string>
#include <string_view>

#include "ir/activation.hpp"
#include "pock/backend.h"
#include "pock/status.hpp"

namespace pock::params {

class AttrReader {
 public:
  explicit AttrReader(const pock_op_desc& op) : op_(op) {}
  // Each returns `fallback` when the attribute is absent; a value of the wrong kind is an error,
  // kept (the first one) for status().
  int64_t integer(std::string_view name, int64_t fallback);
  double real(std::string_view name, double fallback);  // an integer value is taken as a real
  std::string_view text(std::string_view name, std::string_view fallback);
  // An axis of a tensor of rank `rank`, negative ones counted from the end; out of range is an error.
  int32_t axis(std::string_view name, int32_t rank, int64_t fallback);
  // The fused epilogue "activation" of Conv2d, Linear and the BatchNorms (ir/activation.hpp).
  Activation activation();
  // An error naming the op and the attribute, also kept for status().
  void invalid(std::string_view name, const std::string& why);
  Status status() const { return status_; }

 private:
  const pock_attr* find(std::string_view name) const;
  void wrong_kind(const pock_attr& a, const char* wanted);

  const pock_op_desc& op_;
  Status status_;
};

}  // namespace pock::params
