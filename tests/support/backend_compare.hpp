// Test support: checks a fast backend against the reference kernels. Each case builds one op,
// compiles it, opens the same blob on an engine that prefers the backend under test and on one
// that prefers "ref", checks that the op was bound where expected, runs both and compares every
// output — and every input the op updates in place (optimizer state, running statistics).
//
//   check_against_ref("cpu", {"ReluGrad", {input({4, 9}, 1), input({4, 9}, 2)}});
//
// Tolerance: |got - ref| <= tolerance * (|ref| + 1), 1e-4 unless the case says otherwise. Fast
// kernels compute in f32 with another order of operations than ref's double sums, and use
// polynomial exp/erf accurate to a few ulp: on unit-scale inputs an error of about 1e-6. Any
// indexing, padding or broadcasting mistake is O(0.1). The "+1" keeps results that cancel to near
// zero from demanding a relative precision f32 sums cannot give.
#pragma once
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "pock/compiler/compiler.hpp"
#include "program_generated.h"
#include "runtime/engine_core.hpp"

namespace pock::test {

struct Operand {
  DType dtype = DType::kF32;
  Shape shape;
  std::vector<float> values;  // f32 operands
  std::vector<int64_t> ints;  // i64 operands (labels, the step counter)
  std::vector<uint8_t> bytes; // u8 operands (masks), i8 ones (int8 weights) and bf16 ones
  bool frozen = false;        // a model parameter (constant in the blob) rather than a graph input
  bool omitted = false;       // an absent optional input

  bool in_bytes() const { return dtype == DType::kU8 || dtype == DType::kI8 || dtype == DType::kBF16; }
  size_t nbytes() const {
    if (in_bytes()) return bytes.size();
    return dtype == DType::kI64 ? ints.size() * sizeof(int64_t) : values.size() * sizeof(float);
  }
  const void* data() const {
    if (in_bytes()) return bytes.data();
    return dtype == DType::kI64 ? static_cast<const void*>(ints.data()) : values.data();
  }
};

struct OpCase {
  std::string op;
  std::vector<Operand> inputs;
  Attrs attrs;
  std::vector<int> updated_inputs;  // inputs the op writes in place, compared after the run
  double tolerance = 1e-4;
};

inline std::vector<float> uniform(const Shape& shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(numel(shape)));
  for (float& x : v) x = dist(gen);
  return v;
}

inline Operand input(Shape shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::vector<float> v = uniform(shape, seed, lo, hi);
  Operand o;
  o.shape = std::move(shape);
  o.values = std::move(v);
  return o;
}

inline Operand values(Shape shape, std::vector<float> v) {
  Operand o;
  o.shape = std::move(shape);
  o.values = std::move(v);
  return o;
}

inline Operand int64s(Shape shape, std::vector<int64_t> v) {
  Operand o;
  o.dtype = DType::kI64;
  o.shape = std::move(shape);
  o.ints = std::move(v);
  return o;
}

inline Operand u8s(Shape shape, std::vector<uint8_t> v) {
  Operand o;
  o.dtype = DType::kU8;
  o.shape = std::move(shape);
  o.bytes = std::move(v);
  return o;
}

// Random int8 values in [-127, 127] (int8 weights).
inline Operand int8s(Shape shape, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> d(-127, 127);
  Operand o;
  o.dtype = DType::kI8;
  o.bytes.resize(static_cast<size_t>(numel(shape)));
  for (uint8_t& b : o.bytes) b = static_cast<uint8_t>(static_cast<int8_t>(d(gen)));
  o.shape = std::move(shape);
  return o;
}

// Random bf16 values (uniform as input()'s, then rounded): `values` holds them as f32, `bytes`
// their bf16 bit patterns, which the op reads.
inline Operand bf16s(Shape shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  Operand o = input(std::move(shape), seed, lo, hi);
  o.dtype = DType::kBF16;
  for (float& v : o.values) {
    uint32_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    bits = (bits + 0x7fffu + ((bits >> 16) & 1u)) & 0xffff0000u;  // nearest even (no NaN here)
    std::memcpy(&v, &bits, sizeof v);
    o.bytes.push_back(static_cast<uint8_t>(bits >> 16));
    o.bytes.push_back(static_cast<uint8_t>(bits >> 24));
  }
  return o;
}

