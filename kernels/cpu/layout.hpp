// NCHW <-> NHWC copies for kernels whose library wants channels last (XNNPACK). They exist until a
// compiler layout pass keeps convolution chains in NHWC; then these copies disappear.
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
