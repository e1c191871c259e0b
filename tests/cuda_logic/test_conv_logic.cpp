// The CUDA conv family's own logic (kernels/cuda/conv_logic.hpp) on the host against the
// reference kernels: the pools and their gradients, GlobalAvgPool, Conv2dGradBias, Conv2d's bias
// and activation epilogue, and which convolutions cuDNN is trusted with (cudnn_conv_fits).
#include <catch2/catch.hpp>

#include <random>

#include "kernels/cuda/conv_logic.hpp"
#include "ref_case.hpp"

using namespace pock;
using namespace pock::test;

namespace {

// A pool's output extent as the schema computes it (PyTorch's ceil_mode rule).
int64_t pool_extent(int64_t input, int64_t kernel, int64_t stride, int64_t begin, int64_t end, bool ceil_mode) {
  const int64_t span = input + begin + end - kernel;
  if (!ceil_mode) return span / stride + 1;
  int64_t out = (span + stride - 1) / stride + 1;
  if ((out - 1) * stride >= input + begin) --out;
  return out;
}

struct PoolGeometry {
  Shape x;
  int64_t kh, kw, sh, sw;
  std::vector<int64_t> pads;  // top, left, bottom, right: each below the kernel
  bool ceil_mode;
  Shape y() const {
    return {x[0], x[1], pool_extent(x[2], kh, sh, pads[0], pads[2], ceil_mode),
            pool_extent(x[3], kw, sw, pads[1], pads[3], ceil_mode)};
  }
};

std::vector<PoolGeometry> pool_geometries() {
  std::vector<PoolGeometry> all = {{{2, 3, 7, 9}, 3, 2, 2, 1, {1, 0, 1, 1}, false},
                                   {{1, 2, 8, 8}, 3, 3, 2, 2, {0, 0, 0, 0}, true},
                                   {{1, 2, 8, 7}, 3, 3, 2, 2, {1, 1, 0, 2}, true},
                                   {{2, 1, 6, 6}, 2, 2, 2, 2, {0, 0, 0, 0}, false},
                                   {{1, 1, 5, 5}, 3, 3, 1, 1, {1, 1, 1, 1}, false}};
  std::mt19937 gen(5);
  for (int i = 0; i < 6; ++i) {
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(gen); };
    const int64_t kh = pick(1, 4), kw = pick(1, 4);
    all.push_back({{pick(1, 2), pick(1, 3), pick(kh, 11), pick(kw, 11)},
                   kh,
                   kw,
                   pick(1, 3),
                   pick(1, 3),
                   {pick(0, kh - 1), pick(0, kw - 1), pick(0, kh - 1), pick(0, kw - 1)},
                   pick(0, 1) == 1});
  }
  return all;
}

void set_window(RefCase& c, const PoolGeometry& g, bool count_include_pad) {
  c.set_ints("kernel", {g.kh, g.kw});
  c.set_ints("strides", {g.sh, g.sw});
  c.set_ints("pads", g.pads);
  c.set_int("ceil_mode", g.ceil_mode);
  c.set_int("count_include_pad", count_include_pad);
}

}  // namespace

TEST_CASE("cuda MaxPool2d and AvgPool2d logic matches ref", "[cuda_logic][conv]") {
  uint32_t seed = 1000;
  for (const PoolGeometry& geometry : pool_geometries()) {
    for (const char* op : {"MaxPool2d", "AvgPool2d", "AvgPool2d include pad"}) {
      const bool max = std::string(op) == "MaxPool2d";
      const bool include_pad = std::string(op) == "AvgPool2d include pad";
      RefCase expected;
      expected.op = max ? "MaxPool2d" : "AvgPool2d";
      expected.inputs.push_back(random_f32(geometry.x, ++seed));
      if (max) expected.inputs[0].f32()[3] = NAN;  // NaN wins its windows
      expected.outputs.push_back(tensor(DType::kF32, geometry.y()));
      set_window(expected, geometry, include_pad);
      RefCase actual = expected;
      REQUIRE(run_ref(expected).is_ok());
      const params::WindowParams p = parsed<params::WindowParams>(actual);
      const pock_op_desc d = actual.desc();
      const cuda::Window g = ref::window_of(p, d.inputs[0], d.outputs[0], p.kernel_h, p.kernel_w);
      if (max) {
        each_element(cuda::MaxPoolElement{actual.inputs[0].f32(), actual.outputs[0].f32(), g}, numel(geometry.y()));
      } else {
        each_element(cuda::AvgPoolElement{actual.inputs[0].f32(), actual.outputs[0].f32(), g, p.count_include_pad},
                     numel(geometry.y()));
      }
      INFO(op << " x " << shape_str(geometry.x) << " y " << shape_str(geometry.y()) << " ceil " << geometry.ceil_mode);
      expect_close(actual.outputs[0], expected.outputs[0], "y", 1e-5f, 1e-6f);
    }
  }
}

