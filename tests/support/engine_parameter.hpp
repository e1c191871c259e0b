// Test support: an f32 parameter of an open engine, read through the public API.
#pragma once
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "pock/engine.hpp"

namespace pock::test {

inline std::vector<float> parameter_values(Engine& e, const std::string& name) {
  auto info = e.info(name);
  REQUIRE(info.is_ok());
  std::vector<float> v(info->nbytes / sizeof(float));
  REQUIRE(e.get_parameter(name, v.data(), info->nbytes).is_ok());
  return v;
}

}  // namespace pock::test
