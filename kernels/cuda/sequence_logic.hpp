// Per-element logic of the CUDA sequence family (Gather, Rope, CausalMask, DropoutTrain) and its
// gradients (GatherGrad's targets, DropoutGrad), shared by the device kernels (sequence.cu,
// layer_grad_sequence.cu) and the host tests (tests/cuda_logic), which compare it with kernels/ref.
// Scalars the graph keeps on the device (Rope's first position, DropoutTrain's step) are read
// inside the element functions, so that run() never copies them back.
#pragma once
#include <cmath>
#include <cstdint>

#include "kernels/cuda/error_site.hpp"
#include "kernels/cuda/hd.hpp"

namespace pock::cuda {

// data seen as [outer, extent, inner] around the gather axis; out and dy as [outer, count, inner].
struct GatherLayout {
  int64_t outer, extent, count, inner;
};

// The layout of data (Gather) or ddata (GatherGrad) with `dims`, around `axis` (negative counts
// from the end), for `count` indices.
inline GatherLayout gather_layout(const int64_t* dims, int rank, int64_t axis, int64_t count) {
  const int a = static_cast<int>(axis < 0 ? axis + rank : axis);
  GatherLayout l{1, dims[a], count, 1};
  for (int d = 0; d < a; ++d) l.outer *= dims[d];
  for (int d = a + 1; d < rank; ++d) l.inner *= dims[d];
  return l;
}

// The data element that output element i reads, or -1 when its index is out of range.
template <typename Index>
POCK_HD int64_t gather_source(const GatherLayout& l, const Index* indices, int64_t i) {
  const int64_t k = i % l.inner, j = (i / l.inner) % l.count, o = i / (l.inner * l.count);
  int64_t row = static_cast<int64_t>(indices[j]);
  if (row < -l.extent || row >= l.extent) return -1;
  if (row < 0) row += l.extent;
  return (o * l.extent + row) * l.inner + k;
}

// Gather of elements of `Word`'s size (the dtype's bytes, whatever it is). An index out of range
// is reported to `error` (ref refuses it; the indices live on the device and run() does not wait
// for them) and its elements are zeros, so nothing reads outside `data`.
template <typename Word, typename Index>
struct GatherElement {
  const Word* data;
  const Index* indices;
  Word* out;
  GatherLayout layout;
  ErrorSite error;
  POCK_HD void operator()(int64_t i) const {
    const int64_t from = gather_source(layout, indices, i);
    if (from < 0) error.report();
    out[i] = from >= 0 ? data[from] : Word{};
  }
};

// GatherGrad, deterministically: the (row, position) pairs of the indices sorted by row, stably,
// then each run of one row summed in position order, which is ref's order, so dx is ref's bit for
// bit. Rows are normalized (negative counts from the end); an index out of range is reported to
// `error` (ref refuses it; run does not wait for device indices) and becomes the row `extent`,
// sorted last and skipped.
template <typename Index>
struct GatherGradKeys {
  const Index* indices;
  int64_t extent;
  uint32_t* rows;
  int32_t* positions;
  ErrorSite error;
  POCK_HD void operator()(int64_t i) const {
    int64_t row = static_cast<int64_t>(indices[i]);
    if (row < 0) row += extent;
    const bool fits = row >= 0 && row < extent;
    if (!fits) error.report();
    rows[i] = static_cast<uint32_t>(fits ? row : extent);
    positions[i] = static_cast<int32_t>(i);
  }
};

// Element (o, s, k) of outer x count x inner: the thread of a run's first pair sums the run.
struct GatherGradRuns {
  const uint32_t* rows;  // sorted
  const int32_t* positions;
  const float* dy;
  float* dx;
  GatherLayout layout;
  POCK_HD void operator()(int64_t t) const {
    const int64_t k = t % layout.inner, s = (t / layout.inner) % layout.count, o = t / (layout.inner * layout.count);
    const uint32_t row = rows[s];
    if (row >= layout.extent || (s > 0 && rows[s - 1] == row)) return;
    float acc = 0.0f;
    for (int64_t e = s; e < layout.count && rows[e] == row; ++e) {
      acc += dy[(o * layout.count + positions[e]) * layout.inner + k];
    }
    dx[(o * layout.extent + row) * layout.inner + k] = acc;
  }
};

// Rope on pair p of x [rows * seq, dim] (dim/2 pairs a row): pairs (i, i + dim/2) in the
// rotate-half form, (2i, 2i + 1) interleaved; angle = position * theta^(-2i/dim). The angle is
// formed and reduced modulo 2 pi in double, so that a far position loses no accuracy in f32
// sine and cosine; the rotation itself is f32.
struct RopePair {
  const float* x;
  float* y;
  const int64_t* first;  // the first row's position, or null for 0
  int64_t seq, dim;
  double log_theta;  // log(theta), once on the host
  bool interleaved;
  float direction;  // -1 rotates back (the inverse)