TEST_CASE("cuda MaxPool2dGrad and AvgPool2dGrad logic matches ref", "[cuda_logic][layer_grad_conv]") {
  uint32_t seed = 1100;
  for (const PoolGeometry& geometry : pool_geometries()) {
    for (const char* op : {"MaxPool2dGrad", "AvgPool2dGrad", "AvgPool2dGrad include pad"}) {
      const bool max = std::string(op) == "MaxPool2dGrad";
      const bool include_pad = std::string(op) == "AvgPool2dGrad include pad";
      RefCase expected;
      expected.op = max ? "MaxPool2dGrad" : "AvgPool2dGrad";
      expected.inputs.push_back(random_f32(geometry.y(), ++seed));
      if (max) {
        // Ties: the first maximum takes the gradient.
        CaseTensor x = random_f32(geometry.x, ++seed);
        for (int64_t i = 0; i < x.count(); i += 3) x.f32()[i] = 0.5f;
        expected.inputs.push_back(x);
      }
      expected.outputs.push_back(random_f32(geometry.x, ++seed));  // garbage that must go
      if (!max) expected.set_ints("input_shape", geometry.x);
      set_window(expected, geometry, include_pad);
      RefCase actual = expected;
      REQUIRE(run_ref(expected).is_ok());
      const params::WindowParams p = parsed<params::WindowParams>(actual);
      const pock_op_desc d = actual.desc();
      float* dx = actual.outputs[0].f32();
      if (max) {
        const cuda::Window g = ref::window_of(p, d.inputs[1], d.inputs[0], p.kernel_h, p.kernel_w);
        each_element(cuda::MaxPoolGradElement{actual.inputs[0].f32(), actual.inputs[1].f32(), dx, g}, numel(geometry.x));
      } else {
        const cuda::Window g = ref::window_of(p, d.outputs[0], d.inputs[0], p.kernel_h, p.kernel_w);
        each_element(cuda::AvgPoolGradElement{actual.inputs[0].f32(), dx, g, p.count_include_pad}, numel(geometry.x));
      }
      INFO(op << " x " << shape_str(geometry.x) << " y " << shape_str(geometry.y()) << " ceil " << geometry.ceil_mode);
      if (max) CHECK(actual.outputs[0].bytes == expected.outputs[0].bytes);  // ref's order of additions
      expect_close(actual.outputs[0], expected.outputs[0], "dx", 1e-5f, 1e-6f);
    }
  }
}

TEST_CASE("cuda GlobalAvgPool and Conv2dGradBias logic matches ref", "[cuda_logic][conv]") {
  for (const Shape& shape : {Shape{2, 3, 5, 7}, Shape{1, 4, 40, 40}, Shape{3, 2, 1, 1}}) {
    RefCase expected;
    expected.op = "GlobalAvgPool";
    expected.inputs.push_back(random_f32(shape, 1200));
    expected.outputs.push_back(tensor(DType::kF32, {shape[0], shape[1], 1, 1}));
    RefCase actual = expected;
    REQUIRE(run_ref(expected).is_ok());
    each_row(cuda::GlobalAvgPoolPlane{actual.inputs[0].f32(), actual.outputs[0].f32(), shape[2] * shape[3]},
             shape[0] * shape[1]);
    INFO("GlobalAvgPool " << shape_str(shape));
    expect_close(actual.outputs[0], expected.outputs[0], "y");

    for (int64_t channels : {shape[1], shape[1] - 1}) {  // all output channels, and the leading ones
      if (channels < 1) continue;
      RefCase grad;
      grad.op = "Conv2dGradBias";
      grad.inputs.push_back(random_f32(shape, 1201));
      grad.outputs.push_back(tensor(DType::kF32, {channels}));
      grad.set_int("channels", channels);
      RefCase mine = grad;
      REQUIRE(run_ref(grad).is_ok());
      each_row(cuda::ConvBiasGradChannel{mine.inputs[0].f32(), mine.outputs[0].f32(),
                                         cuda::ChannelView{shape[0], shape[1], shape[2] * shape[3]}},
               channels);
      INFO("Conv2dGradBias " << shape_str(shape) << " channels " << channels);
      expect_close(mine.outputs[0], grad.outputs[0], "db");
    }
  }
}

