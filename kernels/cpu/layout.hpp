// NCHW <-> NHWC copies for kernels whose library wants channels last (XNNPACK): the staging of an
// NCHW convolution that the layout pass (src/compiler/passes/layout_nhwc.cpp) left alone — a lone
// frozen conv, or one whose output a weight gradient reads — and the cpu Transpose at the edges of
// the regions it converted.
#pragma once
#include <cstdint>

#include "ir/activation.hpp"
#include "kernels/cpu/thread_pool.hpp"

namespace pock::cpu {

// y[n][p][c] = x[n][c][p] for `batch` images of `channels` planes of `plane` pixels.
void nchw_to_nhwc(const float* x, float* y, int64_t batch, int64_t channels, int64_t plane, pthreadpool_t pool);

// y[n][c][p] = act(x[n][p][c] + (bias ? bias[c] : 0)): a convolution's bias add and fused
// activation ride along with the copy instead of making more passes over y.
void nhwc_to_nchw(const float* x, const float* bias, float* y, int64_t batch, int64_t channels, int64_t plane,
                  pthreadpool_t pool, Activation activation = Activation::kNone);

// The same copies through one chosen kind of tile, whatever the CPU would pick: tests check each
// kind the machine can run against their own loops (the functions above use only the best one).
namespace layout_testing {
enum class Tiles { kScalar, kAvx2, kAvx512 };
// False when this build or this CPU cannot run `tiles`.
bool available(Tiles tiles);
void nchw_to_nhwc_with(Tiles tiles, const float* x, float* y, int64_t batch, int64_t channels, int64_t plane);
void nhwc_to_nchw_with(Tiles tiles, const float* x, const float* bias, float* y, int64_t batch, int64_t channels,
                       int64_t plane, Activation activation);
}  // namespace layout_testing

}  // namespace pock::cpu