inline Operand frozen(Shape shape, uint32_t seed) {
  Operand o = input(std::move(shape), seed);
  o.frozen = true;
  return o;
}

// A constant of raw bytes (a block-quantized weight), bound at prepare as a frozen weight is.
inline Operand frozen_u8s(Shape shape, std::vector<uint8_t> v) {
  Operand o = u8s(std::move(shape), std::move(v));
  o.frozen = true;
  return o;
}

inline Operand omitted() {
  Operand o;
  o.omitted = true;
  return o;
}

inline int64_t random_dim(std::mt19937& gen, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(gen);
}

// One compiled case, open on one backend.
class BoundCase {
 public:
  static BoundCase open(const OpCase& c, const std::string& backend, int num_threads = 0) {
    BoundCase b;
    Graph g;
    std::vector<TensorId> ids;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      const Operand& in = c.inputs[i];
      const std::string name = "in" + std::to_string(i);
      if (in.omitted)
        ids.push_back(kNoTensor);
      else if (in.frozen && in.dtype != DType::kF32)
        ids.push_back(g.add_constant(name, in.dtype, in.shape, in.bytes));
      else if (in.frozen)
        ids.push_back(g.add_parameter_f32(name, in.shape, in.values));
      else
        ids.push_back(g.add_input(name, in.dtype, in.shape));
    }
    auto outs = g.add_node(c.op, ids, c.attrs, "node");
    INFO(outs.status().to_string());
    REQUIRE(outs.is_ok());
    for (size_t i = 0; i < outs->size(); ++i) {
      REQUIRE(g.mark_output((*outs)[i], "out" + std::to_string(i)).is_ok());
      b.output_sizes_.push_back(static_cast<size_t>(numel(g.tensor((*outs)[i]).shape)));
      b.output_u8_.push_back(g.tensor((*outs)[i]).dtype == DType::kU8 || g.tensor((*outs)[i]).dtype == DType::kBool);
      b.output_i64_.push_back(g.tensor((*outs)[i]).dtype == DType::kI64);
    }
    if (outs->empty()) {
      // An op that only updates its inputs (an optimizer step): a model needs an output, so an
      // unrelated one is added; the results are the updated inputs.
      auto anchor = g.add_node("Identity", {g.add_input("anchor", DType::kF32, {1})}, {}, "anchor");
      REQUIRE(anchor.is_ok());
      REQUIRE(g.mark_output(anchor.value()[0], "anchor_out").is_ok());
    }
    auto blob = compile(g, nullptr);
    INFO(blob.status().to_string());
    REQUIRE(blob.is_ok());
    b.blob_ = std::make_unique<std::vector<uint8_t>>(std::move(blob.value()));
    EngineOptions options;
    options.backend = backend;
    options.num_threads = num_threads;
    auto engine = EngineCore::open_buffer(b.blob_->data(), b.blob_->size(), options);
    INFO(engine.status().to_string());
    REQUIRE(engine.is_ok());
    b.engine_ = std::move(engine.value());
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      const Operand& in = c.inputs[i];
      if (in.omitted || in.frozen) continue;
      REQUIRE(b.engine_->set_input("in" + std::to_string(i), in.data(), in.nbytes()).is_ok());
    }
    if (outs->empty()) {
      const float zero = 0.0f;
      REQUIRE(b.engine_->set_input("anchor", &zero, sizeof(zero)).is_ok());
    }
    for (int i : c.updated_inputs) b.updated_.push_back({i, c.inputs[static_cast<size_t>(i)].values.size()});
    return b;
  }

  // Replaces graph input `i` (an f32 operand) before the next run.
  void set_input(size_t i, const std::vector<float>& values) {
    REQUIRE(engine_->set_input("in" + std::to_string(i), values.data(), values.size() * sizeof(float)).is_ok());
  }

  // Every output, then every updated input, after one run.
  std::vector<std::vector<float>> infer() {
    const Status s = engine_->infer();
    INFO(s.to_string());
    REQUIRE(s.is_ok());
    std::vector<std::vector<float>> results;
    for (size_t i = 0; i < output_sizes_.size(); ++i) {
      std::vector<float> v(output_sizes_[i]);
      if (output_u8_[i]) {  // masks and bools: compared as 0.0 / 1.0
        std::vector<uint8_t> bytes(v.size());
        REQUIRE(engine_->get_output("out" + std::to_string(i), bytes.data(), bytes.size()).is_ok());
        for (size_t k = 0; k < v.size(); ++k) v[k] = bytes[k];
      } else if (output_i64_[i]) {  // indices: compared as floats (exact below 2^24)
        std::vector<int64_t> ints(v.size());
        REQUIRE(engine_->get_output("out" + std::to_string(i), ints.data(), ints.size() * sizeof(int64_t)).is_ok());
        for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<float>(ints[k]);
      } else {
        REQUIRE(engine_->get_output("out" + std::to_string(i), v.data(), v.size() * sizeof(float)).is_ok());
      }
      results.push_back(std::move(v));
    }
    for (const auto& [index, size] : updated_) {
      const void* data = engine_->tensor_data("in" + std::to_string(index));
      REQUIRE(data != nullptr);
      std::vector<float> v(size);
      std::memcpy(v.data(), data, size * sizeof(float));
      results.push_back(std::move(v));
    }
    return results;
  }

  // The status of one run, for cases that must fail cleanly.
  Status try_infer() { return engine_->infer(); }

  // The backend the engine bound the op of type `op` to.
  std::string backend_of(const std::string& op) const {
    const auto* ops = engine_->blob().program->ops();
    const std::vector<std::string> backends = engine_->op_backends();
    for (flatbuffers::uoffset_t i = 0; i < ops->size(); ++i) {
      if (ops->Get(i)->op()->str() == op) return backends[i];
    }
    return "(no " + op + " op in the blob)";
  }

 private:
  std::unique_ptr<std::vector<uint8_t>> blob_;  // the engine reads it in place
  std::unique_ptr<EngineCore> engine_;
  std::vector<size_t> output_sizes_;
  std::vector<bool> output_u8_;
  std::vector<bool> output_i64_;
  std::vector<std::pair<int, size_t>> updated_;
};

