// Test support for tests/cuda: one op run on the cuda backend (device buffers, through the backend
// ABI as the runtime drives it: alloc, copy, prepare, execute, synchronize, copy back) and on the
// reference kernels (host buffers), from the same host inputs. Output shapes come from the op's
// schema (a one-node Graph), attributes reach both backends as the runtime passes them
// (SpecOpDesc). f16/bf16 ops, which ref runs only in f32, run there on the inputs widened to f32.
#pragma once
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "compiler/spec_op_desc.hpp"
#include "ir/float16.hpp"
#include "kernels/cuda/cuda_backend.hpp"
#include "kernels/cuda/device_info.hpp"
#include "pock/compiler/compiler.hpp"
#include "runtime/table_backend.hpp"

namespace pock::test {

inline bool skip_without_gpu() {
  const cuda::DeviceQuery query = cuda::query_devices();
  if (!query.devices.empty()) return false;
  WARN("skipped: no CUDA device (" << query.unavailable_reason << ")");
  return true;
}

inline size_t dtype_bytes(DType d) { return dtype_size(d); }

struct HostOperand {
  DType dtype = DType::kF32;
  Shape shape;
  std::vector<uint8_t> bytes;

  std::vector<float> floats() const {  // f32, f16 and bf16 widened; others empty
    const size_t n = bytes.size() / dtype_bytes(dtype);
    std::vector<float> out(n);
    for (size_t i = 0; i < n; ++i) {
      if (dtype == DType::kF32) {
        std::memcpy(&out[i], bytes.data() + 4 * i, 4);
      } else if (dtype == DType::kF16 || dtype == DType::kBF16) {
        uint16_t h;
        std::memcpy(&h, bytes.data() + 2 * i, 2);
        out[i] = dtype == DType::kF16 ? half_to_float(h) : bf16_to_float(h);
      }
    }
    return dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16 ? out : std::vector<float>{};
  }
  HostOperand widened() const {
    if (dtype != DType::kF16 && dtype != DType::kBF16) return *this;
    const std::vector<float> f = floats();
    HostOperand w{DType::kF32, shape, std::vector<uint8_t>(f.size() * 4)};
    if (!f.empty()) std::memcpy(w.bytes.data(), f.data(), w.bytes.size());
    return w;
  }
};

// Random values of `dtype` (floats uniform in [lo, hi), rounded to the dtype).
inline HostOperand random_operand(DType dtype, Shape shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  HostOperand o{dtype, shape, {}};
  const size_t n = static_cast<size_t>(numel(shape));
  o.bytes.resize(n * dtype_bytes(dtype));
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (size_t i = 0; i < n; ++i) {
    const float v = dist(gen);
    if (dtype == DType::kF32) {
      std::memcpy(o.bytes.data() + 4 * i, &v, 4);
    } else if (dtype == DType::kF16 || dtype == DType::kBF16) {
      const uint16_t h = dtype == DType::kF16 ? float_to_half(v) : float_to_bf16(v);
      std::memcpy(o.bytes.data() + 2 * i, &h, 2);
    }
  }
  return o;
}

template <typename T>
HostOperand operand_of(DType dtype, Shape shape, const std::vector<T>& values) {
  HostOperand o{dtype, std::move(shape), std::vector<uint8_t>(values.size() * sizeof(T))};
  if (!values.empty()) std::memcpy(o.bytes.data(), values.data(), o.bytes.size());
  return o;
}

struct DeviceCase {
  std::string op;
  std::vector<HostOperand> inputs;
  Attrs attrs;
  double tolerance = 1e-4;  // |got - ref| <= tolerance (|ref| + 1)
};

// After one run: every output, then every input (an op may update inputs in place).
struct OpResults {
  Status status;
  std::vector<HostOperand> outputs, inputs;
};

// The op described as the runtime describes it, data pointers to be filled.
struct DescribedCase {
  ProgramSpec spec;
  std::vector<DType> output_dtypes;
  std::vector<Shape> output_shapes;
};

inline Result<DescribedCase> describe_case(const DeviceCase& c, bool widen) {
  Graph g;
  std::vector<TensorId> ids;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const HostOperand in = widen ? c.inputs[i].widened() : c.inputs[i];
    ids.push_back(g.add_input("in" + std::to_string(i), in.dtype, in.shape));
  }
  POCK_ASSIGN_OR_RETURN(std::vector<TensorId> outs, g.add_node(c.op, ids, c.attrs, "node"));
  DescribedCase d;
  for (size_t i = 0; i < g.num_tensors(); ++i) {
    const TensorDesc& t = g.tensors()[i];
    TensorSpec s;
    s.name = t.name;
    s.dtype = t.dtype;
    s.shape = t.shape;
    s.nbytes = t.nbytes();
    d.spec.tensors.push_back(s);
  }
  OpSpec op;
  op.op = c.op;
  op.name = "node";
  op.inputs.assign(ids.begin(), ids.end());
  op.outputs.assign(outs.begin(), outs.end());
  op.attrs = c.attrs;
  d.spec.ops.push_back(op);
  for (TensorId t : outs) {
    d.output_dtypes.push_back(g.tensor(t).dtype);
    d.output_shapes.push_back(g.tensor(t).shape);
  }
  return d;
}

