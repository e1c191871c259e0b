// LayerNormGrad, RMSNormGrad, SoftmaxGrad and LogSoftmaxGrad with NEON: the row traversal of
// kernels/cpu/norm_grad_steps.hpp with four-lane loops. Each row is a pass of sums and a pass
// that writes dx; whether gamma is present is a template parameter, so the loops carry no branch.
#include <arm_neon.h>

#include "kernels/cpu/norm_grad_steps.hpp"
#include "kernels/neon/neon_families.hpp"
#include "kernels/neon/neon_math.hpp"
#include "kernels/neon/neon_util.hpp"

namespace pock::neon {
namespace {

// g dy for lanes [i, i + 4): gamma times dy, or dy when there is no gamma.
template <bool kGamma>
float32x4_t scaled_dy(const float* gamma, const float* dy, int64_t i) {
  if constexpr (kGamma)
    return vmulq_f32(vld1q_f32(gamma + i), vld1q_f32(dy + i));
  else
    return vld1q_f32(dy + i);
}

// The same for one element (row tails).
template <bool kGamma>
float scaled_dy_at(const float* gamma, const float* dy, int64_t i) {
  if constexpr (kGamma)
    return gamma[i] * dy[i];
  else
    return dy[i];
}

// dx = invstd g dy + b (x - mean) + c, b and c from the row's sums of g dy and g dy (x - mean).
template <bool kGamma>
void layer_norm_row_with(const float* dy, const float* x, const float* gamma, float mean, float invstd, float* dx,
                         int64_t n) {
  const float32x4_t m = vdupq_n_f32(mean);
  float32x4_t s = vdupq_n_f32(0.0f), sd = vdupq_n_f32(0.0f);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const float32x4_t g = scaled_dy<kGamma>(gamma, dy, i);
    s = vaddq_f32(s, g);
    sd = vfmaq_f32(sd, g, vsubq_f32(vld1q_f32(x + i), m));
  }
  float sum_gdy = vaddvq_f32(s), sum_gdy_dev = vaddvq_f32(sd);
  for (int64_t j = i; j < n; ++j) {
    const float g = scaled_dy_at<kGamma>(gamma, dy, j);
    sum_gdy += g;
    sum_gdy_dev += g * (x[j] - mean);
  }
  const float inv_n = n ? 1.0f / static_cast<float>(n) : 0.0f;
  const float b = -invstd * invstd * invstd * sum_gdy_dev * inv_n;
  const float c = -invstd * sum_gdy * inv_n;
  const float32x4_t vb = vdupq_n_f32(b), vc = vdupq_n_f32(c), vs = vdupq_n_f32(invstd);
  for (i = 0; i + 4 <= n; i += 4) {
    const float32x4_t g = scaled_dy<kGamma>(gamma, dy, i);
    vst1q_f32(dx + i, vfmaq_f32(vfmaq_f32(vc, g, vs), vsubq_f32(vld1q_f32(x + i), m), vb));
  }
  for (; i < n; ++i) dx[i] = invstd * scaled_dy_at<kGamma>(gamma, dy, i) + b * (x[i] - mean) + c;
}

void layer_norm_row(const float* dy, const float* x, const float* gamma, float mean, float invstd, float* dx,
                    int64_t n) {
  if (gamma)
    layer_norm_row_with<true>(dy, x, gamma, mean, invstd, dx, n);
  else
    layer_norm_row_with<false>(dy, x, gamma, mean, invstd, dx, n);
}

void layer_norm_params(const float* dy, const float* x, float mean, float invstd, float* dgamma, float* dbeta,
                       int64_t n) {
  const float32x4_t m = vdupq_n_f32(mean), s = vdupq_n_f32(invstd);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const float32x4_t g = vld1q_f32(dy + i);
    const float32x4_t xhat = vmulq_f32(vsubq_f32(vld1q_f32(x + i), m), s);
    vst1q_f32(dgamma + i, vfmaq_f32(vld1q_f32(dgamma + i), g, xhat));
    vst1q_f32(dbeta + i, vaddq_f32(vld1q_f32(dbeta + i), g));
  }
  for (; i < n; ++i) {
    dgamma[i] += dy[i] * (x[i] - mean) * invstd;
    dbeta[i] += dy[i];
  }
}

