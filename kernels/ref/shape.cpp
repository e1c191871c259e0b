// Reference kernels of the shape family. These ops move elements without reading them, so one
// kernel per element width (an unsigned integer of 1, 2, 4 or 8 bytes) serves every dtype.
// Attributes were validated by the schema when the graph was built and again when the blob loaded.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/params/shape.hpp"
#include "kernels/ref/ref_util.hpp"

namespace pock {
namespace {

size_t element_size(const pock_tensor_desc& t) { return dtype_size(static_cast<DType>(t.dtype)); }

// Row-major element strides of `t`.
void strides_of(const pock_tensor_desc& t, int64_t* strides) {
  int64_t stride = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= t.dims[d];
  }
}

int normalized_axis(int64_t axis, int rank) { return static_cast<int>(axis < 0 ? axis + rank : axis); }

// Steps a row-major multi-index over `dims` by one element.
void advance(int64_t* index, const int64_t* dims, int rank) {
  for (int d = rank - 1; d >= 0; --d) {
    if (++index[d] < dims[d]) return;
    index[d] = 0;
  }
}

// Visits the output in order; the matching input offset is base + sum(index[d] * step[d]).
template <typename F>
void strided_walk(const pock_tensor_desc& out, int64_t base, const int64_t* step, F&& f) {
  int64_t index[kMaxRank] = {};
  int64_t offset = base;
  for (int64_t o = 0, n = numel(out); o < n; ++o) {
    f(o, offset);
    for (int d = out.rank - 1; d >= 0; --d) {
      offset += step[d];
      if (++index[d] < out.dims[d]) break;
      offset -= step[d] * index[d];
      index[d] = 0;
    }
  }
}

// Reshape, Flatten, Squeeze, Unsqueeze: same bytes, new shape.
Status copy_bytes(const KernelCall& c) {
  if (c.out(0).data != c.in(0).data) std::memmove(c.out(0).data, c.in(0).data, c.out(0).nbytes);
  return Status::ok();
}

template <typename T>
struct TransposeKernel {
  static Status run(const KernelCall& c, const params::ShapeParams& p) {
    const pock_tensor_desc& x = c.in(0);
    int64_t in_strides[kMaxRank] = {}, step[kMaxRank] = {};
    strides_of(x, in_strides);
    const IntSpan perm = span_of(p.perm);
    for (int d = 0; d < x.rank; ++d) step[d] = in_strides[perm.empty() ? x.rank - 1 - d : perm[d]];
    if constexpr (sizeof(T) == sizeof(float)) {
      if (c.out(0).dtype == POCK_BF16) {  // output_dtype "bf16": f32 values rounded as Cast rounds
        const float* in = c.in_data<float>(0);
        uint16_t* out = c.out_data<uint16_t>(0);
        strided_walk(c.out(0), 0, step, [&](int64_t o, int64_t i) { out[o] = float_to_bf16(in[i]); });
        return Status::ok();
      }
    }
    const T* in = c.in_data<T>(0);
    T* out = c.out_data<T>(0);
    strided_walk(c.out(0), 0, step, [&](int64_t o, int64_t i) { out[o] = in[i]; });
    return Status::ok();
  }
};

// Every input contributes one contiguous chunk per index of the dims before the axis.
Status concat(const KernelCall& c, const params::ShapeParams& p) {
  const pock_tensor_desc& y = c.out(0);
  const int axis = normalized_axis(p.axis, y.rank);
  int64_t outer = 1;
  for (int d = 0; d < axis; ++d) outer *= y.dims[d];
  const size_t es = element_size(y);
  auto* dst = static_cast<uint8_t*>(y.data);
  for (int64_t o = 0; o < outer; ++o) {
    for (int i = 0; i < c.num_inputs(); ++i) {
      const size_t chunk = static_cast<size_t>(numel(c.in(i)) / std::max<int64_t>(outer, 1)) * es;
      std::memcpy(dst, static_cast<const uint8_t*>(c.in(i).data) + o * chunk, chunk);
      dst += chunk;
    }
  }
  return Status::ok();
}

Status split(const KernelCall& c, const params::ShapeParams& p) {
  const pock_tensor_desc& x = c.in(0);
  const int axis = normalized_axis(p.axis, x.rank);
  int64_t outer = 1;
  for (int d = 0; d < axis; ++d) outer *= x.dims[d];
  const size_t es = element_size(x);
  const auto* src = static_cast<const uint8_t*>(x.data);
  for (int64_t o = 0; o < outer; ++o) {
    for (int i = 0; i < c.num_outputs(); ++i) {
      const size_t chunk = static_cast<size_t>(numel(c.out(i)) / std::max<int64_t>(outer, 1)) * es;
      std::memcpy(static_cast<uint8_t*>(c.out(i).data) + o * chunk, src, chunk);
      src += chunk;
    }
  }
  return Status::ok();
}

// ONNX Slice: the first index taken on an axis, after negative wrap and clamping for the step's
// direction (the schema computed the count the same way).
int64_t slice_first(int64_t dim, int64_t start, int64_t step) {
  if (start < 0) start += dim;
  return step > 0 ? std::clamp<int64_t>(start, 0, dim) : std::clamp<int64_t>(start, 0, dim - 1);
}

template <typename T>
struct SliceKernel {
  static Status run(const KernelCall& c, const params::ShapeParams& p) {
    const pock_tensor_desc& x = c.in(0);
    if (numel(c.out(0)) == 0) return Status::ok();
    const IntSpan starts = span_of(p.starts), axes = span_of(p.axes), steps = span_of(p.steps);
    int64_t in_strides[kMaxRank] = {}, step[kMaxRank] = {};
    strides_of(x, in_strides);
    for (int d = 0; d < x.rank; ++d) step[d] = in_strides[d];
    int64_t base = 0;
    for (int64_t i = 0; i < starts.size; ++i) {
      const int d = normalized_axis(axes.empty() ? i : axes[i], x.rank);
      const int64_t s = steps.empty() ? 1 : steps[i];
      const int64_t limit = int64_t{1} << 62;  // as in the schema: keeps "to the end" bounds from overflowing
      base += slice_first(x.dims[d], std::clamp(starts[i], -limit, limit), s) * in_strides[d];
      step[d] = s * in_strides[d];
    }
    const T* in = c.in_data<T>(0);
    T* out = c.out_data<T>(0);
    strided_walk(c.out(0), base, step, [&](int64_t o, int64_t i) { out[o] = in[i]; });
    return Status::ok();
  }
};

template <typename T>
struct ExpandKernel {
  static Status run(const KernelCall& c, const params::ShapeParams&) {
    const T* in = c.in_data<T>(0);
    T* out = c.out_data<T>(0);
    const pock_tensor_desc* ins[1] = {&c.in(0)};
    ref::for_each_broadcast<1>(c.out(0), ins, [&](int64_t o, int64_t i) { out[o] = in[i]; });
    return Status::ok();
  }
};

// IEEE binary16 from float, rounding to nearest even.
uint16_t to_f16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const int32_t biased = static_cast<int32_t>((bits >> 23) & 0xffu);
  uint32_t mantissa = bits & 0x7fffffu;
  if (biased == 0xff) return sign | 0x7c00u | (mantissa ? 0x200u : 0u);  // inf, NaN
  const int32_t exponent = biased - 127 + 15;
  if (exponent >= 31) return sign | 0x7c00u;  // overflow -> inf
  int shift = 13;
  uint32_t base = 0;
  if (exponent <= 0) {  // subnormal half: shift the implicit bit in
    if (exponent < -10) return sign;
    mantissa |= 0x800000u;
    shift = 14 - exponent;
  } else {
    base = static_cast<uint32_t>(exponent) << 10;
  }
  uint32_t half = base + (mantissa >> shift);  // a rounding carry may roll into the exponent: correct
  const uint32_t rest = mantissa & ((1u << shift) - 1u), midway = 1u << (shift - 1);
  if (rest > midway || (rest == midway && (half & 1u))) ++half;
  return static_cast<uint16_t>(sign | half);
}