  POCK_HD void operator()(int64_t p) const {
    const int64_t half = dim / 2;
    const int64_t i = p % half, row = p / half, s = row % seq;
    const double inverse_frequency = exp(-2.0 * static_cast<double>(i) / static_cast<double>(dim) * log_theta);
    const double angle = static_cast<double>((first ? *first : 0) + s) * inverse_frequency;
    const double two_pi = 6.283185307179586476925286766559;
    const float reduced = static_cast<float>(angle - rint(angle / two_pi) * two_pi);
    const float c = cosf(reduced), sn = direction * sinf(reduced);
    const int64_t a = row * dim + (interleaved ? 2 * i : i);
    const int64_t b = row * dim + (interleaved ? 2 * i + 1 : i + half);
    const float xa = x[a], xb = x[b];  // both read first: x and y may share a buffer
    y[a] = xa * c - xb * sn;
    y[b] = xb * c + xa * sn;
  }
};

// scores [..., S, T]: query i sees keys j <= i + (T - S); the rest become `value`.
struct CausalMaskElement {
  const float* x;
  float* y;
  int64_t queries, keys;
  float value;
  POCK_HD void operator()(int64_t e) const {
    const int64_t j = e % keys, i = (e / keys) % queries;
    y[e] = j > i + (keys - queries) ? value : x[e];
  }
};

// splitmix64's finalizer (src/ir/splitmix64.hpp, the project's one generator), here callable on
// the device; the host tests check that the two agree.
POCK_HD uint64_t splitmix64_hd(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// DropoutTrain's contract (kernels/ref/sequence.cpp), bit for bit: element i is kept when
// splitmix64(splitmix64(splitmix64(seed) ^ step) ^ i) >> 40 >= uint32(ratio * 2^24); kept values
// are scaled by 1 / (1 - ratio) in double, as ref, so y matches ref exactly too.
struct DropoutTrainElement {
  const float* x;
  const int64_t* step;
  float* y;
  uint8_t* mask;
  uint64_t seed_hash;  // splitmix64(seed), once on the host
  uint64_t threshold;
  double scale;
  POCK_HD void operator()(int64_t i) const {
    const uint64_t stream = splitmix64_hd(seed_hash ^ static_cast<uint64_t>(*step));
    const bool keep = (splitmix64_hd(stream ^ static_cast<uint64_t>(i)) >> 40) >= threshold;
    mask[i] = keep ? 1 : 0;
    y[i] = static_cast<float>(x[i] * (keep ? scale : 0.0));  // x * mask * scale: a NaN stays NaN
  }
};

// DropoutGrad: dy * mask / (1 - ratio), in double as the forward.
struct DropoutGradElement {
  const float* dy;
  const uint8_t* mask;
  float* dx;
  double scale;
  POCK_HD void operator()(int64_t i) const { dx[i] = static_cast<float>(dy[i] * (mask[i] ? scale : 0.0)); }
};

// ---- CachedAttention ----------------------------------------------------------------------------
// q [B, H, S, D]; k, v [B, KV, S, D] go into the caches [B, KV, T, D] at rows p..p+S-1; query s of
// head h attends to cache rows 0..p+s of KV head h / (H / KV). The position p lives on the device:
// a p out of range (ref refuses it) is reported by the cache write and leaves caches and output
// untouched.

struct AttentionShape {
  int64_t batch, heads, kv_heads, seq, capacity, dim;
  POCK_HD bool position_fits(int64_t p) const { return p >= 0 && p <= capacity - seq; }
};

// Element i of k (and v) [B, KV, S, D] written into its cache row.
struct CacheWriteElement {
  const float* k;
  const float* v;
  float* key_cache;
  float* value_cache;
  const int64_t* position;
  AttentionShape shape;
  ErrorSite error;
  POCK_HD void operator()(int64_t i) const {
    const int64_t p = *position;
    if (!shape.position_fits(p)) {
      if (i == 0) error.report();  // one store for the whole op
      return;
    }
    const int64_t e = i % shape.dim, row = i / shape.dim;  // row = (b * KV + h) * S + s
    const int64_t s = row % shape.seq, head = row / shape.seq;
    const int64_t to = (head * shape.capacity + p + s) * shape.dim + e;
    key_cache[to] = k[i];
    value_cache[to] = v[i];
  }
};

// One participant's share of a query's attention, as an online softmax: the running maximum
// score, the sum of exp(score - top) and, for the value columns e = lane + k * lanes it owns, the
// weighted sum of values. Scores are the same on every lane of a team (reduced with team.sum),
// so `top` and `total` agree across lanes. Shares over disjoint key sets merge exactly.
template <int kPerLane>
struct AttentionShare {
  float top = -INFINITY;
  float total = 0.0f;
  float acc[kPerLane] = {};

  template <typename Team>
  POCK_HD void add_key(const Team& team, float score, const float* value_row, int64_t dim) {
    if (score > top) {
      const float rescale = expf(top - score);  // 0 for the first key
      total *= rescale;
      for (int k = 0; k < kPerLane; ++k) acc[k] *= rescale;
      top = score;
    }
    const float w = expf(score - top);
    total += w;
    for (int k = 0; k < kPerLane; ++k) {
      const int64_t e = team.lane + static_cast<int64_t>(k) * team.lanes;
      if (e < dim) acc[k] += w * value_row[e];
    }
  }

  POCK_HD void merge(const AttentionShare& o) {
    const float m = top > o.top ? top : o.top;
    if (m == -INFINITY) return;  // both empty
    const float a = expf(top - m), b = expf(o.top - m);
    total = total * a + o.total * b;
    for (int k = 0; k < kPerLane; ++k) acc[k] = acc[k] * a + o.acc[k] * b;
    top = m;
  }
};

// Adds keys first, first + step, ... of query (b, h, s)'s visible rows to `share`.
template <int kPerLane, typename Team>
POCK_HD void attend(const Team& team, const float* q_row, const float* keys, const float* values, int64_t visible,
                    int64_t first, int64_t step, int64_t dim, float scale, AttentionShare<kPerLane>& share) {
  for (int64_t j = first; j < visible; j += step) {
    float dot = 0.0f;
    for (int64_t e = team.lane; e < dim; e += team.lanes) dot += q_row[e] * keys[j * dim + e];
    share.add_key(team, team.sum(dot) * scale, values + j * dim, dim);
  }
}

// The cache rows query row `row` = (b * H + h) * S + s reads, and how many are visible.
struct AttentionRows {
  const float* keys;
  const float* values;
  int64_t visible;
};

POCK_HD AttentionRows attention_rows(const AttentionShape& a, const float* key_cache, const float* value_cache,
                                     int64_t position, int64_t row) {
  const int64_t s = row % a.seq, h = (row / a.seq) % a.heads, b = row / (a.seq * a.heads);
  const int64_t kv = h / (a.heads / a.kv_heads);
  const int64_t offset = (b * a.kv_heads + kv) * a.capacity * a.dim;
  return {key_cache + offset, value_cache + offset, position + s + 1};
}

}  // namespace pock::cuda