// Empty when every element is within tolerance; else a description of the worst one.
inline std::string mismatch(const std::vector<float>& got, const std::vector<float>& want, double tolerance) {
  if (got.size() != want.size()) return "sizes differ";
  size_t worst = 0;
  double worst_excess = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(got[i]) && std::isnan(want[i])) continue;  // NaN in, NaN out: as ref
    if (std::isinf(got[i]) && got[i] == want[i]) continue;     // the same infinity as ref
    const double err = std::fabs(static_cast<double>(got[i]) - want[i]);
    const double excess = err - tolerance * (std::fabs(want[i]) + 1.0);
    if (!(excess <= 0.0) && !(excess < worst_excess)) {  // NaN counts as a mismatch
      worst = i;
      worst_excess = std::isnan(excess) ? INFINITY : excess;
    }
  }
  if (worst_excess == 0.0) return "";
  std::ostringstream s;
  s << "element " << worst << " of " << got.size() << ": got " << got[worst] << ", ref " << want[worst];
  return s.str();
}

inline void compare_results(const std::vector<std::vector<float>>& got, const std::vector<std::vector<float>>& want,
                            double tolerance) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("result " << i << " (outputs first, then updated inputs)");
    CHECK(mismatch(got[i], want[i], tolerance) == "");
  }
}

inline std::string describe(const OpCase& c) {
  std::ostringstream what;
  what << c.op;
  for (const Operand& in : c.inputs) {
    what << " " << (in.omitted ? "-" : shape_str(in.shape)) << (in.frozen ? "(frozen)" : "");
  }
  return what.str();
}

// Runs `c` on `backend` and on ref, checks the binding and the results.
inline void check_against_ref(const std::string& backend, const OpCase& c, const std::string& expected_backend = "",
                              int num_threads = 0) {
  INFO(describe(c));
  BoundCase fast = BoundCase::open(c, backend, num_threads);
  BoundCase ref = BoundCase::open(c, "ref");
  CHECK(fast.backend_of(c.op) == (expected_backend.empty() ? backend : expected_backend));
  CHECK(ref.backend_of(c.op) == "ref");
  compare_results(fast.infer(), ref.infer(), c.tolerance);
}

}  // namespace pock::test
