// Imports an in-memory OnnxModel and runs a compiled graph's infer: what the ONNX frontend tests
// do around the model they build.
#pragma once
#include <catch2/catch.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontend/onnx_test_model.hpp"
#include "pock/compiler/compiler.hpp"
#include "pock/compiler/onnx.hpp"
#include "pock/engine.hpp"

namespace pock::testing {

inline Result<Graph> import_model(const OnnxModel& m, const OnnxImportOptions& options = {}) {
  const std::string bytes = m.bytes();
  return import_onnx_bytes(bytes.data(), bytes.size(), options);
}

// The op of every node of `g`, in order: what an import test expects a model to become.
inline std::vector<std::string> ops_of(const Graph& g) {
  std::vector<std::string> ops;
  for (const Node& n : g.nodes()) ops.push_back(n.op);
  return ops;
}

// Compiles `g` for the host, sets one float input, runs infer and reads `output` as T.
template <typename T = float>
std::vector<T> infer_one(const Graph& g, const std::string& input, const std::vector<float>& x, const std::string& output) {
  auto blob = compile(g, nullptr);
  REQUIRE(blob.is_ok());
  auto engine = Engine::open_buffer(blob->data(), blob->size());
  REQUIRE(engine.is_ok());
  REQUIRE(engine->set_input(input, x).is_ok());
  REQUIRE(engine->infer().is_ok());
  auto y = engine->template output<T>(output);
  REQUIRE(y.is_ok());
  return y.value();
}

// A test model imported, compiled for the host and opened; the blob lives as long as the engine
// that reads it.
struct OpenModel {
  std::vector<uint8_t> blob;
  std::optional<Engine> engine;
};

inline std::unique_ptr<OpenModel> open_model(const OnnxModel& m) {
  auto g = import_model(m);
  INFO(g.status().to_string());
  REQUIRE(g.is_ok());
  auto blob = compile(g.value(), nullptr);
  INFO(blob.status().to_string());
  REQUIRE(blob.is_ok());
  auto open = std::make_unique<OpenModel>();
  open->blob = std::move(blob.value());
  auto engine = Engine::open_buffer(open->blob.data(), open->blob.size());
  REQUIRE(engine.is_ok());
  open->engine.emplace(std::move(engine.value()));
  return open;
}

}  // namespace pock::testing