// bfloat16 from float, rounding to nearest even.
uint16_t to_bf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

// Pad's fill value in the tensor's own encoding.
template <typename T>
T fill_value(double value, pock_dtype dtype) {
  uint8_t bytes[8] = {};
  switch (dtype) {
    case POCK_F32: { const float v = static_cast<float>(value); std::memcpy(bytes, &v, 4); break; }
    case POCK_F16: { const uint16_t v = to_f16(static_cast<float>(value)); std::memcpy(bytes, &v, 2); break; }
    case POCK_BF16: { const uint16_t v = to_bf16(static_cast<float>(value)); std::memcpy(bytes, &v, 2); break; }
    case POCK_I32: { const auto v = static_cast<int32_t>(value); std::memcpy(bytes, &v, 4); break; }
    case POCK_I64: { const auto v = static_cast<int64_t>(value); std::memcpy(bytes, &v, 8); break; }
    case POCK_I8: { const auto v = static_cast<int8_t>(value); std::memcpy(bytes, &v, 1); break; }
    case POCK_U8: { const auto v = static_cast<uint8_t>(value); std::memcpy(bytes, &v, 1); break; }
    case POCK_BOOL: bytes[0] = value != 0.0 ? 1 : 0; break;
    case POCK_F64: std::memcpy(bytes, &value, 8); break;
    case POCK_I16: { const auto v = static_cast<int16_t>(value); std::memcpy(bytes, &v, 2); break; }
    case POCK_U16: { const auto v = static_cast<uint16_t>(value); std::memcpy(bytes, &v, 2); break; }
    case POCK_U32: { const auto v = static_cast<uint32_t>(value); std::memcpy(bytes, &v, 4); break; }
    case POCK_U64: { const auto v = static_cast<uint64_t>(value); std::memcpy(bytes, &v, 8); break; }
  }
  T out;
  std::memcpy(&out, bytes, sizeof(T));
  return out;
}

