// Reference kernels of the quantize_conv family: ONNX's ConvInteger and QLinearConv as direct
// loops over NCHW images, products summed in int32, QLinearConv's result rounded half to even and
// saturated (kernels/ref/quantize_values.hpp). Window attributes are Conv2d's (params::WindowParams).
#include <cstdint>

#include "kernels/params/conv.hpp"
#include "kernels/ref/conv_window.hpp"
#include "kernels/ref/quantize_values.hpp"

namespace pock {
namespace {

using ref::integer_at;

// Element k of a one-value or per-output-channel tensor.
int64_t per_channel(const pock_tensor_desc& t, int64_t k) { return numel(t) == 1 ? 0 : k; }

// Calls store(y_index, out_channel, acc) with acc = sum (x - x_zp)(w - w_zp(o)) in int32 over each
// output element's window. A tap in the padding reads x_zp, so it adds 0 (ONNX's definition) and
// is skipped.
// Inputs `x`, `w` and their zero points (-1 or absent: 0) are indices into the call.
template <typename Store>
void integer_conv(const KernelCall& c, const params::WindowParams& p, int x_in, int x_zp, int w_in, int w_zp, Store&& store) {
  const pock_tensor_desc &x = c.in(x_in), &w = c.in(w_in);
  const ref::Window g = ref::window_of(p, x, c.out(0), w.dims[2], w.dims[3]);
  const int32_t x_zero = x_zp >= 0 && c.has_input(x_zp) ? integer_at(c.in(x_zp), 0) : 0;
  const bool has_w_zero = w_zp >= 0 && c.has_input(w_zp);
  const int64_t in_per_group = w.dims[1], out_per_group = g.out_channels / p.groups;
  int64_t y = 0;
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t o = 0; o < g.out_channels; ++o) {
      const int32_t w_zero = has_w_zero ? integer_at(c.in(w_zp), per_channel(c.in(w_zp), o)) : 0;
      const int64_t first_in_channel = (o / out_per_group) * in_per_group;
      for (int64_t oy = 0; oy < g.out_h; ++oy) {
        for (int64_t ox = 0; ox < g.out_w; ++ox) {
          int64_t acc = 0;  // wide so that a sum past int32 wraps (below), not overflows
          for (int64_t ci = 0; ci < in_per_group; ++ci) {
            const int64_t plane = (n * g.in_channels + first_in_channel + ci) * g.in_h;
            const int64_t filter = (o * in_per_group + ci) * g.kernel_h;
            ref::for_each_tap(g, oy, ox, [&](int64_t ky, int64_t kx, int64_t iy, int64_t ix) {
              acc += (integer_at(x, (plane + iy) * g.in_w + ix) - x_zero) * (integer_at(w, (filter + ky) * g.kernel_w + kx) - w_zero);
            });
          }
          store(y++, o, static_cast<int32_t>(acc));
        }
      }
    }
  }
}

Status conv_integer(const KernelCall& c, const params::WindowParams& p) {
  int32_t* y = c.out_data<int32_t>(0);
  integer_conv(c, p, 0, 2, 1, 3, [&](int64_t at, int64_t, int32_t acc) { y[at] = acc; });
  return Status::ok();
}

// Inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B?.
Status qlinear_conv(const KernelCall& c, const params::WindowParams& p) {
  const float x_scale = *c.in_data<float>(1), y_scale = *c.in_data<float>(6);
  const float* w_scale = c.in_data<float>(4);
  const int32_t y_zero = integer_at(c.in(7), 0);
  const int32_t* bias = c.has_input(8) ? c.in_data<int32_t>(8) : nullptr;
  integer_conv(c, p, 0, 2, 3, 5, [&](int64_t at, int64_t o, int32_t acc) {
    // In f32, as QLinearMatMul: one multiplier per output channel, applied to the int32 sum.
    const float multiplier = x_scale * w_scale[per_channel(c.in(4), o)] / y_scale;
    const auto sum = static_cast<int32_t>(int64_t{acc} + (bias ? bias[o] : 0));
    ref::store_saturated(c.out(0), at, static_cast<float>(sum) * multiplier, y_zero);
  });
  return Status::ok();
}

}  // namespace

void register_ref_quantize_conv(KernelTable& t) {
  for (DType d : {DType::kU8, DType::kI8}) {
    t.add(typed_kernel<params::WindowParams, conv_integer>("ConvInteger", d));
    t.add(typed_kernel<params::WindowParams, qlinear_conv>("QLinearConv", d));
  }
}

}  // namespace pock
