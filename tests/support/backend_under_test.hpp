// Test support: the op-family tests check the reference kernels (the oracle) by default. Setting
// POCK_TEST_BACKEND=cpu (or another backend's name) runs the same expectations against that
// backend's kernels instead; ops it lacks fall back to ref.
#pragma once
#include <cstdlib>
#include <string>

#include "support/op_runner.hpp"

namespace pock::test {

inline std::string backend_under_test() {
  const char* env = std::getenv("POCK_TEST_BACKEND");
  return env && *env ? std::string(env) : std::string("ref");
}

inline Result<std::vector<HostTensor>> run_op_under_test(const std::string& op, const std::vector<HostTensor>& inputs,
                                                         const Attrs& attrs = {}, const std::vector<bool>& omitted = {}) {
  return run_op(op, inputs, attrs, omitted, backend_under_test());
}

}  // namespace pock::test