// Runs `c` on the host backend `b` (ref), on host buffers.
inline OpResults run_on_host(pock_backend_v1& b, const DeviceCase& c, bool widen) {
  OpResults r;
  auto described = describe_case(c, widen);
  if (!described.is_ok()) return {described.status(), {}, {}};
  auto d = SpecOpDesc::describe(described->spec, described->spec.ops[0], 1);
  if (!d.is_ok()) return {d.status(), {}, {}};
  for (const HostOperand& in : c.inputs) r.inputs.push_back(widen ? in.widened() : in);
  for (size_t i = 0; i < described->output_shapes.size(); ++i) {
    const DType dt = described->output_dtypes[i];
    r.outputs.push_back({dt, described->output_shapes[i],
                         std::vector<uint8_t>(static_cast<size_t>(numel(described->output_shapes[i])) * dtype_bytes(dt))});
  }
  for (size_t i = 0; i < r.inputs.size(); ++i) d->input(i).data = r.inputs[i].bytes.data();
  for (size_t i = 0; i < r.outputs.size(); ++i) d->output(i).data = r.outputs[i].bytes.data();
  void* handle = nullptr;
  pock_status s = b.prepare_op(b.context, &d->desc(), &handle);
  if (s == POCK_OK) s = b.execute_op(b.context, handle, &d->desc());
  if (handle && b.release_op) b.release_op(b.context, handle);
  r.status = s == POCK_OK ? Status::ok() : Status(static_cast<Code>(s), b.last_error(b.context));
  return r;
}

// A host backend over an in-tree kernel table (ref, cpu), destroyed with this object.
class HostTableBackend {
 public:
  HostTableBackend(const char* name, const KernelTable& table) {
    b_.abi_version = POCK_BACKEND_ABI_VERSION;
    b_.struct_size = sizeof(pock_backend_v1);
    REQUIRE(fill_table_backend(&b_, name, &table) == POCK_OK);
  }
  ~HostTableBackend() { b_.destroy(b_.context); }
  HostTableBackend(const HostTableBackend&) = delete;
  HostTableBackend& operator=(const HostTableBackend&) = delete;
  pock_backend_v1& abi() { return b_; }

  // Whether the table has a kernel for `c` as described (its inputs widened to f32 or not).
  bool supports(const DeviceCase& c, bool widen) {
    auto described = describe_case(c, widen);
    if (!described.is_ok()) return false;
    auto d = SpecOpDesc::describe(described->spec, described->spec.ops[0], 1);
    return d.is_ok() && b_.supports_op(b_.context, &d->desc()) > 0;
  }

 private:
  pock_backend_v1 b_{};
};

// The cuda backend of one test; its device buffers go back when it does.
class CudaBackend {
 public:
  CudaBackend() {
    b_.abi_version = POCK_BACKEND_ABI_VERSION;
    b_.struct_size = sizeof(pock_backend_v1);
    REQUIRE(builtin_backend_init_cuda(&b_) == POCK_OK);
    sync_ = reinterpret_cast<pock_synchronize_fn>(b_.get_proc_address(b_.context, POCK_EXT_SYNCHRONIZE));
  }
  ~CudaBackend() {
    for (void* p : buffers_) b_.free(b_.context, p);
    b_.destroy(b_.context);
  }
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;
  pock_backend_v1& abi() { return b_; }

  // 0 when cuda does not claim the op as described (with every tensor in device memory).
  int32_t score(const DeviceCase& c) {
    auto described = describe_case(c, false);
    if (!described.is_ok()) return 0;
    auto d = SpecOpDesc::describe(described->spec, described->spec.ops[0], 1);
    if (!d.is_ok()) return 0;
    for (size_t i = 0; i < d->num_inputs(); ++i) d->input(i).memory_space = POCK_MEMORY_DEVICE;
    for (size_t i = 0; i < d->num_outputs(); ++i) d->output(i).memory_space = POCK_MEMORY_DEVICE;
    return b_.supports_op(b_.context, &d->desc());
  }

