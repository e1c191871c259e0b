// The gradients of ScatterND with reduction mul, max or min, shared by every backend's
// ScatterNDGrad: they depend on the values each position met, in the order the forward applied the
// updates. The forward folds, per data element, data then the updates of the tuples that address
// it, in tuple order; so these walk the tuples the same way. Columns of the slices are independent
// (a tuple addresses a whole slice, column e of it lands on column e), so a backend may split the
// columns [begin, end) over threads.
//   mul: d update_t = dy · (data · Π_{s<t} u_s) · Π_{s>t} u_s (a prefix pass, then a suffix pass:
//        exact with zero factors, no division); d data = dy · Π u.
//   max, min: dy goes to the first value that won (data, then the updates in order: the forward's
//        std::max / std::min keep the old value on a tie), 0 to the rest.
#pragma once
#include <algorithm>
#include <cstdint>

#include "kernels/params/gather_scatter.hpp"

namespace pock::nd_grad {

// Where one run works: `offsets[t]` is the data offset of tuple t's slice of `slice` elements.
// `running` (double) and `winner` (int64) are data-sized scratch that start() fills.
struct Walk {
  const float *dy, *data, *updates;
  const int64_t* offsets;
  int64_t tuples, slice;
  float *d_data, *d_updates;
  double* running;
  int64_t* winner;
};

// Before the columns: d data = dy (right where nothing was written), running = data, no winners.
inline void start(const Walk& w, int64_t numel) {
  std::copy(w.dy, w.dy + numel, w.d_data);
  std::copy(w.data, w.data + numel, w.running);
  std::fill(w.winner, w.winner + numel, int64_t{-1});
}

inline void mul_columns(const Walk& w, int64_t begin, int64_t end) {
  for (int64_t t = 0; t < w.tuples; ++t) {  // prefixes, kept in d updates for now
    for (int64_t e = begin; e < end; ++e) {
      const int64_t at = w.offsets[t] + e, u = t * w.slice + e;
      w.d_updates[u] = static_cast<float>(w.running[at]);
      w.running[at] *= w.updates[u];
    }
  }
  for (int64_t t = 0; t < w.tuples; ++t) {
    for (int64_t e = begin; e < end; ++e) w.running[w.offsets[t] + e] = 1.0;
  }
  for (int64_t t = w.tuples - 1; t >= 0; --t) {  // suffixes
    for (int64_t e = begin; e < end; ++e) {
      const int64_t at = w.offsets[t] + e, u = t * w.slice + e;
      w.d_updates[u] = static_cast<float>(w.dy[at] * static_cast<double>(w.d_updates[u]) * w.running[at]);
      w.running[at] *= w.updates[u];
    }
  }
  for (int64_t t = 0; t < w.tuples; ++t) {
    for (int64_t e = begin; e < end; ++e) {
      const int64_t at = w.offsets[t] + e;
      w.d_data[at] = static_cast<float>(w.dy[at] * w.running[at]);
    }
  }
}

inline void extremum_columns(const Walk& w, bool max, int64_t begin, int64_t end) {
  for (int64_t t = 0; t < w.tuples; ++t) {
    for (int64_t e = begin; e < end; ++e) {
      const int64_t at = w.offsets[t] + e;
      const float u = w.updates[t * w.slice + e], old = static_cast<float>(w.running[at]);
      if (max ? old < u : u < old) w.running[at] = u, w.winner[at] = t;
    }
  }
  for (int64_t t = 0; t < w.tuples; ++t) {
    for (int64_t e = begin; e < end; ++e) {
      const int64_t at = w.offsets[t] + e;
      w.d_updates[t * w.slice + e] = w.winner[at] == t ? w.dy[at] : 0.0f;
      if (w.winner[at] >= 0) w.d_data[at] = 0.0f;
    }
  }
}

// The gradients for slice columns [begin, end), after start().
inline void columns(const Walk& w, params::ScatterReduction reduction, int64_t begin, int64_t end) {
  if (reduction == params::ScatterReduction::kMul) return mul_columns(w, begin, end);
  extremum_columns(w, reduction == params::ScatterReduction::kMax, begin, end);
}

}  // namespace pock::nd_grad
