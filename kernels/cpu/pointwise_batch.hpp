// Batched 1x1 convolutions on NCHW: a GEMM per image has as many columns as the image has pixels,
// 16 or 64 in the late layers of a MobileNet at 128x128, where OpenBLAS runs far below its peak
// (packing overhead per call, short rows). Gathering the batch's planes of each channel side by
// side ([N, C, P] -> [C, N * P]) makes one GEMM with N times the columns; the copies move whole
// planes, a few hundred bytes each. Used by the pointwise Conv2d and its input gradient.
#pragma once
#include <cstdint>
#include <cstring>

#include "kernels/cpu/thread_pool.hpp"

namespace pock::cpu {

// Whether the batched form pays: more than one image and planes of at most 16x16 (measured on
// MobileNetV2's layers: at 32x32 and up the per-image GEMMs are wide enough already).
inline bool use_batched_pointwise(int64_t batch, int64_t plane) { return batch > 1 && plane <= 256; }

// The same for convolutions with an unfolded (im2col) matrix: the batch's column matrices side
// by side, one GEMM. Limited to planes of at most 8x8, where the per-image GEMMs are thinnest (64
// columns or fewer; ResNet-18's 4x4 layer4 at 128x128: 9.1 -> 7.6 ms a forward), because the
// batch's matrix (kh * kw times the input) sits in the scratch region.
inline bool use_batched_unfold(int64_t batch, int64_t plane) { return batch > 1 && plane <= 64; }

// Copies whole planes between the image-major [N, C, P] and channel-major [C, N, P] orders.
inline void transpose_planes(const float* src, float* dst, int64_t batch, int64_t channels, int64_t plane,
                             bool to_channel_major, pthreadpool_t pool) {
  const size_t tasks = static_cast<size_t>(channels);
  parallel_for(pool, tasks, balanced_tile(pool, tasks, 16), [&](size_t begin, size_t end) {
    for (size_t c = begin; c < end; ++c) {
      for (int64_t n = 0; n < batch; ++n) {
        const int64_t image_major = (n * channels + static_cast<int64_t>(c)) * plane;
        const int64_t channel_major = (static_cast<int64_t>(c) * batch + n) * plane;
        std::memcpy(dst + (to_channel_major ? channel_major : image_major),
                    src + (to_channel_major ? image_major : channel_major), static_cast<size_t>(plane) * sizeof(float));
      }
    }
  });
}

// dst[c][n][p] = src[n][c][p]
inline void gather_planes(const float* src, float* dst, int64_t batch, int64_t channels, int64_t plane,
                          pthreadpool_t pool) {
  transpose_planes(src, dst, batch, channels, plane, true, pool);
}

// dst[n][c][p] = src[c][n][p]
inline void scatter_planes(const float* src, float* dst, int64_t batch, int64_t channels, int64_t plane,
                           pthreadpool_t pool) {
  transpose_planes(src, dst, batch, channels, plane, false, pool);
}

}  // namespace pock::cpu
