// The threads that share one row (or one channel) of a norm-like kernel, as the per-row logic of
// kernels/cuda/*_logic.hpp sees them: this participant's `lane` among `lanes`, and reductions whose
// result every participant receives. A row routine strides its loops by `lanes`, so one routine
// serves one thread per row (SoloTeam, also the host tests' team), a warp per row and a block per
// row (row_team.cuh).
#pragma once
#include <cstdint>

#include "kernels/cuda/hd.hpp"

namespace pock::cuda {

// One participant: the reductions are the identity. Used on the host and by device kernels that
// give each thread a whole strided row (a softmax over a non-last axis, coalesced across rows).
struct SoloTeam {
  int lane = 0;
  int lanes = 1;
  POCK_HD float sum(float v) const { return v; }
  POCK_HD float max(float v) const { return v; }
};

// f(j) for this participant's share of [0, n): j = lane, lane + lanes, ... The loop every row
// routine strides its passes with.
template <typename Team, typename F>
POCK_HD void for_lanes(const Team& team, int64_t n, F&& f) {
  for (int64_t j = team.lane; j < n; j += team.lanes) f(j);
}

// x [N, C, inner...] seen per channel: the batch * inner values of channel ch, the row of a
// channel's team (batch norms, Conv2dGradBias).
struct ChannelView {
  int64_t batch, channels, inner;
  POCK_HD int64_t count() const { return batch * inner; }
  // Element e in [0, count) of channel ch.
  POCK_HD int64_t at(int64_t ch, int64_t e) const { return ((e / inner) * channels + ch) * inner + e % inner; }
  // f(index) for this participant's share of channel ch: lanes across each contiguous run of
  // `inner` values when a run fills the team (no division per element), across the flattened
  // channel otherwise (short runs, e.g. inner 1).
  template <typename Team, typename F>
  POCK_HD void for_each(const Team& team, int64_t ch, F&& f) const {
    if (inner >= team.lanes) {
      for (int64_t n = 0; n < batch; ++n) {
        const int64_t base = (n * channels + ch) * inner;
        for (int64_t i = team.lane; i < inner; i += team.lanes) f(base + i);
      }
    } else {
      for (int64_t e = team.lane; e < count(); e += team.lanes) f(at(ch, e));
    }
  }
};

inline ChannelView channel_view(const int64_t* dims, int rank) {
  ChannelView v{dims[0], dims[1], 1};
  for (int d = 2; d < rank; ++d) v.inner *= dims[d];
  return v;
}

}  // namespace pock::cuda
