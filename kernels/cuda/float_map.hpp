// The element loops of the f32 elementwise ops and their gradients, as functors of the output
// index that launch_map runs on the device and the cuda_logic tests run on the host. An Op has
//   static POCK_HD float apply(float x..., const Args& args)
// with one x per input. FloatMap handles one output element; FloatPackMap four at a time with one
// 16-byte load per operand where every operand is dense, scalar or a row of whole packs (the
// common cases: same-shape ops, a scalar scale, a bias add), plus the n % 4 tail element by element.
#pragma once
#include <cstdint>

#include "kernels/cuda/hd.hpp"
#include "kernels/cuda/strided_index.hpp"

namespace pock::cuda {

struct alignas(16) Pack4 {
  float v[4];
};

template <typename Op, typename Args, int N>
POCK_HD float apply_op(const float (&x)[N], const Args& args) {
  if constexpr (N == 1) {
    return Op::apply(x[0], args);
  } else if constexpr (N == 2) {
    return Op::apply(x[0], x[1], args);
  } else {
    return Op::apply(x[0], x[1], x[2], args);
  }
}

template <typename Op, typename Args, int N>
struct FloatMap {
  const float* in[N];
  float* out;
  StridedIndex<N> index;
  Args args;

  POCK_HD void operator()(int64_t i) const {
    float x[N];
    for (int k = 0; k < N; ++k) x[k] = in[k][index.offset(k, i)];
    out[i] = apply_op<Op, Args, N>(x, args);
  }
};

template <typename Op, typename Args, int N>
struct FloatPackMap {
  FloatMap<Op, Args, N> scalar;
  int64_t packs;  // n / 4; the launch covers packs + n % 4 indices

  POCK_HD void operator()(int64_t i) const {
    if (i >= packs) {
      scalar(packs * 4 + (i - packs));
      return;
    }
    Pack4 x[N];
    for (int k = 0; k < N; ++k) x[k] = load(k, i);
    Pack4 y;
    for (int j = 0; j < 4; ++j) {
      float v[N];
      for (int k = 0; k < N; ++k) v[k] = x[k].v[j];
      y.v[j] = apply_op<Op, Args, N>(v, scalar.args);
    }
    reinterpret_cast<Pack4*>(scalar.out)[i] = y;
  }

  POCK_HD Pack4 load(int k, int64_t pack) const {
    const StridedIndex<N>& ix = scalar.index;
    if (ix.access[k] == Access::kScalar) {
      const float s = scalar.in[k][ix.base[k]];
      return Pack4{{s, s, s, s}};
    }
    const int64_t first = ix.access[k] == Access::kRow ? index_mod(pack * 4, ix.period[k]) : pack * 4;
    return reinterpret_cast<const Pack4*>(scalar.in[k] + ix.base[k] + first)[0];
  }
};

// The map of output 0 from inputs 0..N-1 of a bound op (device pointers on the device, host ones
// in the tests).
template <typename Op, int N, typename Args>
FloatMap<Op, Args, N> float_map(const pock_op_desc& op, const StridedIndex<N>& index, const Args& args) {
  FloatMap<Op, Args, N> map;
  for (int k = 0; k < N; ++k) map.in[k] = static_cast<const float*>(op.inputs[k].data);
  map.out = static_cast<float*>(op.outputs[0].data);
  map.index = index;
  map.args = args;
  return map;
}

// Whether FloatPackMap may run: every operand dense, scalar or a row of whole packs, and every
// packed pointer 16-byte aligned (arena offsets usually are; a view into a tensor may not be).
template <typename Op, typename Args, int N>
bool packable(const FloatMap<Op, Args, N>& map) {
  const StridedIndex<N>& index = map.index;
  const float* const(&in)[N] = map.in;
  const float* out = map.out;
  auto aligned = [](const float* p) { return reinterpret_cast<uintptr_t>(p) % sizeof(Pack4) == 0; };
  if (!aligned(out)) return false;
  for (int k = 0; k < N; ++k) {
    switch (index.access[k]) {
      case Access::kScalar: break;
      case Access::kDense:
        if (!aligned(in[k] + index.base[k])) return false;
        break;
      case Access::kRow:
        if (index.period[k] % 4 != 0 || !aligned(in[k] + index.base[k])) return false;
        break;
      default: return false;
    }
  }
  return true;
}

}  // namespace pock::cuda
