// Reference kernels of the quantize family, as ONNX's operator definitions state them: rounding
// half to even, saturation to the target dtype (kernels/ref/quantize_values.hpp), products summed
// in int32.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/params/quantize.hpp"
#include "kernels/ref/quantize_values.hpp"
#include "kernels/ref/ref_util.hpp"

namespace pock {
namespace {

using params::QuantizeParams;
using ref::integer_at;
using ref::store_saturated;

// Which scale / zero point element applies to element i of x: 0 per tensor, else the index along
// the axis (x viewed as [outer, count, inner]).
struct ScaleIndex {
  int64_t count = 1, inner = 1;
  int64_t operator()(int64_t i) const { return count == 1 ? 0 : (i / inner) % count; }
};

ScaleIndex scale_index(const pock_tensor_desc& x, const pock_tensor_desc& scale, int64_t axis) {
  ScaleIndex s;
  s.count = numel(scale);
  if (s.count == 1) return s;
  if (axis < 0) axis += x.rank;
  for (int d = static_cast<int>(axis) + 1; d < x.rank; ++d) s.inner *= x.dims[d];
  return s;
}

Status quantize_linear(const KernelCall& c, const QuantizeParams& p) {
  const pock_tensor_desc& x = c.in(0);
  const float* xs = c.in_data<float>(0);
  const float* scale = c.in_data<float>(1);
  const ScaleIndex at = scale_index(x, c.in(1), p.axis);
  const int64_t n = numel(x);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = at(i);
    store_saturated(c.out(0), i, xs[i] / scale[k], integer_at(c.in(2), numel(c.in(2)) == 1 ? 0 : k));
  }
  return Status::ok();
}

Status dequantize_linear(const KernelCall& c, const QuantizeParams& p) {
  const pock_tensor_desc& x = c.in(0);
  const float* scale = c.in_data<float>(1);
  const ScaleIndex at = scale_index(x, c.in(1), p.axis);
  float* y = c.out_data<float>(0);
  const int64_t n = numel(x);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = at(i);
    const int32_t zero_point = c.has_input(2) ? integer_at(c.in(2), numel(c.in(2)) == 1 ? 0 : k) : 0;
    // In f32, as ONNX's reference: (x - zero_point) is exact, the product rounds once.
    y[i] = static_cast<float>(integer_at(x, i) - zero_point) * scale[k];
  }
  return Status::ok();
}

// ONNX's definition: the range [min(x, 0), max(x, 0)] onto [0, 255]. All-zero x has no range: its
// scale is 0, its zero point 0 and y 0 (ONNX's formula would divide by zero).
Status dynamic_quantize_linear(const KernelCall& c, const QuantizeParams&) {
  const float* x = c.in_data<float>(0);
  const int64_t n = numel(c.in(0));
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  const float scale = (hi - lo) / 255.0f;
  int32_t zero_point = 0;
  if (scale > 0.0f) zero_point = static_cast<int32_t>(std::clamp(std::nearbyint(0.0f - lo / scale), 0.0f, 255.0f));
  for (int64_t i = 0; i < n; ++i) {
    if (scale > 0.0f) {
      store_saturated(c.out(0), i, x[i] / scale, zero_point);
    } else {
      c.out_data<uint8_t>(0)[i] = 0;
    }
  }
  *c.out_data<float>(1) = scale;
  *c.out_data<uint8_t>(2) = static_cast<uint8_t>(zero_point);
  return Status::ok();
}