TEST_CASE("cuda Conv2d epilogue adds the bias and applies the activation as ref's Conv2d", "[cuda_logic][conv]") {
  for (float v : {-7.0f, -0.0f, 0.0f, 0.3f, 6.0f, 6.5f, NAN, INFINITY, -INFINITY}) {
    for (Activation a : {Activation::kNone, Activation::kRelu, Activation::kRelu6}) {
      const float got = cuda::activate(a, v), want = apply_activation(a, v);
      CHECK((std::isnan(want) ? std::isnan(got) : got == want));
    }
  }
  uint32_t seed = 1300;
  for (const char* activation : {"none", "relu", "relu6"}) {
    const Shape x{2, 4, 6, 5}, w{6, 2, 3, 3}, y{2, 6, 4, 3};  // groups 2
    RefCase plain;
    plain.op = "Conv2d";
    plain.inputs = {random_f32(x, ++seed, -3.0f, 3.0f), random_f32(w, ++seed)};
    plain.outputs.push_back(tensor(DType::kF32, y));
    plain.set_int("groups", 2);
    RefCase fused = plain;
    fused.inputs.push_back(random_f32({6}, ++seed, -2.0f, 2.0f));
    fused.set_text("activation", activation);
    REQUIRE(run_ref(plain).is_ok());  // what cuDNN computes
    REQUIRE(run_ref(fused).is_ok());
    const params::WindowParams p = parsed<params::WindowParams>(fused);
    each_element(cuda::ConvEpilogue{plain.outputs[0].f32(), fused.inputs[2].f32(), 6, 12, p.activation}, numel(y));
    INFO("activation " << activation);
    expect_close(plain.outputs[0], fused.outputs[0], "y");
  }
}

TEST_CASE("cuda NHWC Conv2d: layout passes around an NCHW convolution match ref's NHWC Conv2d", "[cuda_logic][conv]") {
  uint32_t seed = 1400;
  for (const char* activation : {"none", "relu6"}) {
    const int64_t n = 2, c = 4, h = 6, w = 5, o = 6, oh = 6, ow = 5;  // 3x3, pads 1, groups 2
    RefCase nhwc;
    nhwc.op = "Conv2d";
    nhwc.inputs = {random_f32({n, h, w, c}, ++seed, -3.0f, 3.0f), random_f32({o, 2, 3, 3}, ++seed),
                   random_f32({o}, ++seed)};
    nhwc.outputs.push_back(tensor(DType::kF32, {n, oh, ow, o}));
    nhwc.set_int("groups", 2);
    nhwc.set_ints("pads", {1, 1, 1, 1});
    nhwc.set_text("layout", "NHWC");
    nhwc.set_text("activation", activation);
    RefCase nchw;  // what cuDNN computes, on the NCHW copy of x
    nchw.op = "Conv2d";
    nchw.inputs = {tensor(DType::kF32, {n, c, h, w}), nhwc.inputs[1]};
    nchw.outputs.push_back(tensor(DType::kF32, {n, o, oh, ow}));
    nchw.set_int("groups", 2);
    nchw.set_ints("pads", {1, 1, 1, 1});
    each_element(cuda::ImageToPaddedNchw{nhwc.inputs[0].f32(), nchw.inputs[0].f32(), {n, c, h, w}, true, 0, 0, h, w},
                 n * c * h * w);
    REQUIRE(run_ref(nchw).is_ok());
    RefCase mine = nhwc;
    REQUIRE(run_ref(nhwc).is_ok());
    const auto p = parsed<params::WindowParams>(mine);
    each_element(cuda::NhwcEpilogue{nchw.outputs[0].f32(), mine.inputs[2].f32(), mine.outputs[0].f32(), {n, o, oh, ow},
                                    p.activation},
                 n * o * oh * ow);
    INFO("activation " << activation);
    expect_close(mine.outputs[0], nhwc.outputs[0], "y");
  }
}

