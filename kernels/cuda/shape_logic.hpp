// Logic of the cuda shape family and of SliceGrad. These ops move elements without reading them,
// so every functor works on the unsigned integer of the element's width (1, 2, 4 or 8 bytes) and
// one kernel per width serves every dtype, as in ref. Transpose, Slice and Expand are one gather
// (out[i] = in[offset(i)]) with an index planned at prepare; SliceGrad is its scatter; Pad tests
// each output element against the input's box; Concat and Split scatter or gather each piece.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ir/float16.hpp"
#include "kernels/cuda/strided_index.hpp"
#include "kernels/params/shape.hpp"

namespace pock::cuda {

template <typename T>
struct GatherMap {
  const T* in;
  T* out;
  StridedIndex<1> index;  // output element -> input element
  POCK_HD void operator()(int64_t i) const { out[i] = in[index.offset(0, i)]; }
};

template <typename T>
struct ScatterMap {
  const T* in;
  T* out;
  StridedIndex<1> index;  // input element -> output element
  POCK_HD void operator()(int64_t i) const { out[index.offset(0, i)] = in[i]; }
};

// Pad's geometry and fill, planned at prepare.
struct PadPlan {
  int rank = 0;
  int64_t out_dims[kIndexMaxRank] = {}, in_dims[kIndexMaxRank] = {}, begins[kIndexMaxRank] = {};
  uint64_t fill_bits = 0;  // the fill value in the tensor's encoding (the low bytes of its width)
};

template <typename T>
struct PadMap {
  const T* in;
  T* out;
  T fill;
  PadPlan plan;
  POCK_HD void operator()(int64_t o) const {
    int64_t rest = o, offset = 0, stride = 1;
    for (int d = plan.rank - 1; d >= 0; --d) {
      const int64_t q = index_div(rest, plan.out_dims[d]);
      const int64_t i = rest - q * plan.out_dims[d] - plan.begins[d];
      if (i < 0 || i >= plan.in_dims[d]) {
        out[o] = fill;
        return;
      }
      offset += i * stride;
      stride *= plan.in_dims[d];
      rest = q;
    }
    out[o] = in[offset];
  }
};

// ---- host side: plans --------------------------------------------------------------------------

inline int normalized_axis(int64_t axis, int rank) { return static_cast<int>(axis < 0 ? axis + rank : axis); }

// Transpose: output dim d walks input dim perm[d] (reversed dims without perm).
inline StridedIndex<1> transpose_index(const pock_tensor_desc& x, const pock_tensor_desc& y, const params::ShapeParams& p) {
  int64_t in_strides[kIndexMaxRank] = {}, steps[1][kIndexMaxRank] = {};
  row_major_strides(x, in_strides);
  for (int d = 0; d < x.rank; ++d) steps[0][d] = in_strides[p.perm.empty() ? x.rank - 1 - d : p.perm[static_cast<size_t>(d)]];
  return collapse_index<1>(y.rank, y.dims, steps);
}

// A transpose that moves the innermost dim (K^T, NCHW <-> NHWC): a plain gather would read one
// element per 32-byte sector. Instead 32 x 32 tiles go through shared memory: read along the
// input's contiguous dim (a), written along the output's (b, the last output dim); every other
// dim is a batch of tiles whose offsets are worked out once per tile.
constexpr int kTile = 32;

struct TileOrigin {
  int64_t in_base, out_base, a0, b0;
};

struct TileTranspose {
  int64_t size_a = 0, size_b = 0;  // extents of the two dims
  int64_t in_b = 0, out_a = 0;     // input stride of b, output stride of a (each 1 in the other tensor)
  int64_t tiles_a = 0, tiles_b = 0, tiles = 0;
  int batch_rank = 0;
  int64_t batch_dims[kIndexMaxRank] = {}, batch_in[kIndexMaxRank] = {}, batch_out[kIndexMaxRank] = {};

