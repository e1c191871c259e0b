// Test support: an f32 parameter of an open engine, read through the public API.
#pragma once
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
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

// Parameter `param` after one train step of the blob on `backend`, with the f32 input `input` = x.
inline std::vector<float> parameter_after_one_step(const void* blob, size_t size, const char* backend,
                                                   const std::string& input, const std::vector<float>& x,
                                                   const std::string& param) {
  Engine::Options o;
  o.backend = backend;
  auto engine = Engine::open_buffer(blob, size, o);
  REQUIRE(engine.is_ok());
  REQUIRE(engine->set_input(input, x.data(), x.size() * sizeof(float)).is_ok());
  REQUIRE(engine->train_step().is_ok());
  return parameter_values(*engine, param);
}

// One train step on cpu and one on ref from input "x": `param` moves away from `initial` (the
// step trains) and cpu's ends within `margin` of ref's.
inline void check_cpu_step_follows_ref(const void* blob, size_t size, const std::vector<float>& x,
                                       const std::string& param, const std::vector<float>& initial, double margin) {
  const std::vector<float> cpu = parameter_after_one_step(blob, size, "cpu", "x", x, param);
  const std::vector<float> ref = parameter_after_one_step(blob, size, "ref", "x", x, param);
  REQUIRE(cpu.size() == initial.size());
  REQUIRE(ref.size() == initial.size());
  double moved = 0.0;
  for (size_t i = 0; i < initial.size(); ++i) {
    moved = std::max(moved, std::fabs(double{ref[i]} - initial[i]));
    CHECK(cpu[i] == Approx(ref[i]).margin(margin));
  }
  CHECK(moved > 1e-3);
}

}  // namespace pock::test
