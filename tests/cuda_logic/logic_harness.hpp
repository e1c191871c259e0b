// Test support for tests/cuda_logic: binds one op on host memory (inputs given, outputs shaped by
// the op's schema, attributes as the runtime passes them) so that a case can run ref's kernel and
// the cuda kernel's host-callable logic over the same pock_op_desc and compare what they wrote.
// Output buffers start as a poison byte pattern, so an element the logic never writes shows up.
#pragma once
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ir/op_schema.hpp"
#include "runtime/table_backend.hpp"
#include "support/op_runner.hpp"

namespace pock::test {

// Host bytes of a dtype and shape (op_runner.hpp's): inputs, and outputs to compare.
using HostBuffer = HostTensor;

inline HostBuffer f32(Shape shape, const std::vector<float>& values) { return HostTensor::f32(std::move(shape), values); }

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

class BoundOp {
 public:
  BoundOp(std::string op, std::vector<HostBuffer> inputs, Attrs attrs = {})
      : op_(std::move(op)), inputs_(std::move(inputs)), attrs_(std::move(attrs)) {
    std::vector<TensorType> types;
    for (const HostBuffer& b : inputs_) types.push_back(TensorType{b.dtype, b.shape});
    std::vector<const TensorType*> ptrs;
    for (const TensorType& t : types) ptrs.push_back(&t);
    status_ = infer_types(op_, "the_node", ptrs, attrs_, &out_types_);
    for (HostBuffer& b : inputs_) in_descs_.push_back(describe(b));
    for (const auto& [name, value] : attrs_.items()) attr_descs_.push_back(describe(name, value));
  }

  // The descriptors point into this object: it stays where it was made.
  BoundOp(const BoundOp&) = delete;
  BoundOp& operator=(const BoundOp&) = delete;

  const Status& status() const { return status_; }
  const std::string& op() const { return op_; }

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

  // The op bound to the inputs and to `outs`; valid while this and `outs` live.
  pock_op_desc bind(std::vector<HostBuffer>& outs) {
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

  // What ref's kernel writes; fails the test when ref has no kernel or declines.
  std::vector<HostBuffer> run_ref() {
    std::vector<HostBuffer> outs = fresh_outputs();
    const pock_op_desc d = bind(outs);
    const KernelDef* def = ref_kernels().find(op_, kernel_key_dtype(d));
    REQUIRE(def != nullptr);
    REQUIRE((!def->accepts || def->accepts(d)));
    void* state = nullptr;
    if (def->prepare) REQUIRE(def->prepare(d, &state).is_ok());
    KernelCall call;
    call.desc = &d;
    call.state = state;
    const Status s = def->run(call);
    if (def->release) def->release(state);
    REQUIRE(s.is_ok());
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
  Attrs attrs_;
  Status status_;
  std::vector<TensorType> out_types_;
  std::vector<pock_tensor_desc> in_descs_, out_descs_;
  std::vector<pock_attr> attr_descs_;
};

// Runs a device map functor on the host: f(i) for i in [0, n), as launch_map does.
template <typename F>
void host_map(int64_t n, const F& f) {
  for (int64_t i = 0; i < n; ++i) f(i);
}

// First mismatches of f32 outputs: |got - want| <= atol + rtol * |want|, NaN matches NaN,
// infinities exactly. Empty when all agree.
inline std::string f32_mismatches(const HostBuffer& got, const HostBuffer& want, double rtol, double atol) {
  const std::vector<float> g = got.values<float>(), w = want.values<float>();
  if (g.size() != w.size()) return "sizes differ";
  std::string report;
  int total = 0;
  for (size_t i = 0; i < g.size(); ++i) {
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
  if (total) report += std::to_string(total) + " of " + std::to_string(g.size()) + " differ";
  return report;
}

inline std::string byte_mismatches(const HostBuffer& got, const HostBuffer& want) {
  if (got.bytes.size() != want.bytes.size()) return "sizes differ";
  for (size_t i = 0; i < got.bytes.size(); ++i) {
    if (got.bytes[i] != want.bytes[i]) return "byte " + std::to_string(i) + " differs";
  }
  return "";
}

}  // namespace pock::test
