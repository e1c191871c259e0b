// The one test harness of tests/cuda_logic: binds one op on host memory as an in-tree backend
// binds it (inputs given, outputs shaped by the op's schema, attributes as the runtime passes
// them), runs ref's kernel on it (the oracle), parses the same desc with kernels/params (what the
// device kernel is given), and runs a logic header's functors the way the device does.
// Outputs start as a poison byte pattern, so an element the logic never writes shows up; ref
// runs on copies of the inputs, so an op that updates inputs in place leaves the case unchanged.
#pragma once
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "host_team.hpp"
#include "ir/op_schema.hpp"
#include "kernels/cuda/row_team.hpp"
#include "runtime/table_backend.hpp"
#include "support/op_runner.hpp"

namespace pock::test {

// Host bytes of a dtype and shape (op_runner.hpp's): inputs, and outputs to compare.
using HostBuffer = HostTensor;
// An input slot: std::nullopt is an omitted optional input (rank -1, as the runtime binds it).
using InputSlot = std::optional<HostBuffer>;

inline HostBuffer f32(Shape shape, const std::vector<float>& values) { return HostTensor::f32(std::move(shape), values); }
inline InputSlot absent() { return std::nullopt; }

// Uniform floats in [lo, hi); with `edges`, some elements replaced by the values where
// activations and comparisons change branch (0, -0, kinks, infinities, NaN).
inline std::vector<float> random_values(const Shape& shape, uint32_t seed, float lo = -4.0f, float hi = 4.0f,
                                        bool edges = true) {
  static const float kEdges[] = {0.0f, -0.0f, 1.0f, -1.0f, 3.0f, -3.0f, 6.0f, 0.5f, 1e-30f, 1e30f,
                                 INFINITY, -INFINITY, NAN};
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(numel(shape)));
  for (float& x : v) x = dist(gen);
  if (edges) {
    for (size_t i = 0; i < v.size(); i += 7) v[i] = kEdges[(i / 7) % (sizeof(kEdges) / sizeof(kEdges[0]))];
  }
  return v;
}

// An f32 tensor of uniform values in [lo, hi), no edges: inputs whose range the op needs
// (variances, probabilities).
inline HostBuffer random_f32(Shape shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::vector<float> v = random_values(shape, seed, lo, hi, false);
  return f32(std::move(shape), v);
}

// A bound tensor's elements; null for an omitted input.
template <typename T = float>
T* data_of(const pock_tensor_desc& t) {
  return static_cast<T*>(t.data);
}
// A host buffer's elements, for logic that works on a buffer no op is bound to (a scratch copy).
template <typename T = float>
T* data_of(HostBuffer& b) {
  return reinterpret_cast<T*>(b.bytes.data());
}

class BoundOp {
 public:
  BoundOp(std::string op, std::vector<InputSlot> inputs, Attrs attrs = {})
      : op_(std::move(op)), attrs_(std::move(attrs)) {
    std::vector<TensorType> types;
    types.reserve(inputs.size());
    std::vector<const TensorType*> ptrs;
    for (InputSlot& slot : inputs) {
      present_.push_back(slot.has_value());
      inputs_.push_back(slot ? std::move(*slot) : HostBuffer{});
      if (!slot) {
        ptrs.push_back(nullptr);
        continue;
      }
      types.push_back(TensorType{inputs_.back().dtype, inputs_.back().shape});
      ptrs.push_back(&types.back());
    }
    status_ = infer_types(op_, "the_node", ptrs, attrs_, &out_types_);
    for (const auto& [name, value] : attrs_.items()) attr_descs_.push_back(describe(name, value));
  }

  // The descriptors point into this object: it stays where it was made.
  BoundOp(const BoundOp&) = delete;
  BoundOp& operator=(const BoundOp&) = delete;

  const Status& status() const { return status_; }
  const std::string& op() const { return op_; }

  // The node uses only its first `n` outputs (the others optional, as a graph may leave them).
  BoundOp& use_outputs(size_t n) {
    if (n < out_types_.size()) out_types_.resize(n);
    return *this;
  }

