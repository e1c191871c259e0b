// The linalg family on cuBLAS: MatMul (batched, batch dims broadcast as in ref) and Linear (bias,
// fused relu/relu6), for f32 (exact f32 products; bf16 products for compute "bf16"; TF32 with
// POCK_CUDA_TF32=1), f16 and bf16 (f32 accumulation, results stored in the op's dtype).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <memory>
#include <new>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_families.hpp"
#include "kernels/cuda/cuda_util.hpp"
#include "kernels/cuda/epilogue.cuh"
#include "kernels/cuda/gemm.hpp"
#include "kernels/cuda/matmul_batch.hpp"
#include "kernels/cuda/stream.hpp"
#include "kernels/params/linalg.hpp"

namespace pock::cuda {
namespace {

bool float_dtype(const pock_tensor_desc& t) {
  return is_dtype(t, POCK_F32) || is_dtype(t, POCK_F16) || is_dtype(t, POCK_BF16);
}

bool same_float_dtype(const pock_op_desc& op) {
  if (!float_dtype(op.inputs[0])) return false;
  for (int32_t i = 1; i < op.num_inputs; ++i) {
    if (op.inputs[i].rank >= 0 && op.inputs[i].dtype != op.inputs[0].dtype) return false;
  }
  return op.num_outputs == 1 && op.outputs[0].dtype == op.inputs[0].dtype;
}

std::string op_name(const pock_op_desc& op) { return std::string(op.op) + " '" + op.name + "'"; }

// ---- MatMul -----------------------------------------------------------------------------------

struct MatMulState {
  params::MatMulParams params;
  GemmShape shape;
  GemmBatch batch;
  void** pointers = nullptr;  // device: A, B and C pointer arrays, when strides cannot say it
  GemmMath math = GemmMath::kExact;
  ~MatMulState() {
    if (pointers) cudaFree(pointers);
  }
};

GemmShape matmul_shape(const pock_op_desc& op, const params::MatMulParams& p) {
  const pock_tensor_desc &a = op.inputs[0], &y = op.outputs[0];
  GemmShape s;
  s.ta = p.transpose_a;
  s.tb = p.transpose_b;
  s.m = y.dims[y.rank - 2];
  s.n = y.dims[y.rank - 1];
  s.k = s.ta ? a.dims[a.rank - 2] : a.dims[a.rank - 1];
  return s;
}

bool matmul_accepts(const pock_op_desc& op) {
  if (op.num_inputs != 2 || !same_float_dtype(op)) return false;
  if (op.inputs[0].rank < 2 || op.inputs[1].rank < 2 || op.outputs[0].rank < 2) return false;
  params::MatMulParams p;
  if (!parse(op, &p).is_ok() || !gemm_attributes_supported(op)) return false;
  return gemm_fits(matmul_shape(op, p), matrix_batch_count(op.outputs[0]));
}

Status matmul_prepare(const pock_op_desc& op, void** state) {
  auto* s = new (std::nothrow) MatMulState;
  if (!s) return Status(Code::kOutOfMemory, op_name(op) + ": state");
  std::unique_ptr<MatMulState> owned(s);
  POCK_RETURN_IF_ERROR(parse(op, &s->params));
  s->shape = matmul_shape(op, s->params);
  s->math = gemm_math(s->params);
  const size_t element = op.inputs[0].dtype == POCK_F32 ? 4 : 2;
  const MatrixBatch mb = matrix_batch(op.inputs[0], op.inputs[1], op.outputs[0]);
  s->batch.count = mb.count;
  if (mb.strided) {
    s->batch.stride_a = mb.stride_a ? s->shape.m * s->shape.k : 0;
    s->batch.stride_b = mb.stride_b ? s->shape.k * s->shape.n : 0;
    s->batch.stride_c = s->shape.m * s->shape.n;
  } else {
    // Broadcasts a stride cannot express: one pointer per matrix, fixed with the tensors.
    std::vector<const void*> host(static_cast<size_t>(3 * mb.count));
    const auto* a = static_cast<const char*>(op.inputs[0].data);
    const auto* b = static_cast<const char*>(op.inputs[1].data);
    auto* c = static_cast<char*>(op.outputs[0].data);
    for (int64_t o = 0; o < mb.count; ++o) {
      host[static_cast<size_t>(o)] = a + mb.a_index[static_cast<size_t>(o)] * s->shape.m * s->shape.k * element;
      host[static_cast<size_t>(mb.count + o)] = b + mb.b_index[static_cast<size_t>(o)] * s->shape.k * s->shape.n * element;
      host[static_cast<size_t>(2 * mb.count + o)] = c + o * s->shape.m * s->shape.n * element;
    }
    POCK_RETURN_IF_ERROR(check(cudaMalloc(reinterpret_cast<void**>(&s->pointers), host.size() * sizeof(void*)),
                               op_name(op) + ": batch pointers"));
    POCK_RETURN_IF_ERROR(check(cudaMemcpy(s->pointers, host.data(), host.size() * sizeof(void*), cudaMemcpyHostToDevice),
                               op_name(op) + ": batch pointers"));
    s->batch.a_pointers = s->pointers;
    s->batch.b_pointers = s->pointers + mb.count;
    s->batch.c_pointers = s->pointers + 2 * mb.count;
  }
  *state = owned.release();
  return Status::ok();
}

void matmul_release(void* state) { delete static_cast<MatMulState*>(state); }

Status matmul(const KernelCall& c) {
  const auto& s = *static_cast<const MatMulState*>(c.state);
  const pock_dtype dtype = c.in(0).dtype;
  if (s.shape.k == 0) {  // an empty sum: zeros, which a GEMM with k = 0 need not write
    return check(cudaMemsetAsync(c.out(0).data, 0, c.out(0).nbytes, current_stream()), c.error("zero fill").message());
  }
  return gemm(dtype, s.shape, 1.0f, c.in(0).data, c.in(1).data, 0.0f, c.out(0).data, s.batch, s.math,
              std::string(c.desc->op) + " '" + c.desc->name + "'");
}

// ---- Linear -----------------------------------------------------------------------------------

struct LinearState {
  params::MatMulParams params;
  GemmMath math = GemmMath::kExact;
};

bool linear_accepts(const pock_op_desc& op) {
  if (op.num_inputs < 2 || !same_float_dtype(op)) return false;
  const pock_tensor_desc &x = op.inputs[0], &w = op.inputs[1], &y = op.outputs[0];
  if (x.rank < 1 || w.rank != 2 || w.dims[1] != last_dim(x)) return false;
  if (op.num_inputs > 2 && op.inputs[2].rank >= 0 && (op.inputs[2].rank != 1 || op.inputs[2].dims[0] != w.dims[0])) return false;
  if (!gemm_attributes_supported(op)) return false;
  return gemm_fits({false, true, leading_rows(x), w.dims[0], w.dims[1]}, 1) && numel(y) == leading_rows(x) * w.dims[0];
}

Status linear_prepare(const pock_op_desc& op, void** state) {
  auto* s = new (std::nothrow) LinearState;
  if (!s) return Status(Code::kOutOfMemory, op_name(op) + ": state");
  if (Status st = parse(op, &s->params); !st.is_ok()) {
    delete s;
    return st;
  }
  s->math = gemm_math(s->params);
  *state = s;
  return Status::ok();
}

void linear_release(void* state) { delete static_cast<LinearState*>(state); }

template <typename T>
Status linear_typed(const KernelCall& c, const LinearState& s) {
  const int64_t rows = leading_rows(c.in(0)), n = c.in(1).dims[0], k = c.in(1).dims[1];
  T* y = c.out_data<T>(0);
  cudaStream_t stream = current_stream();
  const std::string what = std::string(c.desc->op) + " '" + c.desc->name + "'";
  const bool has_bias = c.num_inputs() > 2 && c.has_input(2);
  if (has_bias) {
    POCK_RETURN_IF_ERROR(check(launch_map(rows * n, stream, FillRowsWithBias<T>{c.in_data<T>(2), y, n}), what + ": bias"));
  } else if (k == 0) {
    POCK_RETURN_IF_ERROR(check(cudaMemsetAsync(y, 0, c.out(0).nbytes, stream), what + ": zero fill"));
  }
  if (k > 0) {
    // y [rows, n] = x [rows, k] wᵀ, w stored [n, k]; plus the bias already in y.
    POCK_RETURN_IF_ERROR(gemm(c.in(0).dtype, {false, true, rows, n, k}, 1.0f, c.in(0).data, c.in(1).data,
                              has_bias ? 1.0f : 0.0f, y, GemmBatch{}, s.math, what));
  }
  if (s.params.activation != Activation::kNone) {
    POCK_RETURN_IF_ERROR(check(launch_map(rows * n, stream, ApplyActivation<T>{y, s.params.activation}), what + ": activation"));
  }
  return Status::ok();
}

Status linear(const KernelCall& c) {
  const auto& s = *static_cast<const LinearState*>(c.state);
  switch (c.in(0).dtype) {
    case POCK_F16: return linear_typed<__half>(c, s);
    case POCK_BF16: return linear_typed<__nv_bfloat16>(c, s);
    default: return linear_typed<float>(c, s);
  }
}

KernelDef def(const char* op, DType dtype, KernelFn run, KernelPrepareFn prepare, KernelReleaseFn release,
              bool (*accepts)(const pock_op_desc&)) {
  KernelDef d{op, dtype, run, kCudaScore, prepare, release};
  d.accepts = accepts;
  return d;
}

}  // namespace

void register_linalg(KernelTable& t) {
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    t.add(def("MatMul", dtype, matmul, matmul_prepare, matmul_release, matmul_accepts));
    t.add(def("Linear", dtype, linear, linear_prepare, linear_release, linear_accepts));
  }
}

}  // namespace pock::cuda
