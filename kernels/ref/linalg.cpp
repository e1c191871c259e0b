// Reference kernels of the linalg family: MatMul (f32 and f64) and Linear, f32 with double
// accumulation (compute "bf16": f32 operands rounded to bf16 first, bf16 ones read as they are), and LinearInt8 (int8 rows times int8 weights, int32 accumulation).
#include <type_traits>
#include <utility>

#include "ir/activation.hpp"
#include "kernels/params/linalg.hpp"
#include "kernels/int8_rows.h"
#include "kernels/ref/int8_row_scratch.hpp"
#include "kernels/ref/ref_util.hpp"

namespace pock {
namespace {

// The leading (batch) dims of a matrix operand, as a descriptor for ref::for_each_broadcast.
pock_tensor_desc batch_dims(const pock_tensor_desc& t) {
  pock_tensor_desc b{};
  b.rank = t.rank - 2;
  for (int i = 0; i < b.rank; ++i) b.dims[i] = t.dims[i];
  return b;
}

// One [M, N] product: c = op(a) op(b), where op transposes when asked.
// Element (i, k) of op(a) is a[i * sa_row + k * sa_col]; likewise for b. A and B index like
// pointers: double* (f64, read as it is) or ref::GemmOperand (f32 or bf16, compute "bf16").
template <typename A, typename B, typename T>
void gemm(A a, B b, T* c, int64_t m, int64_t n, int64_t k, bool ta, bool tb) {
  const int64_t sa_row = ta ? 1 : k, sa_col = ta ? m : 1;
  const int64_t sb_row = tb ? 1 : n, sb_col = tb ? k : 1;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0.0;
      for (int64_t p = 0; p < k; ++p) acc += double{a[i * sa_row + p * sa_col]} * double{b[p * sb_row + j * sb_col]};
      c[i * n + j] = static_cast<T>(acc);
    }
  }
}

// A matrix operand offset by `e` elements.
inline const double* offset(const double* p, int64_t e) { return p + e; }
inline ref::GemmOperand offset(ref::GemmOperand p, int64_t e) {
  p.data = static_cast<const uint8_t*>(p.data) + e * (p.stored_bf16 ? 2 : 4);
  return p;
}

// T is the output's dtype: f64 (f64 operands) or f32 (f32 or, with compute "bf16", bf16 operands).
template <typename T>
Status matmul(const KernelCall& c, const params::MatMulParams& p) {
  const pock_tensor_desc& A = c.in(0);
  const pock_tensor_desc& B = c.in(1);
  const pock_tensor_desc& Y = c.out(0);
  const bool ta = p.transpose_a;
  const bool tb = p.transpose_b;
  const int64_t m = Y.dims[Y.rank - 2];
  const int64_t n = Y.dims[Y.rank - 1];
  const int64_t k = ta ? A.dims[A.rank - 2] : A.dims[A.rank - 1];
  T* y = c.out_data<T>(0);
  const pock_tensor_desc a_batch = batch_dims(A), b_batch = batch_dims(B), y_batch = batch_dims(Y);
  const pock_tensor_desc* ins[2] = {&a_batch, &b_batch};
  auto operands = [&]() {
    if constexpr (std::is_same_v<T, double>) return std::pair{c.in_data<double>(0), c.in_data<double>(1)};
    else return std::pair{ref::gemm_operand_of(c, 0, p.bf16), ref::gemm_operand_of(c, 1, p.bf16)};
  };
  const auto ab = operands();  // not a structured binding: clang 14 cannot capture one
  const auto a = ab.first;
  const auto b = ab.second;
  // Offsets from for_each_broadcast count whole matrices; scale them by each matrix's size.
  ref::for_each_broadcast<2>(y_batch, ins, [&](int64_t o, int64_t i, int64_t j) {
    gemm(offset(a, i * m * k), offset(b, j * k * n), y + o * m * n, m, n, k, ta, tb);
  });
  return Status::ok();
}

Status linear(const KernelCall& c, const params::MatMulParams& p) {
  const pock_tensor_desc& X = c.in(0);
  const int64_t k = X.dims[X.rank - 1];
  const int64_t n = c.in(1).dims[0];
  int64_t rows = 1;  // every leading dim of x is a batch of rows
  for (int d = 0; d + 1 < X.rank; ++d) rows *= X.dims[d];
  const ref::GemmOperand x = ref::gemm_operand_of(c, 0, p.bf16), w = ref::gemm_operand_of(c, 1, p.bf16);
  const float* bias = c.has_input(2) ? c.in_data<float>(2) : nullptr;
  float* y = c.out_data<float>(0);
  const Activation activation = p.activation;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = bias ? static_cast<double>(bias[j]) : 0.0;
      for (int64_t q = 0; q < k; ++q) acc += x[r * k + q] * w[j * k + q];
      y[r * n + j] = apply_activation(activation, static_cast<float>(acc));
    }
  }
  return Status::ok();
}

// y[r, j] = (sum_p q[r, p] w[j, p]) * s[r] * scale[j] + bias[j], q and s from int8_rows.h.
Status linear_int8(const KernelCall& c) {
  const pock_tensor_desc& X = c.in(0);
  const int64_t k = X.dims[X.rank - 1];
  const int64_t n = c.in(1).dims[0];
  int64_t rows = 1;
  for (int d = 0; d + 1 < X.rank; ++d) rows *= X.dims[d];
  const float* x = c.in_data<float>(0);
  const int8_t* w = c.in_data<int8_t>(1);
  const float* scale = c.in_data<float>(2);
  const float* bias = c.has_input(3) ? c.in_data<float>(3) : nullptr;
  float* y = c.out_data<float>(0);
  int8_t* q = ref::int8_row(c);
  for (int64_t r = 0; r < rows; ++r) {
    const float s = pock_quantize_row_i8(x + r * k, static_cast<uint32_t>(k), q);
    for (int64_t j = 0; j < n; ++j) {
      int32_t acc = 0;
      for (int64_t p = 0; p < k; ++p) acc += int32_t{q[p]} * int32_t{w[j * k + p]};
      const float v = static_cast<float>(acc) * s * scale[j];
      y[r * n + j] = bias ? v + bias[j] : v;
    }
  }
  return Status::ok();
}

}  // namespace

void register_ref_linalg(KernelTable& t) {
  t.add(ref::with_int8_row({"LinearInt8", DType::kF32, linear_int8}));
  t.add(typed_kernel<params::MatMulParams, matmul<float>>("MatMul", DType::kF32));
  t.add(typed_kernel<params::MatMulParams, matmul<double>>("MatMul", DType::kF64));
  t.add(typed_kernel<params::MatMulParams, linear>("Linear", DType::kF32));
  // compute "bf16" GEMMs whose first operand is the compiler's bf16 copy of an activation.
  t.add(typed_kernel<params::MatMulParams, matmul<float>>("MatMul", DType::kBF16));
  t.add(typed_kernel<params::MatMulParams, linear>("Linear", DType::kBF16));
}

}  // namespace pock