// dx = r g dy - x r^3 mean(g dy x)
template <bool kGamma>
void rms_norm_row_with(const float* dy, const float* x, const float* gamma, float invrms, float* dx, int64_t n) {
  float32x4_t acc = vdupq_n_f32(0.0f);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) acc = vfmaq_f32(acc, scaled_dy<kGamma>(gamma, dy, i), vld1q_f32(x + i));
  float sum = vaddvq_f32(acc);
  for (int64_t j = i; j < n; ++j) sum += scaled_dy_at<kGamma>(gamma, dy, j) * x[j];
  const float b = -invrms * invrms * invrms * (n ? sum / static_cast<float>(n) : 0.0f);
  const float32x4_t vb = vdupq_n_f32(b), vr = vdupq_n_f32(invrms);
  for (i = 0; i + 4 <= n; i += 4) {
    vst1q_f32(dx + i, vfmaq_f32(vmulq_f32(scaled_dy<kGamma>(gamma, dy, i), vr), vld1q_f32(x + i), vb));
  }
  for (; i < n; ++i) dx[i] = invrms * scaled_dy_at<kGamma>(gamma, dy, i) + b * x[i];
}

void rms_norm_row(const float* dy, const float* x, const float* gamma, float invrms, float* dx, int64_t n) {
  if (gamma)
    rms_norm_row_with<true>(dy, x, gamma, invrms, dx, n);
  else
    rms_norm_row_with<false>(dy, x, gamma, invrms, dx, n);
}

void rms_norm_gamma(const float* dy, const float* x, float invrms, float* dgamma, int64_t n) {
  const float32x4_t r = vdupq_n_f32(invrms);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    vst1q_f32(dgamma + i, vfmaq_f32(vld1q_f32(dgamma + i), vld1q_f32(dy + i), vmulq_f32(vld1q_f32(x + i), r)));
  }
  for (; i < n; ++i) dgamma[i] += dy[i] * x[i] * invrms;
}

// dx = y (dy - sum(dy y))
void softmax_row(const float* dy, const float* y, float* dx, int64_t n) {
  float32x4_t acc = vdupq_n_f32(0.0f);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) acc = vfmaq_f32(acc, vld1q_f32(dy + i), vld1q_f32(y + i));
  float sum = vaddvq_f32(acc);
  for (; i < n; ++i) sum += dy[i] * y[i];
  const float32x4_t s = vdupq_n_f32(sum);
  map(dy, y, dx, n, [&](float32x4_t g, float32x4_t p) { return vmulq_f32(p, vsubq_f32(g, s)); });
}

// dx = dy - exp(y) sum(dy)
void log_softmax_row(const float* dy, const float* y, float* dx, int64_t n) {
  float32x4_t acc = vdupq_n_f32(0.0f);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) acc = vaddq_f32(acc, vld1q_f32(dy + i));
  float sum = vaddvq_f32(acc);
  for (; i < n; ++i) sum += dy[i];
  const float32x4_t s = vdupq_n_f32(sum);
  map(dy, y, dx, n, [&](float32x4_t g, float32x4_t logp) { return vfmsq_f32(g, exp(logp), s); });
}

const cpu::NormGradLoops kLoops{layer_norm_row, layer_norm_params, rms_norm_row,
                                rms_norm_gamma, softmax_row,       log_softmax_row};

}  // namespace

void register_norm_grad(KernelTable& t) { cpu::NormGradKernels<kLoops>::register_all(t, kNeonScore); }

}  // namespace pock::neon
