// Logic of LinearQCrossEntropy on the CUDA backend (block_quant.cu): SoftmaxCrossEntropy of
// LinearQ's logits and, for dloss = 1, the logits' gradient, as kernels/ref/block_quant.cpp
// defines them (label smoothing eps, ignore_index). The logits of a chunk of rows are made by the
// LinearQ tiles; these team routines then turn them into per-row losses and, in place, into
// their gradient, which LinearQInputGrad's tiles carry back to x. Team routines as in
// row_team.hpp; the host tests run them with a SoloTeam against ref.
#pragma once
#include <cmath>
#include <cstdint>

#include "kernels/cuda/error_site.hpp"
#include "kernels/cuda/hd.hpp"
#include "kernels/cuda/row_team.hpp"

namespace pock::cuda {

// Rows whose label counts, and whether any label is outside [0, classes) and not ignored (ref
// refuses such a label; here it is reported to the error site, and the loss is NaN so that
// nothing reads it as a number before the step's failure is seen).
struct HeadCounts {
  float counted;
  float bad;
};

struct CountLabels {
  const int64_t* labels;
  int64_t rows, classes, ignore;
  HeadCounts* out;
  ErrorSite error;  // told of a bad label, so that the step fails with ref's message
  template <typename Team>
  POCK_HD void operator()(const Team& team, int64_t) const {
    float counted = 0.0f, bad = 0.0f;
    for (int64_t r = team.lane; r < rows; r += team.lanes) {
      if (labels[r] == ignore) continue;
      counted += 1.0f;
      if (labels[r] < 0 || labels[r] >= classes) bad = 1.0f;
    }
    counted = team.sum(counted);
    bad = team.max(bad);
    if (team.lane == 0) {
      *out = {counted, bad};
      if (bad != 0.0f) error.report();
    }
  }
};

// Row r of a chunk: z (its logits) becomes (softmax(z) - target) / counted, target being
// 1 - eps at the label plus eps / classes everywhere; row_loss[r] = lse - (1 - eps) z[label]
// - eps mean(z). An ignored row has loss 0 and gradient 0.
struct CrossEntropyRow {
  float* z;                 // [chunk, classes]
  const int64_t* labels;    // the chunk's
  float* row_loss;          // the chunk's
  const HeadCounts* counts;
  int64_t classes, ignore;
  float eps;

  template <typename Team>
  POCK_HD void operator()(const Team& team, int64_t r) const {
    float* zr = z + r * classes;
    const int64_t label = labels[r];
    const bool valid = label >= 0 && label < classes;
    if (label == ignore || !valid) {
      for_lanes(team, classes, [&](int64_t j) { zr[j] = label == ignore ? 0.0f : NAN; });
      if (team.lane == 0) row_loss[r] = label == ignore ? 0.0f : NAN;
      return;
    }
    const float at_label = zr[label];  // read before the reductions, which every lane passes before writing
    float top = -INFINITY, total = 0.0f;
    for_lanes(team, classes, [&](int64_t j) {
      top = fmaxf(top, zr[j]);
      total += zr[j];
    });
    top = team.max(top);
    const float mean = team.sum(total) / static_cast<float>(classes);
    float sum = 0.0f;
    for_lanes(team, classes, [&](int64_t j) { sum += expf(zr[j] - top); });
    const float lse = top + logf(team.sum(sum));
    if (team.lane == 0) row_loss[r] = lse - (1.0f - eps) * at_label - eps * mean;
    const float counted = counts->counted, smooth = eps / static_cast<float>(classes);
    for_lanes(team, classes, [&](int64_t j) {
      const float target = (j == label ? 1.0f - eps : 0.0f) + smooth;
      zr[j] = (expf(zr[j] - lse) - target) / counted;
    });
  }
};

// The loss: the rows' losses summed in a fixed order, over the counted rows; NaN for a bad label.
struct HeadLoss {
  const float* row_loss;
  const HeadCounts* counts;
  int64_t rows;
  float* loss;
  template <typename Team>
  POCK_HD void operator()(const Team& team, int64_t) const {
    float total = 0.0f;
    for (int64_t r = team.lane; r < rows; r += team.lanes) total += row_loss[r];
    total = team.sum(total);
    if (team.lane != 0) return;
    const HeadCounts c = *counts;
    *loss = c.bad != 0.0f ? NAN : (c.counted > 0.0f ? total / c.counted : 0.0f);
  }
};

}  // namespace pock::cuda
