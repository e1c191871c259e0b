// Test support for training with the Hexagon plugin: the MLP of tests/train compiled and opened
// with the plugin (its ops placed on the DSP by supports_op) or without it (the CPU backends),
// stepped side by side; and the number of DSP segments a function's schedule has — runs of DSP
// ops that end where a Copy brings a tensor back to the host, or at the end of the function — which
// is how many messages a lazily batching device should send for it.
#pragma once
#include <catch2/catch.hpp>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "blob/reader.hpp"
#include "hexagon/hexagon_harness.hpp"
#include "train/mlp_model.hpp"
#include "train/sparse_models.hpp"

namespace pock::test {

struct MlpRun {
  std::vector<uint8_t> blob;
  std::optional<Engine> engine;
  ProgramSpec spec;
};

inline ProgramSpec spec_of(const std::vector<uint8_t>& blob) {
  BlobView view;
  REQUIRE(open_blob(blob.data(), blob.size(), VerifyOptions{}, &view).is_ok());
  auto spec = read_program_spec(view, false);
  REQUIRE(spec.is_ok());
  return std::move(spec.value());
}

// `model` compiled and opened with the Hexagon plugin, or (hexagon = false) for the CPU alone.
inline MlpRun open_model(const Graph& model, const Recipe& recipe, bool hexagon) {
  MlpRun r;
  CompileOptions options;
  EngineConfig config;
  if (hexagon) options.backend_plugins = config.backend_plugins = {kHexagonPlugin};
  auto blob = compile(model, &recipe, options);
  INFO(blob.status().message());
  REQUIRE(blob.is_ok());
  r.blob = std::move(blob.value());
  r.spec = spec_of(r.blob);
  auto engine = Engine::open_buffer(r.blob.data(), r.blob.size(), config);
  INFO(engine.status().message());
  REQUIRE(engine.is_ok());
  r.engine.emplace(std::move(engine.value()));
  return r;
}

inline MlpRun open_mlp(const Recipe& recipe, bool hexagon, const MlpOptions& mlp = {}) {
  return open_model(build_mlp(mlp), recipe, hexagon);
}

inline Result<float> try_step(Engine& e, int index) {
  POCK_RETURN_IF_ERROR(feed(e, make_batch(index)));
  return e.train_step();
}

inline float step(Engine& e, int index) {
  auto loss = try_step(e, index);
  INFO(loss.status().message());
  REQUIRE(loss.is_ok());
  return *loss;
}

inline std::vector<std::string> trainable_names(const ProgramSpec& spec) {
  std::vector<std::string> out;
  for (const TensorSpec& t : spec.tensors) {
    if (t.trainable) out.push_back(t.name);
  }
  return out;
}

inline std::vector<float> parameter(Engine& e, const std::string& name) {
  auto v = read_floats(e, name, true);
  INFO(name << ": " << v.status().message());
  REQUIRE(v.is_ok());
  return std::move(v.value());
}

inline std::vector<std::vector<float>> parameters(Engine& e, const std::vector<std::string>& names) {
  std::vector<std::vector<float>> out;
  for (const std::string& n : names) out.push_back(parameter(e, n));
  return out;
}

// max |a - b| / max(1, |b|)
inline double relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - b[i]) / std::max(1.0, std::fabs(static_cast<double>(b[i]))));
  }
  return worst;
}

// Ops of `function` the blob places on `backend` (Copy ops aside), and all its kernels.
inline std::pair<int, int> placed_on(const ProgramSpec& spec, const std::string& function, const std::string& backend) {
  int on = 0, all = 0;
  for (const FunctionSpec& f : spec.functions) {
    if (f.name != function) continue;
    for (uint32_t i : f.ops) {
      if (spec.ops[i].op == "Copy") continue;
      ++all;
      on += spec.ops[i].backend == backend;
    }
  }
  return {on, all};
}

// How many ops of type `op` the train function places on the DSP.
inline int train_ops_on_dsp(const ProgramSpec& spec, const std::string& op) {
  int n = 0;
  for (const FunctionSpec& f : spec.functions) {
    if (f.name != "train") continue;
    for (uint32_t i : f.ops) n += spec.ops[i].op == op && spec.ops[i].backend == "hexagon";
  }
  return n;
}

// One training step on the inputs set before; its loss.
inline float checked_train_step(Engine& e) {
  auto loss = e.train_step();
  INFO(loss.status().message());
  REQUIRE(loss.is_ok());
  return *loss;
}

inline int64_t dsp_segments(const ProgramSpec& spec, const std::string& function) {
  int64_t segments = 0;
  bool open = false;
  for (const FunctionSpec& f : spec.functions) {
    if (f.name != function) continue;
    for (uint32_t i : f.ops) {
      const OpSpec& op = spec.ops[i];
      if (op.op != "Copy") {
        open = open || op.backend == "hexagon";
        continue;
      }
      const bool to_host = spec.tensors[static_cast<size_t>(op.outputs[0])].space == 0 &&
                           spec.tensors[static_cast<size_t>(op.inputs[0])].space != 0;
      if (to_host && open) {
        ++segments;
        open = false;
      }
    }
  }
  return segments + (open ? 1 : 0);
}

}  // namespace pock::test
