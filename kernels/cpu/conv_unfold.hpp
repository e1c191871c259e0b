// im2col and its adjoint col2im for one image and one group of a Conv2d (NCHW). The column
// matrix has one row per (input channel, ky, kx) and one column per output pixel:
//   cols[(c * kh + ky) * kw + kx][oy * OW + ox] = x[c][iy][ix],  iy = oy*sh - pt + ky*dh, ...
// zero where the tap reads padding. col2im adds every column entry back onto the pixel it came
// from, which is what the input gradient of a convolution needs after dcols = wᵀ dy.
#pragma once
#include "kernels/cpu/conv_geometry.hpp"
#include "kernels/cpu/thread_pool.hpp"

namespace pock::cpu {

// x: the group's in_per_group() planes; cols: in_per_group() * kh * kw rows of out_plane()
// values, row_stride floats apart (out_plane() for one image's matrix; batch * out_plane() when
// the images' matrices sit side by side, image n's columns starting at cols + n * out_plane()).
void im2col(const ConvGeometry& g, const float* x, float* cols, pthreadpool_t pool, int64_t row_stride);
inline void im2col(const ConvGeometry& g, const float* x, float* cols, pthreadpool_t pool) {
  im2col(g, x, cols, pool, g.out_plane());
}

// dx (the group's planes) = sum of cols scattered back; dx is overwritten, not accumulated into.
// cols' rows are row_stride floats apart, as in im2col.
void col2im(const ConvGeometry& g, const float* cols, float* dx, pthreadpool_t pool, int64_t row_stride);
inline void col2im(const ConvGeometry& g, const float* cols, float* dx, pthreadpool_t pool) {
  col2im(g, cols, dx, pool, g.out_plane());
}

// True when im2col is the identity (1x1 kernel, stride 1, no padding): the planes are the matrix.
inline bool unfold_is_identity(const ConvGeometry& g) {
  return g.kernel_h == 1 && g.kernel_w == 1 && g.stride_h == 1 && g.stride_w == 1 && g.pad_top == 0 &&
         g.pad_left == 0 && g.pad_bottom == 0 && g.pad_right == 0;
}

}  // namespace pock::cpu