  POCK_HD TileOrigin origin(int64_t t) const {
    const int64_t tb = index_mod(t, tiles_b);
    t = index_div(t, tiles_b);
    const int64_t ta = index_mod(t, tiles_a);
    t = index_div(t, tiles_a);
    TileOrigin o{0, 0, ta * kTile, tb * kTile};
    for (int d = batch_rank - 1; d >= 0; --d) {
      const int64_t q = index_div(t, batch_dims[d]), i = t - q * batch_dims[d];
      o.in_base += i * batch_in[d];
      o.out_base += i * batch_out[d];
      t = q;
    }
    return o;
  }
  // Load step: thread x reads a = a0 + x, b = b0 + k into tile[k][x].
  POCK_HD bool load_at(const TileOrigin& o, int x, int k, int64_t* off) const {
    const int64_t a = o.a0 + x, b = o.b0 + k;
    *off = o.in_base + a + b * in_b;
    return a < size_a && b < size_b;
  }
  // Store step: thread x writes b = b0 + x, a = a0 + k from tile[x][k].
  POCK_HD bool store_at(const TileOrigin& o, int x, int k, int64_t* off) const {
    const int64_t a = o.a0 + k, b = o.b0 + x;
    *off = o.out_base + a * out_a + b;
    return a < size_a && b < size_b;
  }
};

// From a transpose's gather index: false when the input's contiguous dim stays innermost (the
// gather then reads contiguous runs already).
inline bool tile_transpose(const StridedIndex<1>& index, TileTranspose* t) {
  const int b = index.rank - 1;
  int a = -1;
  for (int d = 0; d < index.rank; ++d) {
    if (index.strides[0][d] == 1) a = d;
  }
  if (a < 0 || a == b) return false;
  int64_t out_strides[kIndexMaxRank] = {};
  for (int64_t d = index.rank - 1, s = 1; d >= 0; --d) {
    out_strides[d] = s;
    s *= index.dims[d];
  }
  *t = TileTranspose{};
  t->size_a = index.dims[a];
  t->size_b = index.dims[b];
  t->in_b = index.strides[0][b];
  t->out_a = out_strides[a];
  t->tiles_a = (t->size_a + kTile - 1) / kTile;
  t->tiles_b = (t->size_b + kTile - 1) / kTile;
  t->tiles = t->tiles_a * t->tiles_b;
  for (int d = 0; d < index.rank; ++d) {
    if (d == a || d == b) continue;
    t->batch_dims[t->batch_rank] = index.dims[d];
    t->batch_in[t->batch_rank] = index.strides[0][d];
    t->batch_out[t->batch_rank] = out_strides[d];
    t->tiles *= index.dims[d];
    ++t->batch_rank;
  }
  return true;
}

// ONNX Slice: the first index taken on an axis, after negative wrap and clamping for the step's
// direction (as ref and the schema compute it).
inline int64_t slice_first(int64_t dim, int64_t start, int64_t step) {
  if (start < 0) start += dim;
  return step > 0 ? std::clamp<int64_t>(start, 0, dim) : std::clamp<int64_t>(start, 0, dim - 1);
}

inline StridedIndex<1> slice_index(const pock_tensor_desc& x, const pock_tensor_desc& y, const params::ShapeParams& p) {
  int64_t in_strides[kIndexMaxRank] = {}, steps[1][kIndexMaxRank] = {};
  row_major_strides(x, in_strides);
  for (int d = 0; d < x.rank; ++d) steps[0][d] = in_strides[d];
  int64_t base = 0;
  for (size_t i = 0; i < p.starts.size(); ++i) {
    const int d = normalized_axis(p.axes.empty() ? static_cast<int64_t>(i) : p.axes[i], x.rank);
    const int64_t s = p.steps.empty() ? 1 : p.steps[i];
    const int64_t limit = int64_t{1} << 62;  // as in the schema: keeps "to the end" bounds from overflowing
    base += slice_first(x.dims[d], std::clamp(p.starts[i], -limit, limit), s) * in_strides[d];
    steps[0][d] = s * in_strides[d];
  }
  return collapse_index<1>(y.rank, y.dims, steps, &base);
}

// SliceGrad: dy's element i goes to dx at starts + index * steps, one start and step per axis.
inline StridedIndex<1> slice_grad_index(const pock_tensor_desc& dy, const pock_tensor_desc& dx, const params::ShapeParams& p) {
  int64_t dx_strides[kIndexMaxRank] = {}, steps[1][kIndexMaxRank] = {};
  row_major_strides(dx, dx_strides);
  int64_t base = 0;
  for (int d = 0; d < dx.rank; ++d) {
    base += p.starts[static_cast<size_t>(d)] * dx_strides[d];
    steps[0][d] = p.steps[static_cast<size_t>(d)] * dx_strides[d];
  }
  return collapse_index<1>(dy.rank, dy.dims, steps, &base);
}

// A gather's or scatter's index, and the same index in units of `factor` elements moved at once
// (up to 16 bytes) where the innermost walk is contiguous and every offset falls on a whole unit:
// a head split or merge, an Expand of K/V heads, a Slice of half the last dim move 16 bytes a
// thread instead of 4.
struct MovePlan {
  StridedIndex<1> index, wide;
  int64_t factor = 1;
};

inline MovePlan move_plan(const StridedIndex<1>& index, size_t element) {
  MovePlan m{index, index, 1};
  const int last = index.rank - 1;
  if (last < 0 || index.strides[0][last] != 1) return m;
  for (int64_t f = static_cast<int64_t>(16 / element); f > 1; f /= 2) {
    bool whole = index.dims[last] % f == 0 && index.base[0] % f == 0;
    for (int d = 0; d < last && whole; ++d) whole = index.strides[0][d] % f == 0;
    if (!whole) continue;
    int64_t dims[kIndexMaxRank] = {}, strides[1][kIndexMaxRank] = {};
    for (int d = 0; d <= last; ++d) {
      dims[d] = index.dims[d];
      strides[0][d] = index.strides[0][d] / f;
    }
    dims[last] /= f;
    strides[0][last] = 1;
    const int64_t base = index.base[0] / f;
    m.wide = collapse_index<1>(index.rank, dims, strides, &base);
    m.factor = f;
    return m;
  }
  return m;
}

// What each thread moves at run, from the plan and the pointers: the wide unit when both pointers
// sit on it, one element otherwise.
struct MoveLaunch {
  size_t bytes;                  // moved by each thread
  const StridedIndex<1>* index;  // in units of `bytes`
  int64_t moves;                 // threads' worth of work
};

inline MoveLaunch move_launch(const MovePlan& m, size_t element, const void* in, const void* out, int64_t elements) {
  const size_t wide = element * static_cast<size_t>(m.factor);
  if (reinterpret_cast<uintptr_t>(in) % wide == 0 && reinterpret_cast<uintptr_t>(out) % wide == 0) {
    return {wide, &m.wide, elements / m.factor};
  }
  return {element, &m.index, elements};
}

// Pad's fill value in the tensor's own encoding, as raw bits (the low dtype_size bytes).
inline uint64_t fill_bits(double value, int32_t dtype) {
  uint64_t bits = 0;
  auto put = [&bits](auto v) { std::memcpy(&bits, &v, sizeof(v)); };
  switch (dtype) {
    case POCK_F32: put(static_cast<float>(value)); break;
    case POCK_F16: put(float_to_half(static_cast<float>(value))); break;
    case POCK_BF16: put(float_to_bf16(static_cast<float>(value))); break;
    case POCK_I32: put(static_cast<int32_t>(value)); break;
    case POCK_I64: put(static_cast<int64_t>(value)); break;
    case POCK_I8: put(static_cast<int8_t>(value)); break;
    case POCK_U8: put(static_cast<uint8_t>(value)); break;
    case POCK_BOOL: put(static_cast<uint8_t>(value != 0.0 ? 1 : 0)); break;
    case POCK_F64: put(value); break;
    case POCK_I16: put(static_cast<int16_t>(value)); break;
    case POCK_U16: put(static_cast<uint16_t>(value)); break;
    case POCK_U32: put(static_cast<uint32_t>(value)); break;
    case POCK_U64: put(static_cast<uint64_t>(value)); break;
    default: break;
  }
  return bits;
}

inline PadPlan pad_plan(const pock_tensor_desc& x, const pock_tensor_desc& y, const params::ShapeParams& p) {
  PadPlan plan;
  plan.rank = y.rank;
  for (int d = 0; d < y.rank; ++d) {
    plan.out_dims[d] = y.dims[d];
    plan.in_dims[d] = x.dims[d];
    plan.begins[d] = p.pads[static_cast<size_t>(d)];  // pads: all begins, then all ends
  }
  plan.fill_bits = fill_bits(p.value, y.dtype);
  return plan;
}

template <typename T>
PadMap<T> pad_map(const void* in, void* out, const PadPlan& plan) {
  T fill;
  std::memcpy(&fill, &plan.fill_bits, sizeof(T));
  return PadMap<T>{static_cast<const T*>(in), static_cast<T*>(out), fill, plan};
}

// Concat and Split: each piece (an input of Concat, an output of Split) is `rows` contiguous runs
// that sit `pitch` apart in the joined tensor, at the piece's offset within each row: a scatter
// into (Concat) or a gather from (Split) the joined tensor, moving up to 16 bytes a thread.
// `joined` is Concat's output or Split's input; `pieces` the others, in order.
inline std::vector<MovePlan> piece_moves(const pock_tensor_desc& joined, const pock_tensor_desc* pieces, int count,
                                         int64_t axis) {
  const int a = normalized_axis(axis, joined.rank);
  int64_t rows = 1;
  for (int d = 0; d < a; ++d) rows *= joined.dims[d];
  int64_t pitch = 0;
  std::vector<int64_t> widths;
  for (int i = 0; i < count; ++i) {
    int64_t n = 1;
    for (int d = 0; d < pieces[i].rank; ++d) n *= pieces[i].dims[d];
    widths.push_back(rows > 0 ? n / rows : 0);
    pitch += widths.back();
  }
  std::vector<MovePlan> moves;
  int64_t offset = 0;
  for (int64_t width : widths) {
    const int64_t dims[2] = {rows, width};
    const int64_t strides[1][kIndexMaxRank] = {{pitch, 1}};
    moves.push_back(move_plan(collapse_index<1>(2, dims, strides, &offset), dtype_size(static_cast<DType>(joined.dtype))));
    offset += width;
  }
  return moves;
}

}  // namespace pock::cuda