  OpResults run(const DeviceCase& c) {
    OpResults r;
    auto described = describe_case(c, false);
    REQUIRE(described.is_ok());
    auto d = SpecOpDesc::describe(described->spec, described->spec.ops[0], 1);
    REQUIRE(d.is_ok());
    std::vector<void*> in_ptrs, out_ptrs;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      in_ptrs.push_back(upload(c.inputs[i].bytes));
      d->input(i).data = in_ptrs.back();
      d->input(i).memory_space = POCK_MEMORY_DEVICE;
    }
    for (size_t i = 0; i < described->output_shapes.size(); ++i) {
      const DType dt = described->output_dtypes[i];
      // NaN bytes: an element the kernel never writes cannot pass for a result.
      std::vector<uint8_t> poison(static_cast<size_t>(numel(described->output_shapes[i])) * dtype_bytes(dt), 0xff);
      out_ptrs.push_back(upload(poison));
      d->output(i).data = out_ptrs.back();
      d->output(i).memory_space = POCK_MEMORY_DEVICE;
      r.outputs.push_back({dt, described->output_shapes[i], std::move(poison)});
    }
    void* handle = nullptr;
    pock_status s = b_.prepare_op(b_.context, &d->desc(), &handle);
    if (s == POCK_OK) s = b_.execute_op(b_.context, handle, &d->desc());
    if (s == POCK_OK) s = sync_(b_.context);
    r.status = s == POCK_OK ? Status::ok() : Status(static_cast<Code>(s), b_.last_error(b_.context));
    if (handle) b_.release_op(b_.context, handle);
    for (size_t i = 0; i < r.outputs.size(); ++i) download(out_ptrs[i], &r.outputs[i].bytes);
    r.inputs = c.inputs;
    for (size_t i = 0; i < r.inputs.size(); ++i) download(in_ptrs[i], &r.inputs[i].bytes);
    return r;
  }

 private:
  void* upload(const std::vector<uint8_t>& bytes) {
    void* p = b_.alloc(b_.context, bytes.size(), 64);
    INFO(b_.last_error(b_.context));
    REQUIRE(p != nullptr);
    buffers_.push_back(p);
    REQUIRE(b_.copy(b_.context, p, bytes.data(), bytes.size(), POCK_COPY_HOST_TO_DEVICE) == POCK_OK);
    return p;
  }
  void download(const void* p, std::vector<uint8_t>* bytes) {
    REQUIRE(b_.copy(b_.context, bytes->data(), p, bytes->size(), POCK_COPY_DEVICE_TO_HOST) == POCK_OK);
  }

  pock_backend_v1 b_{};
  pock_synchronize_fn sync_ = nullptr;
  std::vector<void*> buffers_;
};

// Empty when `got` matches `want` (floats within tolerance, NaN where ref has NaN; other dtypes
// byte for byte); else the first mismatch.
inline std::string compare_operand(const HostOperand& got, const HostOperand& want, double tolerance) {
  const std::vector<float> g = got.floats(), w = want.floats();
  if (g.empty() && w.empty()) {
    if (got.bytes == want.bytes) return "";
    if (got.bytes.size() != want.bytes.size()) return "sizes differ";
    const auto at = std::mismatch(got.bytes.begin(), got.bytes.end(), want.bytes.begin()).first - got.bytes.begin();
    return "element " + std::to_string(static_cast<size_t>(at) / dtype_bytes(want.dtype)) + ": the bytes differ";
  }
  if (g.size() != w.size()) return "sizes differ";
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i]) && std::isnan(g[i])) continue;
    if (g[i] == w[i]) continue;  // equal infinities (masks) differ by NaN, not by zero
    if (!(std::fabs(static_cast<double>(g[i]) - w[i]) <= tolerance * (std::fabs(w[i]) + 1.0))) {
      return "element " + std::to_string(i) + ": got " + std::to_string(g[i]) + ", ref " + std::to_string(w[i]);
    }
  }
  return "";
}

// Checks every output, and every input after the run (in-place updates), of `got` against ref's
// `want` for case `c`; `widen`: ref ran c's f16/bf16 inputs widened to f32.
inline void check_results(const OpResults& got, const OpResults& want, const DeviceCase& c, bool widen,
                          const char* backend) {
  for (size_t i = 0; i < want.outputs.size(); ++i) {
    const std::string diff = compare_operand(got.outputs[i], want.outputs[i], c.tolerance);
    INFO(c.op << " on " << backend << ", output " << i << ": " << diff);
    CHECK(diff.empty());
  }
  for (size_t i = 0; i < want.inputs.size(); ++i) {
    const HostOperand actual = widen ? got.inputs[i].widened() : got.inputs[i];
    const std::string diff = compare_operand(actual, want.inputs[i], c.tolerance);
    INFO(c.op << " on " << backend << ", input " << i << " after the run (in-place updates): " << diff);
    CHECK(diff.empty());
  }
}

}  // namespace pock::test
