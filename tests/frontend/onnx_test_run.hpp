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

// `m` imported; the test stops, showing the importer's message, when it is refused.
inline Graph import_ok(const OnnxModel& m) {
  auto g = import_model(m);
  INFO(g.status().message());
  REQUIRE(g.is_ok());
  return std::move(g.value());
}

// The importer's message for `m`, which must be refused.
inline std::string import_error(const OnnxModel& m) {
  auto g = import_model(m);
  REQUIRE_FALSE(g.is_ok());
  INFO(g.status().message());
  return g.status().message();
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

// A graph compiled for the host (inference only) and an engine on it, which reads the blob's
// bytes in place: the two live together.
struct CompiledModel {
  std::vector<uint8_t> blob;
  std::optional<Engine> engine;
};

inline CompiledModel compile_and_open(const Graph& g) {
  CompiledModel m;
  auto blob = compile(g, nullptr);
  REQUIRE(blob.is_ok());
  m.blob = std::move(blob.value());
  auto engine = Engine::open_buffer(m.blob.data(), m.blob.size());
  REQUIRE(engine.is_ok());
  m.engine.emplace(std::move(engine.value()));
  return m;
}

// A test model imported, compiled for the host and opened (held on the heap, so callers keep it by
// pointer as long as they read it).
inline std::unique_ptr<CompiledModel> open_model(const OnnxModel& m) {
  auto g = import_model(m);
  INFO(g.status().to_string());
  REQUIRE(g.is_ok());
  return std::make_unique<CompiledModel>(compile_and_open(g.value()));
}

}  // namespace pock::testing