template <typename T>
struct PadKernel {
  static Status run(const KernelCall& c, const params::ShapeParams& p) {
    const pock_tensor_desc& x = c.in(0);
    const pock_tensor_desc& y = c.out(0);
    const IntSpan pads = span_of(p.pads);
    const T fill = fill_value<T>(p.value, y.dtype);
    int64_t in_strides[kMaxRank] = {}, index[kMaxRank] = {};
    strides_of(x, in_strides);
    const T* in = c.in_data<T>(0);
    T* out = c.out_data<T>(0);
    for (int64_t o = 0, n = numel(y); o < n; ++o) {
      bool inside = true;
      int64_t offset = 0;
      for (int d = 0; d < y.rank && inside; ++d) {
        // pads[d] is the begin pad of axis d
        const int64_t i = params::pad_source(index[d] - pads[d], x.dims[d], p.pad_mode);
        inside = i >= 0;
        offset += i * in_strides[d];
      }
      out[o] = inside ? in[offset] : fill;
      advance(index, y.dims, y.rank);
    }
    return Status::ok();
  }
};

// Trilu: every matrix of the last two dims keeps one triangle (from diagonal k: the i64 input when
// given, else the attribute), the rest is 0 in every dtype's encoding.
template <typename T>
struct TriluKernel {
  static Status run(const KernelCall& c, const params::ShapeParams& p) {
    const pock_tensor_desc& x = c.in(0);
    const int64_t rows = x.dims[x.rank - 2], cols = x.dims[x.rank - 1];
    const int64_t k = c.has_input(1) ? *c.in_data<int64_t>(1) : p.k;  // a run-time k wins
    const T* in = c.in_data<T>(0);
    T* out = c.out_data<T>(0);
    for (int64_t e = 0, n = numel(x); e < n; ++e) {
      const int64_t diagonal = e % cols - (e / cols) % rows;  // j - i
      out[e] = (p.upper ? diagonal >= k : diagonal <= k) ? in[e] : T{0};
    }
    return Status::ok();
  }
};

void add_for_every_dtype(KernelTable& t, const char* op, KernelFn run) {
  for (int i = 0; i < kNumDTypes; ++i) t.add({op, static_cast<DType>(i), run});
}

template <Status (*Run)(const KernelCall&, const params::ShapeParams&)>
void add_typed_for_every_dtype(KernelTable& t, const char* op) {
  for (int i = 0; i < kNumDTypes; ++i) t.add(typed_kernel<params::ShapeParams, Run>(op, static_cast<DType>(i)));
}

// Registers Kernel<T> for every dtype, T being the unsigned integer of the dtype's width.
template <template <typename> class Kernel>
void add_for_every_dtype(KernelTable& t, const char* op) {
  for (int i = 0; i < kNumDTypes; ++i) {
    const DType dt = static_cast<DType>(i);
    switch (dtype_size(dt)) {
      case 1: t.add(typed_kernel<params::ShapeParams, Kernel<uint8_t>::run>(op, dt)); break;
      case 2: t.add(typed_kernel<params::ShapeParams, Kernel<uint16_t>::run>(op, dt)); break;
      case 4: t.add(typed_kernel<params::ShapeParams, Kernel<uint32_t>::run>(op, dt)); break;
      case 8: t.add(typed_kernel<params::ShapeParams, Kernel<uint64_t>::run>(op, dt)); break;
      default: break;
    }
  }
}

}  // namespace

void register_ref_shape(KernelTable& t) {
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Copy"}) add_for_every_dtype(t, op, copy_bytes);
  add_typed_for_every_dtype<concat>(t, "Concat");
  add_typed_for_every_dtype<split>(t, "Split");
  add_for_every_dtype<TransposeKernel>(t, "Transpose");
  add_for_every_dtype<SliceKernel>(t, "Slice");
  add_for_every_dtype<ExpandKernel>(t, "Expand");
  add_for_every_dtype<PadKernel>(t, "Pad");
  add_for_every_dtype<TriluKernel>(t, "Trilu");
}

}  // namespace pock