TEST_CASE("cuda convolutions with padding cuDNN cannot express run on a zero-padded copy as ref pads",
          "[cuda_logic][conv]") {
  // x 8x7 with pads (top 0, left 1, bottom 1, right 0), stride 2: ref's windows start at 0 and -1;
  // cuDNN's symmetric padding cannot give them, the padded copy with no padding does.
  const int64_t n = 2, c = 4, h = 8, w = 7, o = 6, kh = 3, kw = 3, groups = 2;
  const std::vector<int64_t> pads = {0, 1, 1, 0};
  const int64_t oh = (h + 0 + 1 - kh) / 2 + 1, ow = (w + 1 + 0 - kw) / 2 + 1;
  const int64_t ph = h + 1, pw = w + 1;  // the padded copy
  auto conv_case = [&](const char* op, std::vector<CaseTensor> inputs, Shape out, bool padded) {
    RefCase r;
    r.op = op;
    r.inputs = std::move(inputs);
    r.outputs.push_back(tensor(DType::kF32, std::move(out)));
    r.set_int("groups", groups);
    r.set_ints("strides", {2, 2});
    r.set_ints("pads", padded ? std::vector<int64_t>{0, 0, 0, 0} : pads);
    return r;
  };
  CaseTensor x = random_f32({n, c, h, w}, 1500), wt = random_f32({o, c / groups, kh, kw}, 1501),
             dy = random_f32({n, o, oh, ow}, 1502);
  params::WindowParams p;
  p.stride_h = p.stride_w = 2;
  p.pad_top = 0, p.pad_left = 1, p.pad_bottom = 1, p.pad_right = 0;
  p.groups = groups;
  cuda::CudnnGeometry g;
  REQUIRE(cuda::cudnn_geometry({n, c, h, w, o, kh, kw, oh, ow}, p, &g));
  CHECK(g.padded);
  CHECK(g.shapes.h == ph);
  CHECK(g.shapes.w == pw);
  CHECK(g.params.pad_top + g.params.pad_left + g.params.pad_bottom + g.params.pad_right == 0);
  CaseTensor x_padded = tensor(DType::kF32, {n, c, ph, pw});
  each_element(cuda::ImageToPaddedNchw{x.f32(), x_padded.f32(), {n, c, h, w}, false, p.pad_top, p.pad_left, ph, pw},
               x_padded.count());

  RefCase want = conv_case("Conv2d", {x, wt}, {n, o, oh, ow}, false);
  RefCase got = conv_case("Conv2d", {x_padded, wt}, {n, o, oh, ow}, true);
  REQUIRE(run_ref(want).is_ok());
  REQUIRE(run_ref(got).is_ok());
  expect_close(got.outputs[0], want.outputs[0], "Conv2d y");

  want = conv_case("Conv2dGradWeight", {x, dy}, {o, c / groups, kh, kw}, false);
  got = conv_case("Conv2dGradWeight", {x_padded, dy}, {o, c / groups, kh, kw}, true);
  REQUIRE(run_ref(want).is_ok());
  REQUIRE(run_ref(got).is_ok());
  expect_close(got.outputs[0], want.outputs[0], "Conv2dGradWeight dw");

  want = conv_case("Conv2dGradInput", {dy, wt}, {n, c, h, w}, false);
  want.set_ints("input_shape", {n, c, h, w});
  RefCase padded = conv_case("Conv2dGradInput", {dy, wt}, {n, c, ph, pw}, true);
  padded.set_ints("input_shape", {n, c, ph, pw});
  REQUIRE(run_ref(want).is_ok());
  REQUIRE(run_ref(padded).is_ok());
  CaseTensor dx = tensor(DType::kF32, {n, c, h, w});
  each_element(cuda::CropPadded{padded.outputs[0].f32(), dx.f32(), {n, c, h, w}, p.pad_top, p.pad_left, ph, pw},
               dx.count());
  expect_close(dx, want.outputs[0], "Conv2dGradInput dx");
}

TEST_CASE("cuda convolutions go to cuDNN only where its symmetric padding gives ref's windows", "[cuda_logic][conv]") {
  params::WindowParams p;
  p.stride_h = p.stride_w = 2;
  p.pad_top = p.pad_left = 1;
  p.pad_bottom = p.pad_right = 1;
  // x 7x7, kernel 3, stride 2, pads 1: ref's extent (7 + 2 - 3) / 2 + 1 = 4, as cuDNN's.
  cuda::ConvShapes s{2, 4, 7, 7, 8, 3, 3, 4, 4};
  CHECK(cuda::cudnn_conv_fits(s, p));
  // pad bottom 0 (ref's extent (7 + 1 - 3) / 2 + 1 = 3) differs from cuDNN's: declined.
  s.oh = 3;
  CHECK_FALSE(cuda::cudnn_conv_fits(s, p));
  // x 8x8 with pads top 0, bottom 1: ref (8 + 1 - 3) / 2 + 1 = 4, cuDNN (8 - 3) / 2 + 1 = 3.
  p.pad_top = p.pad_left = 0;
  s = {2, 4, 8, 8, 8, 3, 3, 4, 4};
  CHECK_FALSE(cuda::cudnn_conv_fits(s, p));
  // x 7x7 pads top 0, bottom 1: both 3; the windows start at 0, 2, 4 either way.
  s = {2, 4, 7, 7, 8, 3, 3, 3, 3};
  CHECK(cuda::cudnn_conv_fits(s, p));
  p.groups = 3;  // 4 channels do not split into 3 groups
  CHECK_FALSE(cuda::cudnn_conv_fits(s, p));
  p.groups = 4;
  CHECK(cuda::cudnn_conv_fits(s, p));
  s.n = 0;  // empty
  CHECK_FALSE(cuda::cudnn_conv_fits(s, p));
}