// Calls f(out_matrix, a_matrix, b_matrix) for each matrix of a batched product whose batch dims
// broadcast (matrix offsets in elements).
template <typename F>
void for_each_matrix(const pock_tensor_desc& a, const pock_tensor_desc& b, const pock_tensor_desc& out, F&& f) {
  const int batch_rank = out.rank - 2;
  const int64_t m = out.dims[out.rank - 2], n = out.dims[out.rank - 1], k = a.dims[a.rank - 1];
  pock_tensor_desc out_batch = out, a_batch = a, b_batch = b;
  out_batch.rank = batch_rank;
  a_batch.rank = a.rank - 2;
  b_batch.rank = b.rank - 2;
  const pock_tensor_desc* const operands[2] = {&a_batch, &b_batch};
  if (batch_rank == 0) {
    f(int64_t{0}, int64_t{0}, int64_t{0});
    return;
  }
  ref::for_each_broadcast<2>(out_batch, operands, [&](int64_t o, int64_t ia, int64_t ib) {
    f(o * m * n, ia * m * k, ib * k * n);
  });
}

// out[i, j] = sum_k (a[i, k] - a_zp(i)) (b[k, j] - b_zp(j)) in int32, for every matrix.
template <typename Store>
void integer_product(const KernelCall& c, int a_in, int a_zp, int b_in, int b_zp, Store&& store) {
  const pock_tensor_desc &a = c.in(a_in), &b = c.in(b_in), &out = c.out(0);
  const int64_t m = out.dims[out.rank - 2], n = out.dims[out.rank - 1], k = a.dims[a.rank - 1];
  const bool a_has = a_zp >= 0 && c.has_input(a_zp), b_has = b_zp >= 0 && c.has_input(b_zp);
  const bool a_per_row = a_has && numel(c.in(a_zp)) > 1, b_per_col = b_has && numel(c.in(b_zp)) > 1;
  for_each_matrix(a, b, out, [&](int64_t o, int64_t ao, int64_t bo) {
    for (int64_t i = 0; i < m; ++i) {
      const int32_t za = a_has ? integer_at(c.in(a_zp), a_per_row ? i : 0) : 0;
      for (int64_t j = 0; j < n; ++j) {
        const int32_t zb = b_has ? integer_at(c.in(b_zp), b_per_col ? j : 0) : 0;
        int32_t acc = 0;
        for (int64_t t = 0; t < k; ++t) acc += (integer_at(a, ao + i * k + t) - za) * (integer_at(b, bo + t * n + j) - zb);
        store(o + i * n + j, j, acc);
      }
    }
  });
}

Status matmul_integer(const KernelCall& c, const QuantizeParams&) {
  int32_t* y = c.out_data<int32_t>(0);
  integer_product(c, 0, 2, 1, 3, [&](int64_t at, int64_t, int32_t acc) { y[at] = acc; });
  return Status::ok();
}

Status qlinear_matmul(const KernelCall& c, const QuantizeParams&) {
  const float a_scale = *c.in_data<float>(1), y_scale = *c.in_data<float>(6);
  const float* b_scale = c.in_data<float>(4);
  const bool b_per_col = numel(c.in(4)) > 1;
  const int32_t y_zero_point = integer_at(c.in(7), 0);
  integer_product(c, 0, 2, 3, 5, [&](int64_t at, int64_t j, int32_t acc) {
    const float multiplier = a_scale * b_scale[b_per_col ? j : 0] / y_scale;
    store_saturated(c.out(0), at, static_cast<float>(acc) * multiplier, y_zero_point);
  });
  return Status::ok();
}

}  // namespace

void register_ref_quantize(KernelTable& t) {
  t.add(typed_kernel<QuantizeParams, quantize_linear>("QuantizeLinear", DType::kF32));
  for (DType d : {DType::kU8, DType::kI8, DType::kI32}) {
    t.add(typed_kernel<QuantizeParams, dequantize_linear>("DequantizeLinear", d));
  }
  t.add(typed_kernel<QuantizeParams, dynamic_quantize_linear>("DynamicQuantizeLinear", DType::kF32));
  for (DType d : {DType::kU8, DType::kI8}) {
    t.add(typed_kernel<QuantizeParams, matmul_integer>("MatMulInteger", d));
    t.add(typed_kernel<QuantizeParams, qlinear_matmul>("QLinearMatMul", d));
  }
}

}  // namespace pock
