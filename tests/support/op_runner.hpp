// Test support: runs one op end to end (graph -> compile -> blob -> engine -> infer) on host
// data, so op tests exercise schema, blob, binding and kernel together.
#pragma once
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "pock/compiler/compiler.hpp"
#include "pock/engine.hpp"

namespace pock::test {

struct HostTensor {
  DType dtype = DType::kF32;
  Shape shape;
  std::vector<uint8_t> bytes;

  static HostTensor f32(Shape shape, const std::vector<float>& values) { return make(DType::kF32, std::move(shape), values); }
  static HostTensor i64(Shape shape, const std::vector<int64_t>& values) { return make(DType::kI64, std::move(shape), values); }
  static HostTensor i32(Shape shape, const std::vector<int32_t>& values) { return make(DType::kI32, std::move(shape), values); }
  static HostTensor boolean(Shape shape, const std::vector<uint8_t>& values) { return make(DType::kBool, std::move(shape), values); }
  template <typename T>
  static HostTensor make(DType dtype, Shape shape, const std::vector<T>& values) {
    HostTensor t;
    t.dtype = dtype;
    t.shape = std::move(shape);
    t.bytes.resize(values.size() * sizeof(T));
    if (!values.empty()) std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
    return t;
  }
  template <typename T>
  std::vector<T> values() const {
    std::vector<T> out(bytes.size() / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
  }
  std::vector<float> f32() const { return values<float>(); }
};

// Uniform random floats in [lo, hi), deterministic per seed.
inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

// Builds a graph with one node of `op` over `inputs` (each a graph input; an input with an empty
// byte vector and rank -1... is not supported: pass kNoTensor via `omitted`), compiles it without
// a recipe, runs inference and returns every output. `backend` ("ref", "cpu"; empty: the engine's
// choice) picks whose kernel runs, so a family's tests can check the reference oracle itself.
inline Result<std::vector<HostTensor>> run_op(const std::string& op, const std::vector<HostTensor>& inputs,
                                              const Attrs& attrs = {}, const std::vector<bool>& omitted = {},
                                              const std::string& backend = {}) {
  Graph g;
  std::vector<TensorId> ids;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i < omitted.size() && omitted[i]) {
      ids.push_back(kNoTensor);
      continue;
    }
    ids.push_back(g.add_input("in" + std::to_string(i), inputs[i].dtype, inputs[i].shape));
  }
  auto outs = g.add_node(op, ids, attrs, "node");
  if (!outs.is_ok()) return outs.status();
  for (size_t i = 0; i < outs->size(); ++i) POCK_RETURN_IF_ERROR(g.mark_output((*outs)[i], "out" + std::to_string(i)));
  auto blob = compile(g, nullptr);
  if (!blob.is_ok()) return blob.status();
  Engine::Options options;
  options.backend = backend;
  auto engine = Engine::open_buffer(blob->data(), blob->size(), options);
  if (!engine.is_ok()) return engine.status();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (ids[i] == kNoTensor) continue;
    POCK_RETURN_IF_ERROR(engine->set_input("in" + std::to_string(i), inputs[i].bytes.data(), inputs[i].bytes.size()));
  }
  POCK_RETURN_IF_ERROR(engine->infer());
  std::vector<HostTensor> results;
  for (size_t i = 0; i < outs->size(); ++i) {
    const TensorDesc& d = g.tensor((*outs)[i]);
    HostTensor t;
    t.dtype = d.dtype;
    t.shape = d.shape;
    t.bytes.resize(d.nbytes());
    POCK_RETURN_IF_ERROR(engine->get_output("out" + std::to_string(i), t.bytes.data(), t.bytes.size()));
    results.push_back(std::move(t));
  }
  return results;
}

}  // namespace pock::test
