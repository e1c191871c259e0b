// A tensor value known at import time (a Constant, an initializer, a folded shape computation).
// Values are held widened (double / int64) so that folding code is written once per op, and are
// narrowed back to the dtype when they become graph constants.
#pragma once
#include <cstdint>
#include <vector>

#include "ir/float16.hpp"
#include "pock/compiler/ir.hpp"

namespace pock::onnx_import {

struct HostTensor {
  DType dtype = DType::kF32;
  Shape shape;
  std::vector<double> f;   // float dtypes (f32, f16, bf16): numel values
  std::vector<int64_t> i;  // integer and bool dtypes: numel values

  bool is_float() const { return pock::is_float(dtype); }
  int64_t size() const { return numel(shape); }
  // Element k as a number of the other kind (shape code reads float scalars, masks read ints).
  double as_double(int64_t k) const { return is_float() ? f[k] : static_cast<double>(i[k]); }
  int64_t as_int(int64_t k) const { return is_float() ? static_cast<int64_t>(f[k]) : i[k]; }
  std::vector<int64_t> ints() const;  // every element as int64

  // Bytes in `dtype` (float values are rounded to the dtype, as the exporter's runtime would).
  std::vector<uint8_t> to_bytes() const;

  static HostTensor zeros(DType dtype, Shape shape);
  static HostTensor scalar_int(int64_t v, DType dtype = DType::kI64);
  static HostTensor vector_ints(const std::vector<int64_t>& v);
  static HostTensor scalar_float(double v, DType dtype = DType::kF32);
};

// Decodes `bytes` holding numel(shape) little-endian values of `dtype`.
Result<HostTensor> host_tensor_from_bytes(DType dtype, Shape shape, const std::vector<uint8_t>& bytes);

// Rounds a value to what `dtype` can hold (f32 rounding for f32, truncation for integers): folding
// mimics the exporter's arithmetic in the tensor's own type.
double round_to(DType dtype, double v);
int64_t wrap_to(DType dtype, int64_t v);

using pock::bf16_to_float;
using pock::float_to_bf16;
using pock::float_to_half;
using pock::half_to_float;

}  // namespace pock::onnx_import
