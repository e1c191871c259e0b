// Reference kernels of the elementwise_grad family (f32). Derivatives follow PyTorch at the
// kinks (ReLU at 0 gives 0, clamp bounds are inclusive, ties of max/min split evenly).
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <new>

#include "kernels/params/elementwise.hpp"
#include "kernels/params/linalg.hpp"
#include "kernels/params/reduce.hpp"
#include "kernels/int8_rows.h"
#include "kernels/ref/int8_row_scratch.hpp"
#include "kernels/ref/ref_util.hpp"

namespace pock {
namespace {

// ---- unary: dx = dy * f'(v), v = x (or y for SigmoidGrad / TanhGrad) -------------------------

struct UnaryParams {
  double alpha = 0.01;  // LeakyRelu, Elu, Selu, Celu, ThresholdedRelu
  double gamma = 1.0;   // Selu
  double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();  // Clip
  bool tanh_gelu = false;
};

using DerivativeFn = double (*)(double v, const UnaryParams& p);

double relu_d(double x, const UnaryParams&) { return x > 0.0 ? 1.0 : 0.0; }
double relu6_d(double x, const UnaryParams&) { return x > 0.0 && x < 6.0 ? 1.0 : 0.0; }
double leaky_relu_d(double x, const UnaryParams& p) { return x > 0.0 ? 1.0 : p.alpha; }
double clip_d(double x, const UnaryParams& p) { return x >= p.lo && x <= p.hi ? 1.0 : 0.0; }
double abs_d(double x, const UnaryParams&) { return x > 0.0 ? 1.0 : (x < 0.0 ? -1.0 : 0.0); }
double sigmoid_of(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double silu_d(double x, const UnaryParams&) {
  const double s = sigmoid_of(x);
  return s * (1.0 + x * (1.0 - s));
}
double hardsigmoid_d(double x, const UnaryParams&) { return x > -3.0 && x < 3.0 ? 1.0 / 6.0 : 0.0; }
double hardswish_d(double x, const UnaryParams&) {
  if (x < -3.0) return 0.0;
  if (x <= 3.0) return x / 3.0 + 0.5;
  return 1.0;
}
double gelu_d(double x, const UnaryParams& p) {
  if (p.tanh_gelu) {
    const double k = std::sqrt(2.0 / M_PI);
    const double inner = k * (x + 0.044715 * x * x * x);
    const double t = std::tanh(inner);
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 3.0 * 0.044715 * x * x);
  }
  const double cdf = 0.5 * (1.0 + std::erf(x / std::sqrt(2.0)));
  const double pdf = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
  return cdf + x * pdf;
}
double elu_d(double x, const UnaryParams& p) { return x > 0.0 ? 1.0 : p.alpha * std::exp(x); }
double selu_d(double x, const UnaryParams& p) { return p.gamma * (x > 0.0 ? 1.0 : p.alpha * std::exp(x)); }
double celu_d(double x, const UnaryParams& p) { return x > 0.0 ? 1.0 : std::exp(x / p.alpha); }
double softplus_d(double x, const UnaryParams&) { return sigmoid_of(x); }
double softsign_d(double x, const UnaryParams&) {
  const double d = 1.0 + std::fabs(x);
  return 1.0 / (d * d);
}
double thresholded_relu_d(double x, const UnaryParams& p) { return x > p.alpha ? 1.0 : 0.0; }
// d/dx x tanh(sp(x)) = tanh(sp) + x (1 - tanh(sp)^2) sigmoid(x), sp = log(1 + exp(x)).
double mish_d(double x, const UnaryParams&) {
  const double t = std::tanh(std::log1p(std::exp(x)));
  return t + x * (1.0 - t * t) * sigmoid_of(x);
}
double sigmoid_from_y(double y, const UnaryParams&) { return y * (1.0 - y); }
double tanh_from_y(double y, const UnaryParams&) { return 1.0 - y * y; }

template <DerivativeFn D>
Status unary_grad(const KernelCall& c, const params::ActivationParams& a) {
  UnaryParams p;
  p.alpha = a.alpha;
  p.gamma = a.gamma;
  p.lo = a.lo;
  p.hi = a.hi;
  p.tanh_gelu = a.tanh_gelu;
  const float* dy = c.in_data<float>(0);
  const float* v = c.in_data<float>(1);
  float* dx = c.out_data<float>(0);
  for (int64_t i = 0, n = numel(c.out(0)); i < n; ++i) dx[i] = static_cast<float>(dy[i] * D(v[i], p));
  return Status::ok();
}

// ---- binary: (dy, a, b) -> (da, db) at dy's shape ---------------------------------------------

// share_a: the part of dy that goes to a (the rest goes to b).
template <bool kMax>
Status select_grad(const KernelCall& c) {
  const float* dy = c.in_data<float>(0);
  const float* a = c.in_data<float>(1);
  const float* b = c.in_data<float>(2);
  float* da = c.out_data<float>(0);
  float* db = c.out_data<float>(1);
  const pock_tensor_desc* ins[2] = {&c.in(1), &c.in(2)};
  ref::for_each_broadcast<2>(c.out(0), ins, [&](int64_t o, int64_t i, int64_t j) {
    const bool a_wins = kMax ? a[i] > b[j] : a[i] < b[j];
    const float share_a = a[i] == b[j] ? 0.5f : (a_wins ? 1.0f : 0.0f);
    da[o] = dy[o] * share_a;
    db[o] = dy[o] * (1.0f - share_a);
  });
  return Status::ok();
}

// PReluGrad: (dy, x, slope) -> (dx, dslope) at x's shape; autodiff sums dslope to the slope's shape.
Status prelu_grad(const KernelCall& c) {
  const float* dy = c.in_data<float>(0);
  const float* x = c.in_data<float>(1);
  const float* slope = c.in_data<float>(2);
  float* dx = c.out_data<float>(0);
  float* dslope = c.out_data<float>(1);
  const pock_tensor_desc* ins[2] = {&c.in(1), &c.in(2)};
  ref::for_each_broadcast<2>(c.out(0), ins, [&](int64_t o, int64_t i, int64_t j) {
    const bool positive = x[i] > 0.0f;
    dx[o] = positive ? dy[o] : dy[o] * slope[j];
    dslope[o] = positive ? 0.0f : dy[o] * x[i];
  });
  return Status::ok();
}

Status pow_grad(const KernelCall& c) {
  const float* dy = c.in_data<float>(0);
  const float* a = c.in_data<float>(1);
  const float* b = c.in_data<float>(2);
  float* da = c.out_data<float>(0);
  float* db = c.out_data<float>(1);
  const pock_tensor_desc* ins[2] = {&c.in(1), &c.in(2)};
  ref::for_each_broadcast<2>(c.out(0), ins, [&](int64_t o, int64_t i, int64_t j) {
    const double x = a[i], e = b[j], g = dy[o];
    // d/da: e * a^(e-1), which is 0 for e == 0 (PyTorch masks it there too).
    da[o] = static_cast<float>(e == 0.0 ? 0.0 : g * e * std::pow(x, e - 1.0));
    // d/db: a^e ln a; at a == 0 with e >= 0 the limit is 0 (PyTorch's convention).
    db[o] = static_cast<float>(x == 0.0 && e >= 0.0 ? 0.0 : g * std::pow(x, e) * std::log(x));
  });
  return Status::ok();
}

// ---- reductions -------------------------------------------------------------------------------

// A descriptor of the full-rank view of a reduced tensor (reduced axes kept as size 1), so that
// ref::for_each_broadcast maps every full index to its reduced element.
pock_tensor_desc keepdims_view(const params::ReduceParams& p, const pock_tensor_desc& full) {
  pock_tensor_desc v{};
  v.rank = full.rank;
  for (int d = 0; d < full.rank; ++d) v.dims[d] = p.reduced[d] ? 1 : full.dims[d];
  return v;
}

Status sum_to_shape(const KernelCall& c) {
  const float* x = c.in_data<float>(0);
  float* y = c.out_data<float>(0);
  const int64_t n_out = numel(c.out(0));
  for (int64_t i = 0; i < n_out; ++i) y[i] = 0.0f;
  const pock_tensor_desc* ins[1] = {&c.out(0)};
  ref::for_each_broadcast<1>(c.in(0), ins, [&](int64_t i, int64_t o) { y[o] += x[i]; });
  return Status::ok();
}

Status reduce_sum_grad(const KernelCall& c, const params::ReduceParams& p) {
  const float* dy = c.in_data<float>(0);
  float* dx = c.out_data<float>(0);
  const float scale = static_cast<float>(p.scale);
  const pock_tensor_desc reduced = keepdims_view(p, c.out(0));
  const pock_tensor_desc* ins[1] = {&reduced};
  ref::for_each_broadcast<1>(c.out(0), ins, [&](int64_t o, int64_t r) { dx[o] = dy[r] * scale; });
  return Status::ok();
}

// Per-group scratch of the extremum and product gradients (tie counts; nonzero products and zero
// counts) lives in a buffer made at load, so a step allocates nothing. Input 0, dy, has one
// element per group.
struct GroupScratch {
  params::ReduceParams params;
  std::unique_ptr<double[]> values;
};

template <int kPerGroup>
Status group_scratch_prepare(const pock_op_desc& op, void** state) {
  auto s = std::unique_ptr<GroupScratch>(new (std::nothrow) GroupScratch{});
  if (s) s->values.reset(new (std::nothrow) double[static_cast<size_t>(kPerGroup * numel(op.inputs[0])) + 1]);
  if (!s || !s->values) return Status(Code::kOutOfMemory, std::string(op.op) + ": no memory for per-group scratch");
  POCK_RETURN_IF_ERROR(params::parse(op, &s->params));
  *state = s.release();
  return Status::ok();
}
void group_scratch_release(void* state) { delete static_cast<GroupScratch*>(state); }

template <int kPerGroup>
KernelDef with_group_scratch(KernelDef d) {
  d.prepare = group_scratch_prepare<kPerGroup>;
  d.release = group_scratch_release;
  return d;
}

// (dy, x, m) with m the maximum or the minimum: the elements equal to m share dy evenly.
Status reduce_max_grad(const KernelCall& c) {
  const float* dy = c.in_data<float>(0);
  const float* x = c.in_data<float>(1);
  const float* ymax = c.in_data<float>(2);
  float* dx = c.out_data<float>(0);
  const auto& state = *static_cast<const GroupScratch*>(c.state);
  double* ties = state.values.get();
  for (int64_t r = 0, n = numel(c.in(2)); r < n; ++r) ties[r] = 0.0;
  const pock_tensor_desc reduced = keepdims_view(state.params, c.in(1));
  const pock_tensor_desc* ins[1] = {&reduced};
  ref::for_each_broadcast<1>(c.in(1), ins, [&](int64_t i, int64_t r) { ties[r] += x[i] == ymax[r] ? 1.0 : 0.0; });
  ref::for_each_broadcast<1>(c.in(1), ins, [&](int64_t i, int64_t r) {
    dx[i] = x[i] == ymax[r] ? static_cast<float>(dy[r] / ties[r]) : 0.0f;
  });
  return Status::ok();
}

// dx_i = dy * (product of the group's other elements), without dividing by a zero: with no zero
// in the group it is P / x_i, with one zero only that element gets P (the product of the
// nonzeros), with two or more every element gets 0.
Status reduce_prod_grad(const KernelCall& c) {
  const float* dy = c.in_data<float>(0);
  const float* x = c.in_data<float>(1);
  float* dx = c.out_data<float>(0);
  const auto& state = *static_cast<const GroupScratch*>(c.state);
  const int64_t groups = numel(c.in(0));
  double* nonzero_product = state.values.get();
  double* zeros = nonzero_product + groups;
  for (int64_t r = 0; r < groups; ++r) nonzero_product[r] = 1.0, zeros[r] = 0.0;
  const pock_tensor_desc reduced = keepdims_view(state.params, c.in(1));
  const pock_tensor_desc* ins[1] = {&reduced};
  ref::for_each_broadcast<1>(c.in(1), ins, [&](int64_t i, int64_t r) {
    if (x[i] == 0.0f) zeros[r] += 1.0;
    else nonzero_product[r] *= x[i];
  });
  ref::for_each_broadcast<1>(c.in(1), ins, [&](int64_t i, int64_t r) {
    double others = 0.0;
    if (zeros[r] == 0.0) others = nonzero_product[r] / x[i];
    else if (zeros[r] == 1.0 && x[i] == 0.0f) others = nonzero_product[r];
    dx[i] = static_cast<float>(dy[r] * others);
  });
  return Status::ok();
}

// ---- Linear -----------------------------------------------------------------------------------

int64_t leading_rows(const pock_tensor_desc& t) {
  int64_t rows = 1;
  for (int d = 0; d + 1 < t.rank; ++d) rows *= t.dims[d];
  return rows;
}

// dx[m, k] = sum_n dy[m, n] w[n, k]
Status linear_input_grad(const KernelCall& c, const params::MatMulParams& gemm) {
  const ref::GemmOperand dy = ref::gemm_operand_of(c, 0, gemm.bf16), w = ref::gemm_operand_of(c, 1, gemm.bf16);
  float* dx = c.out_data<float>(0);
  const int64_t rows = leading_rows(c.in(0)), n = c.in(1).dims[0], k = c.in(1).dims[1];
  for (int64_t m = 0; m < rows; ++m) {
    for (int64_t j = 0; j < k; ++j) {
      double acc = 0.0;
      for (int64_t p = 0; p < n; ++p) acc += dy[m * n + p] * w[p * k + j];
      dx[m * k + j] = static_cast<float>(acc);
    }
  }
  return Status::ok();
}

// dx[m, k] = (sum_j q[m, j] w_t[k, j]) * s[m]: q and s quantize the row g = dy[m, :] * scale.
Status linear_int8_input_grad(const KernelCall& c) {
  const float* dy = c.in_data<float>(0);
  const int8_t* wt = c.in_data<int8_t>(1);
  const float* scale = c.in_data<float>(2);
  float* dx = c.out_data<float>(0);
  const int64_t rows = leading_rows(c.in(0)), k = c.in(1).dims[0], n = c.in(1).dims[1];
  int8_t* q = ref::int8_row(c);
  std::vector<float>& g = static_cast<ref::Int8RowScratch*>(c.state)->floats;
  for (int64_t m = 0; m < rows; ++m) {
    for (int64_t j = 0; j < n; ++j) g[static_cast<size_t>(j)] = dy[m * n + j] * scale[j];
    const float s = pock_quantize_row_i8(g.data(), static_cast<uint32_t>(n), q);
    for (int64_t p = 0; p < k; ++p) {
      int32_t acc = 0;
      for (int64_t j = 0; j < n; ++j) acc += int32_t{q[j]} * int32_t{wt[p * n + j]};
      dx[m * k + p] = static_cast<float>(acc) * s;
    }
  }
  return Status::ok();
}

// dw[n, k] = sum_m dy[m, n] x[m, k]
Status linear_weight_grad(const KernelCall& c, const params::MatMulParams& gemm) {
  const ref::GemmOperand dy = ref::gemm_operand_of(c, 0, gemm.bf16), x = ref::gemm_operand_of(c, 1, gemm.bf16);
  float* dw = c.out_data<float>(0);
  const int64_t rows = leading_rows(c.in(0));
  const int64_t n = c.in(0).dims[c.in(0).rank - 1], k = c.in(1).dims[c.in(1).rank - 1];
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < k; ++j) {
      double acc = 0.0;
      for (int64_t m = 0; m < rows; ++m) acc += dy[m * n + i] * x[m * k + j];
      dw[i * k + j] = static_cast<float>(acc);
    }
  }
  return Status::ok();
}

}  // namespace

