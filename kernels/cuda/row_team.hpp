// The threads that share one row (or one channel) of a norm-like kernel, as the per-row logic of
// kernels/cuda/*_logic.hpp sees them: this participant's `lane` among `lanes`, and reductions whose
// result every participant receives. A row routine strides its loops by `lanes`, so one routine
// serves one thread per row (SoloTeam, also the host tests' team), a warp per row and a block per
// row (row_team.cuh).
#pragma once
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

}  // namespace pock::cuda
