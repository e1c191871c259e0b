// One op on host buffers, bound as an in-tree backend binds it (a pock_op_desc over the buffers),
// run through the reference kernel (ref_kernels()) to give the values the CUDA logic must match.
// The same desc is parsed with kernels/params, so the logic under test sees the parameters the
// device kernel would.
#pragma once
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "host_team.hpp"
#include "kernels/cuda/row_team.hpp"
#include "runtime/table_backend.hpp"

namespace pock::test {

struct CaseTensor {
  DType dtype = DType::kF32;
  Shape shape;
  std::vector<uint8_t> bytes;
  bool present = true;  // false: an omitted optional input

  template <typename T>
  T* data() {
    return reinterpret_cast<T*>(bytes.data());
  }
  float* f32() { return data<float>(); }
  int64_t count() const { return numel(shape); }
};

inline CaseTensor tensor(DType dtype, Shape shape) {
  CaseTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.bytes.assign(static_cast<size_t>(numel(t.shape)) * dtype_size(dtype), 0);
  return t;
}

// Uniform floats in [lo, hi), deterministic per seed.
inline CaseTensor random_f32(Shape shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  CaseTensor t = tensor(DType::kF32, std::move(shape));
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (int64_t i = 0; i < t.count(); ++i) t.f32()[i] = dist(gen);
  return t;
}

inline CaseTensor absent() {
  CaseTensor t;
  t.present = false;
  return t;
}

struct RefCase {
  std::string op;
  std::vector<CaseTensor> inputs, outputs;
  std::vector<std::string> attr_names;
  std::vector<pock_attr> attrs;
  std::vector<std::vector<int64_t>> int_lists;  // storage the INTS attributes point into

  void set_int(const std::string& name, int64_t v) { add(name).i = v, attrs.back().kind = POCK_ATTR_INT; }
  void set_float(const std::string& name, double v) { add(name).f = v, attrs.back().kind = POCK_ATTR_FLOAT; }
  void set_text(const std::string& name, const char* v) { add(name).s = v, attrs.back().kind = POCK_ATTR_STRING; }
  void set_ints(const std::string& name, std::vector<int64_t> v) {
    int_lists.reserve(16);  // pointers into the lists stay valid
    int_lists.push_back(std::move(v));
    pock_attr& a = add(name);
    a.kind = POCK_ATTR_INTS;
    a.ints = int_lists.back().data();
    a.count = static_cast<int64_t>(int_lists.back().size());
  }

  // The descs point into `inputs` and `outputs`: rebuild after changing them.
  pock_op_desc desc() {
    in_descs.clear();
    out_descs.clear();
    for (CaseTensor& t : inputs) in_descs.push_back(describe(t));
    for (CaseTensor& t : outputs) out_descs.push_back(describe(t));
    for (size_t i = 0; i < attrs.size(); ++i) attrs[i].name = attr_names[i].c_str();
    pock_op_desc d{};
    d.op = op.c_str();
    d.name = "case";
    d.num_inputs = static_cast<int32_t>(in_descs.size());
    d.num_outputs = static_cast<int32_t>(out_descs.size());
    d.inputs = in_descs.data();
    d.outputs = out_descs.data();
    d.num_attrs = static_cast<int32_t>(attrs.size());
    d.attrs = attrs.data();
    d.num_threads = 1;
    return d;
  }

 private:
  pock_attr& add(const std::string& name) {
    attr_names.reserve(16);
    attr_names.push_back(name);
    attrs.push_back(pock_attr{});
    return attrs.back();
  }
  static pock_tensor_desc describe(CaseTensor& t) {
    pock_tensor_desc d{};
    if (!t.present) {
      d.rank = -1;
      return d;
    }
    d.dtype = static_cast<pock_dtype>(t.dtype);
    d.rank = static_cast<int32_t>(t.shape.size());
    for (size_t i = 0; i < t.shape.size(); ++i) d.dims[i] = t.shape[i];
    d.data = t.bytes.data();
    d.nbytes = t.bytes.size();
    return d;
  }
  std::vector<pock_tensor_desc> in_descs, out_descs;
};

// Runs `c` through ref's kernel for its op; the outputs (and in-place inputs) hold the results.
inline Status run_ref(RefCase& c) {
  const pock_op_desc d = c.desc();
  const KernelDef* def = ref_kernels().find(c.op, kernel_key_dtype(d));
  if (!def) return Status(Code::kNotFound, "ref has no kernel for " + c.op);
  if (def->prepare_scoped) return Status(Code::kInvalidArgument, c.op + ": ref's kernel needs a scope");
  void* state = nullptr;
  if (def->prepare) POCK_RETURN_IF_ERROR(def->prepare(d, &state));
  const KernelCall call{&d, state};
  Status s = def->run(call);
  if (def->release) def->release(state);
  return s;
}

// |a - b| <= atol + rtol * |b| elementwise (NaN only against NaN). f32 logic against ref's
// double sums: relative 1e-4 leaves room for float rounding over a few thousand terms.
inline void expect_close(const float* actual, const float* expected, int64_t n, const std::string& what,
                         float rtol = 1e-4f, float atol = 1e-5f) {
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float a = actual[i], e = expected[i];
    const bool ok = std::isnan(e) ? std::isnan(a) : (a == e || std::fabs(a - e) <= atol + rtol * std::fabs(e));
    if (!ok && bad++ < 5) FAIL_CHECK(what << "[" << i << "] = " << a << ", ref " << e);
  }
  CHECK(bad == 0);
}

inline void expect_close(CaseTensor& actual, CaseTensor& expected, const std::string& what, float rtol = 1e-4f,
                         float atol = 1e-5f) {
  REQUIRE(actual.count() == expected.count());
  expect_close(actual.f32(), expected.f32(), actual.count(), what, rtol, atol);
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

// An element functor of kernels/cuda/*_logic.hpp over [0, n), as launch_map runs it.
template <typename F>
void each_element(const F& f, int64_t n) {
  for (int64_t i = 0; i < n; ++i) f(i);
}

// The case's parameters as the shared parser (kernels/params) gives them to every backend.
template <typename Params>
Params parsed(RefCase& c) {
  Params p;
  const pock_op_desc d = c.desc();
  REQUIRE(parse(d, &p).is_ok());
  return p;
}

// An optional input's data, or null when the case omits it.
inline float* optional_data(CaseTensor& t) { return t.present ? t.f32() : nullptr; }

}  // namespace pock::test
