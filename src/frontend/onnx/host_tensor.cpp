#include "frontend/onnx/host_tensor.hpp"

#include <bit>
#include <cmath>
#include <cstring>

namespace pock::onnx_import {

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ff;
  float magnitude;
  if (exp == 0) {
    magnitude = std::ldexp(static_cast<float>(mant), -24);  // subnormal
  } else if (exp == 31) {
    magnitude = mant ? NAN : INFINITY;
  } else {
    magnitude = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  }
  uint32_t bits = std::bit_cast<uint32_t>(magnitude) | sign;
  return std::bit_cast<float>(bits);
}

uint16_t float_to_half(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  const float a = std::fabs(f);
  if (std::isnan(f)) return sign | 0x7e00;
  if (a >= 65520.0f) return sign | 0x7c00;  // rounds to infinity
  if (a < std::ldexp(1.0f, -14)) {          // subnormal: multiples of 2^-24, round to nearest even
    return sign | static_cast<uint16_t>(std::nearbyint(std::ldexp(a, 24)));
  }
  int e = 0;
  const float m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  uint32_t mant = static_cast<uint32_t>(std::nearbyint(std::ldexp(m, 11)));  // 11 significant bits
  if (mant == 2048) {
    mant = 1024;
    ++e;
  }
  const uint32_t exp = static_cast<uint32_t>(e + 14);
  return sign | static_cast<uint16_t>((exp << 10) | (mant & 0x3ff));
}

float bf16_to_float(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

uint16_t float_to_bf16(float f) {
  uint32_t bits = std::bit_cast<uint32_t>(f);
  if (std::isnan(f)) return 0x7fc0;
  bits += 0x7fff + ((bits >> 16) & 1);  // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}

double round_to(DType dtype, double v) {
  switch (dtype) {
    case DType::kF32: return static_cast<double>(static_cast<float>(v));
    case DType::kF16: return half_to_float(float_to_half(static_cast<float>(v)));
    case DType::kBF16: return bf16_to_float(float_to_bf16(static_cast<float>(v)));
    default: return v;
  }
}

int64_t wrap_to(DType dtype, int64_t v) {
  switch (dtype) {
    case DType::kI32: return static_cast<int32_t>(v);
    case DType::kI8: return static_cast<int8_t>(v);
    case DType::kU8: return static_cast<uint8_t>(v);
    case DType::kBool: return v != 0;
    default: return v;
  }
}

std::vector<int64_t> HostTensor::ints() const {
  std::vector<int64_t> out(static_cast<size_t>(size()));
  for (int64_t k = 0; k < size(); ++k) out[k] = as_int(k);
  return out;
}

namespace {

template <typename T>
void put(std::vector<uint8_t>& out, int64_t k, T v) {
  std::memcpy(out.data() + k * sizeof(T), &v, sizeof(T));
}

template <typename T>
T get(const std::vector<uint8_t>& in, int64_t k) {
  T v;
  std::memcpy(&v, in.data() + k * sizeof(T), sizeof(T));
  return v;
}

}  // namespace

std::vector<uint8_t> HostTensor::to_bytes() const {
  const int64_t n = size();
  std::vector<uint8_t> out(static_cast<size_t>(n) * dtype_size(dtype));
  for (int64_t k = 0; k < n; ++k) {
    switch (dtype) {
      case DType::kF32: put(out, k, static_cast<float>(f[k])); break;
      case DType::kF16: put(out, k, float_to_half(static_cast<float>(f[k]))); break;
      case DType::kBF16: put(out, k, float_to_bf16(static_cast<float>(f[k]))); break;
      case DType::kI32: put(out, k, static_cast<int32_t>(i[k])); break;
      case DType::kI64: put(out, k, i[k]); break;
      case DType::kI8: put(out, k, static_cast<int8_t>(i[k])); break;
      case DType::kU8: put(out, k, static_cast<uint8_t>(i[k])); break;
      case DType::kBool: put(out, k, static_cast<uint8_t>(i[k] != 0)); break;
    }
  }
  return out;
}

Result<HostTensor> host_tensor_from_bytes(DType dtype, Shape shape, const std::vector<uint8_t>& bytes) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  const int64_t n = t.size();
  if (n < 0 || bytes.size() != static_cast<size_t>(n) * dtype_size(dtype)) {
    return Status(Code::kInvalidArgument, "tensor data holds " + std::to_string(bytes.size()) + " bytes but shape " +
                                              shape_str(t.shape) + " of " + dtype_name(dtype) + " needs " +
                                              std::to_string(n * static_cast<int64_t>(dtype_size(dtype))));
  }
  if (t.is_float()) t.f.resize(static_cast<size_t>(n));
  else t.i.resize(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    switch (dtype) {
      case DType::kF32: t.f[k] = get<float>(bytes, k); break;
      case DType::kF16: t.f[k] = half_to_float(get<uint16_t>(bytes, k)); break;
      case DType::kBF16: t.f[k] = bf16_to_float(get<uint16_t>(bytes, k)); break;
      case DType::kI32: t.i[k] = get<int32_t>(bytes, k); break;
      case DType::kI64: t.i[k] = get<int64_t>(bytes, k); break;
      case DType::kI8: t.i[k] = get<int8_t>(bytes, k); break;
      case DType::kU8: t.i[k] = get<uint8_t>(bytes, k); break;
      case DType::kBool: t.i[k] = get<uint8_t>(bytes, k) != 0; break;
    }
  }
  return t;
}

HostTensor HostTensor::zeros(DType dtype, Shape shape) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  if (t.is_float()) t.f.assign(static_cast<size_t>(t.size()), 0.0);
  else t.i.assign(static_cast<size_t>(t.size()), 0);
  return t;
}

HostTensor HostTensor::scalar_int(int64_t v, DType dtype) {
  HostTensor t = zeros(dtype, {});
  t.i[0] = v;
  return t;
}

HostTensor HostTensor::vector_ints(const std::vector<int64_t>& v) {
  HostTensor t = zeros(DType::kI64, {static_cast<int64_t>(v.size())});
  t.i = v;
  return t;
}

HostTensor HostTensor::scalar_float(double v, DType dtype) {
  HostTensor t = zeros(dtype, {});
  t.f[0] = round_to(dtype, v);
  return t;
}

}  // namespace pock::onnx_import