  // Fresh outputs of the inferred types, filled with 0xA5 bytes.
  std::vector<HostBuffer> fresh_outputs() const {
    std::vector<HostBuffer> outs;
    for (const TensorType& t : out_types_) {
      HostBuffer b{t.dtype, t.shape, {}};
      b.bytes.assign(static_cast<size_t>(numel(t.shape)) * dtype_size(t.dtype), 0xA5);
      outs.push_back(std::move(b));
    }
    return outs;
  }

  // Copies of the inputs, for logic that updates inputs in place (an omitted one stays empty).
  std::vector<HostBuffer> fresh_inputs() const { return inputs_; }

  // The op bound to its inputs (or to `ins`, copies from fresh_inputs) and to `outs`; valid while
  // the buffers live and until the next bind.
  pock_op_desc bind(std::vector<HostBuffer>& outs) { return bind(inputs_, outs); }
  pock_op_desc bind(std::vector<HostBuffer>& ins, std::vector<HostBuffer>& outs) {
    in_descs_.clear();
    for (size_t i = 0; i < ins.size(); ++i) in_descs_.push_back(present_[i] ? describe(ins[i]) : omitted());
    out_descs_.clear();
    for (HostBuffer& b : outs) out_descs_.push_back(describe(b));
    pock_op_desc d{};
    d.op = op_.c_str();
    d.name = "the_node";
    d.num_inputs = static_cast<int32_t>(in_descs_.size());
    d.num_outputs = static_cast<int32_t>(out_descs_.size());
    d.inputs = in_descs_.data();
    d.outputs = out_descs_.data();
    d.num_attrs = static_cast<int32_t>(attr_descs_.size());
    d.attrs = attr_descs_.data();
    d.num_threads = 1;
    return d;
  }

  // What ref's kernel writes, run on copies of the inputs (left in `inputs_after` when given,
  // for ops that update inputs in place); fails the test when ref has no kernel or declines.
  std::vector<HostBuffer> run_ref(std::vector<HostBuffer>* inputs_after = nullptr) {
    INFO(op_ << ": " << status_.message());
    REQUIRE(status_.is_ok());
    std::vector<HostBuffer> ins = fresh_inputs(), outs = fresh_outputs();
    const pock_op_desc d = bind(ins, outs);
    const KernelDef* def = ref_kernels().find(op_, kernel_key_dtype(d));
    REQUIRE(def != nullptr);
    REQUIRE(!def->prepare_scoped);  // a kernel that needs an engine's scope cannot run here
    REQUIRE((!def->accepts || def->accepts(d)));
    void* state = nullptr;
    if (def->prepare) REQUIRE(def->prepare(d, &state).is_ok());
    const Status s = def->run(KernelCall{&d, state});
    if (def->release) def->release(state);
    INFO(s.message());
    REQUIRE(s.is_ok());
    if (inputs_after) *inputs_after = std::move(ins);
    return outs;
  }

 private:
  static pock_tensor_desc describe(HostBuffer& b) {
    pock_tensor_desc t{};
    t.dtype = static_cast<pock_dtype>(b.dtype);
    t.rank = static_cast<int32_t>(b.shape.size());
    for (size_t d = 0; d < b.shape.size(); ++d) t.dims[d] = b.shape[d];
    t.data = b.bytes.empty() ? static_cast<void*>(empty_) : b.bytes.data();
    t.nbytes = b.bytes.size();
    return t;
  }
  static pock_tensor_desc omitted() {
    pock_tensor_desc t{};
    t.rank = -1;
    return t;
  }

  pock_attr describe(const std::string& name, const AttrValue& value) {
    pock_attr a{};
    a.name = name.c_str();
    if (const auto* i = std::get_if<int64_t>(&value)) {
      a.kind = POCK_ATTR_INT;
      a.i = *i;
    } else if (const auto* f = std::get_if<double>(&value)) {
      a.kind = POCK_ATTR_FLOAT;
      a.f = *f;
    } else if (const auto* s = std::get_if<std::string>(&value)) {
      a.kind = POCK_ATTR_STRING;
      a.s = s->c_str();
    } else if (const auto* is = std::get_if<std::vector<int64_t>>(&value)) {
      a.kind = POCK_ATTR_INTS;
      a.ints = is->data();
      a.count = static_cast<int64_t>(is->size());
    } else if (const auto* fs = std::get_if<std::vector<double>>(&value)) {
      a.kind = POCK_ATTR_FLOATS;
      a.floats = fs->data();
      a.count = static_cast<int64_t>(fs->size());
    }
    return a;
  }