void register_ref_elementwise_grad(KernelTable& t) {
  t.add(typed_kernel<params::ActivationParams, unary_grad<relu_d>>("ReluGrad", DType::kF32));
  t.add(typed_kernel<params::ActivationParams, unary_grad<relu6_d>>("Relu6Grad", DType::kF32));
  t.add(typed_kernel<params::ActivationParams, unary_grad<leaky_relu_d>>("LeakyReluGrad", DType::kF32));
  t.add(typed_kernel<params::ActivationParams, unary_grad<clip_d>>("ClipGrad", DType::kF32));
  t.add(typed_kernel<params::ActivationParams, unary_grad<gelu_d>>("GeluGrad", DType::kF32));
  t.add(typed_kernel<params::ActivationParams, unary_grad<silu_d>>("SiluGrad", DType::kF32));
  t.add(typed_kernel<params::ActivationParams, unary_grad<hardswish_d>>("HardSwishGrad", DType::kF32));
  t.add(typed_kernel<params::ActivationParams, unary_grad<hardsigmoid_d>>("HardSigmoidGrad", DType::kF32));
  t.add(typed_kernel<params::ActivationParams, unary_grad<abs_d>>("AbsGrad", DType::kF32));
  t.add(typed_kernel<params::ActivationParams, unary_grad<sigmoid_from_y>>("SigmoidGrad", DType::kF32));
  t.add(typed_kernel<params::ActivationParams, unary_grad<tanh_from_y>>("TanhGrad", DType::kF32));
  t.add(typed_kernel<params::ActivationParams, unary_grad<elu_d>>("EluGrad", DType::kF32));
  t.add(typed_kernel<params::ActivationParams, unary_grad<selu_d>>("SeluGrad", DType::kF32));
  t.add(typed_kernel<params::ActivationParams, unary_grad<celu_d>>("CeluGrad", DType::kF32));
  t.add(typed_kernel<params::ActivationParams, unary_grad<softplus_d>>("SoftplusGrad", DType::kF32));
  t.add(typed_kernel<params::ActivationParams, unary_grad<softsign_d>>("SoftsignGrad", DType::kF32));
  t.add(typed_kernel<params::ActivationParams, unary_grad<thresholded_relu_d>>("ThresholdedReluGrad", DType::kF32));
  t.add(typed_kernel<params::ActivationParams, unary_grad<mish_d>>("MishGrad", DType::kF32));
  t.add({"PReluGrad", DType::kF32, prelu_grad});
  t.add({"MaximumGrad", DType::kF32, select_grad<true>});
  t.add({"MinimumGrad", DType::kF32, select_grad<false>});
  t.add({"PowGrad", DType::kF32, pow_grad});
  t.add({"SumToShape", DType::kF32, sum_to_shape});
  t.add(typed_kernel<params::ReduceParams, reduce_sum_grad>("ReduceSumGrad", DType::kF32));
  t.add(with_group_scratch<1>({"ReduceMaxGrad", DType::kF32, reduce_max_grad}));
  t.add(with_group_scratch<2>({"ReduceProdGrad", DType::kF32, reduce_prod_grad}));
  t.add(typed_kernel<params::MatMulParams, linear_input_grad>("LinearInputGrad", DType::kF32));
  t.add(ref::with_int8_row({"LinearInt8InputGrad", DType::kF32, linear_int8_input_grad}));
  t.add(typed_kernel<params::MatMulParams, linear_weight_grad>("LinearWeightGrad", DType::kF32));
  // compute "bf16" gradients whose dy is the compiler's bf16 copy (src/compiler/lowering/bf16_operands.hpp).
  t.add(typed_kernel<params::MatMulParams, linear_input_grad>("LinearInputGrad", DType::kBF16));
  t.add(typed_kernel<params::MatMulParams, linear_weight_grad>("LinearWeightGrad", DType::kBF16));
}

}  // namespace pock
