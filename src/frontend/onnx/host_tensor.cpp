#include "frontend/onnx/host_tensor.hpp"

#include <bit>
#include <cmath>
#include <cstring>

namespace pock::onnx_import {

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
    case DType::kI16: return static_cast<int16_t>(v);
    case DType::kU16: return static_cast<uint16_t>(v);
    case DType::kU32: return static_cast<uint32_t>(v);
    default: return v;  // i64, and u64 kept as its bit pattern
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
      case DType::kF64: put(out, k, f[k]); break;
      case DType::kI16: put(out, k, static_cast<int16_t>(i[k])); break;
      case DType::kU16: put(out, k, static_cast<uint16_t>(i[k])); break;
      case DType::kU32: put(out, k, static_cast<uint32_t>(i[k])); break;
      case DType::kU64: put(out, k, static_cast<uint64_t>(i[k])); break;
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
      case DType::kF64: t.f[k] = get<double>(bytes, k); break;
      case DType::kI16: t.i[k] = get<int16_t>(bytes, k); break;
      case DType::kU16: t.i[k] = get<uint16_t>(bytes, k); break;
      case DType::kU32: t.i[k] = get<uint32_t>(bytes, k); break;
      // Values above INT64_MAX keep their bits (wrap_to and to_bytes give them back unchanged).
      case DType::kU64: t.i[k] = static_cast<int64_t>(get<uint64_t>(bytes, k)); break;
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
