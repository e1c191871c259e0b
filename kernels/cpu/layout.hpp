// NCHW <-> NHWC copies for kernels whose library wants channels last (XNNPACK): the staging of an
// NCHW convolution that the layout pass (src/compiler/passes/layout_nhwc.cpp) left alone — a lone
// frozen conv, or one whose output a weight gradient reads — and the cpu Transpose at the edges of
// the regions it converted.
#pragma once
#include <cstdint>

#include "kernels/cpu/thread_pool.hpp"

namespace pock::cpu {

// y[n][p][c] = x[n][c][p] for `batch` images of `channels` planes of `plane` pixels.
void nchw_to_nhwc(const float* x, float* y, int64_t batch, int64_t channels, int64_t plane, pthreadpool_t pool);

// y[n][c][p] = x[n][p][c] + (bias ? bias[c] : 0): the bias add rides along with the copy.
void nhwc_to_nchw(const float* x, const float* bias, float* y, int64_t batch, int64_t channels, int64_t plane,
                  pthreadpool_t pool);

}  // namespace pock::cpu