  alignas(16) static inline uint64_t empty_[2] = {};  // a non-null pointer for empty tensors
  std::string op_;
  std::vector<HostBuffer> inputs_;
  std::vector<bool> present_;
  Attrs attrs_;
  Status status_;
  std::vector<TensorType> out_types_;
  std::vector<pock_tensor_desc> in_descs_, out_descs_;
  std::vector<pock_attr> attr_descs_;
};

// The desc's parameters as the shared parser (kernels/params) gives them to every backend.
template <typename Params>
Params parsed(const pock_op_desc& d) {
  Params p;
  const Status s = parse(d, &p);
  INFO(s.message());
  REQUIRE(s.is_ok());
  return p;
}

// An element functor of kernels/cuda/*_logic.hpp over [0, n), as launch_map runs it.
template <typename F>
void each_element(const F& f, int64_t n) {
  for (int64_t i = 0; i < n; ++i) f(i);
}

// A row (or channel) functor of kernels/cuda/*_logic.hpp over every row: the even rows by a team
// of three threads (host_team.hpp), as a warp or block runs a row, the odd ones by a SoloTeam, as
// the device's thread-per-row kernels do. Both must give ref's values.
template <typename Row>
void each_row(const Row& row, int64_t rows) {
  std::vector<int64_t> even;
  for (int64_t r = 0; r < rows; r += 2) even.push_back(r);
  rows_on_threads(row, even, 3);
  for (int64_t r = 1; r < rows; r += 2) row(cuda::SoloTeam{}, r);
}

// First mismatches of f32 values: |got - want| <= atol + rtol * |want|, NaN matches NaN,
// infinities exactly. Empty when all agree.
inline std::string f32_mismatches(const float* g, const float* w, int64_t n, double rtol, double atol) {
  std::string report;
  int64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double a = g[i], b = w[i];
    bool ok;
    if (std::isnan(a) || std::isnan(b)) {
      ok = std::isnan(a) && std::isnan(b);
    } else if (std::isinf(a) || std::isinf(b)) {
      ok = a == b;
    } else {
      ok = std::fabs(a - b) <= atol + rtol * std::fabs(b);
    }
    if (ok) continue;
    if (total++ < 4) report += "[" + std::to_string(i) + "] got " + std::to_string(a) + " want " + std::to_string(b) + "; ";
  }
  if (total) report += std::to_string(total) + " of " + std::to_string(n) + " differ";
  return report;
}

inline std::string f32_mismatches(const HostBuffer& got, const HostBuffer& want, double rtol, double atol) {
  if (got.bytes.size() != want.bytes.size() || got.dtype != DType::kF32) return "sizes or dtypes differ";
  return f32_mismatches(reinterpret_cast<const float*>(got.bytes.data()),
                        reinterpret_cast<const float*>(want.bytes.data()), numel(got.shape), rtol, atol);
}

// One assertion per compared tensor, naming it. Default tolerance: f32 logic against ref's
// double sums, relative 1e-4 leaving room for float rounding over a few thousand terms.
inline void expect_close(const HostBuffer& got, const HostBuffer& want, const std::string& what,
                         double rtol = 1e-4, double atol = 1e-5) {
  INFO(what);
  CHECK(f32_mismatches(got, want, rtol, atol) == "");
}

inline std::string byte_mismatches(const HostBuffer& got, const HostBuffer& want) {
  if (got.bytes.size() != want.bytes.size()) return "sizes differ";
  for (size_t i = 0; i < got.bytes.size(); ++i) {
    if (got.bytes[i] != want.bytes[i]) return "byte " + std::to_string(i) + " differs";
  }
  return "";
}

}  // namespace pock::test
