// The CUDA conv family's own logic (kernels/cuda/conv_logic.hpp) on the host against the
// reference kernels: the pools and their gradients, GlobalAvgPool, Conv2dGradBias, Conv2d's bias
// and activation epilogue, and which convolutions cuDNN is trusted with (cudnn_conv_fits).
#include <random>

#include "cuda_logic/logic_harness.hpp"
#include "kernels/cuda/conv_logic.hpp"

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

// A pool's window attributes.
Attrs window_attrs(const PoolGeometry& g, bool count_include_pad) {
  return {{"kernel", std::vector<int64_t>{g.kh, g.kw}},
          {"strides", std::vector<int64_t>{g.sh, g.sw}},
          {"pads", g.pads},
          {"ceil_mode", int64_t{g.ceil_mode}},
          {"count_include_pad", int64_t{count_include_pad}}};
}

// What ref's kernel writes for `op` over `inputs`.
std::vector<HostBuffer> ref_outputs(const char* op, std::vector<InputSlot> inputs, const Attrs& attrs) {
  BoundOp bound(op, std::move(inputs), attrs);
  INFO(bound.status().message());
  REQUIRE(bound.status().is_ok());
  return bound.run_ref();
}

}  // namespace

TEST_CASE("cuda MaxPool2d and AvgPool2d logic matches ref", "[cuda_logic][conv]") {
  uint32_t seed = 1000;
  for (const PoolGeometry& geometry : pool_geometries()) {
    for (const char* op : {"MaxPool2d", "AvgPool2d", "AvgPool2d include pad"}) {
      const bool max = std::string(op) == "MaxPool2d";
      const bool include_pad = std::string(op) == "AvgPool2d include pad";
      std::vector<float> x = random_values(geometry.x, ++seed, -1.0f, 1.0f, false);
      if (max) x[3] = NAN;  // NaN wins its windows
      BoundOp bound(max ? "MaxPool2d" : "AvgPool2d", {f32(geometry.x, x)}, window_attrs(geometry, include_pad));
      REQUIRE(bound.status().is_ok());
      const std::vector<HostBuffer> want = bound.run_ref();
      std::vector<HostBuffer> got = bound.fresh_outputs();
      REQUIRE(got[0].shape == geometry.y());
      const pock_op_desc d = bound.bind(got);
      const params::WindowParams p = parsed<params::WindowParams>(d);
      const cuda::Window g = ref::window_of(p, d.inputs[0], d.outputs[0], p.kernel_h, p.kernel_w);
      if (max) {
        each_element(cuda::MaxPoolElement{data_of(d.inputs[0]), data_of(d.outputs[0]), g}, numel(geometry.y()));
      } else {
        each_element(cuda::AvgPoolElement{data_of(d.inputs[0]), data_of(d.outputs[0]), g, p.count_include_pad},
                     numel(geometry.y()));
      }
      INFO(op << " x " << shape_str(geometry.x) << " y " << shape_str(geometry.y()) << " ceil " << geometry.ceil_mode);
      expect_close(got[0], want[0], "y", 1e-5, 1e-6);
    }
  }
}

TEST_CASE("cuda MaxPool2dGrad and AvgPool2dGrad logic matches ref", "[cuda_logic][layer_grad_conv]") {
  uint32_t seed = 1100;
  for (const PoolGeometry& geometry : pool_geometries()) {
    for (const char* op : {"MaxPool2dGrad", "AvgPool2dGrad", "AvgPool2dGrad include pad"}) {
      const bool max = std::string(op) == "MaxPool2dGrad";
      const bool include_pad = std::string(op) == "AvgPool2dGrad include pad";
      std::vector<InputSlot> inputs = {random_f32(geometry.y(), ++seed)};
      if (max) {
        // Ties: the first maximum takes the gradient.
        std::vector<float> x = random_values(geometry.x, ++seed, -1.0f, 1.0f, false);
        for (size_t i = 0; i < x.size(); i += 3) x[i] = 0.5f;
        inputs.push_back(f32(geometry.x, x));
      }
      ++seed;  // the seed the zeroed output once took: the cases stay as they were
      Attrs attrs = window_attrs(geometry, include_pad);
      if (!max) attrs.set("input_shape", geometry.x);
      BoundOp bound(max ? "MaxPool2dGrad" : "AvgPool2dGrad", std::move(inputs), attrs);
      REQUIRE(bound.status().is_ok());
      const std::vector<HostBuffer> want = bound.run_ref();
      std::vector<HostBuffer> got = bound.fresh_outputs();  // poison that must go
      REQUIRE(got[0].shape == geometry.x);
      const pock_op_desc d = bound.bind(got);
      const params::WindowParams p = parsed<params::WindowParams>(d);
      float* dx = data_of(d.outputs[0]);
      if (max) {
        const cuda::Window g = ref::window_of(p, d.inputs[1], d.inputs[0], p.kernel_h, p.kernel_w);
        each_element(cuda::MaxPoolGradElement{data_of(d.inputs[0]), data_of(d.inputs[1]), dx, g}, numel(geometry.x));
      } else {
        const cuda::Window g = ref::window_of(p, d.outputs[0], d.inputs[0], p.kernel_h, p.kernel_w);
        each_element(cuda::AvgPoolGradElement{data_of(d.inputs[0]), dx, g, p.count_include_pad}, numel(geometry.x));
      }
      INFO(op << " x " << shape_str(geometry.x) << " y " << shape_str(geometry.y()) << " ceil " << geometry.ceil_mode);
      if (max) CHECK(got[0].bytes == want[0].bytes);  // ref's order of additions
      expect_close(got[0], want[0], "dx", 1e-5, 1e-6);
    }
  }
}

TEST_CASE("cuda GlobalAvgPool and Conv2dGradBias logic matches ref", "[cuda_logic][conv]") {
  for (const Shape& shape : {Shape{2, 3, 5, 7}, Shape{1, 4, 40, 40}, Shape{3, 2, 1, 1}}) {
    BoundOp pool("GlobalAvgPool", {random_f32(shape, 1200)});
    REQUIRE(pool.status().is_ok());
    const std::vector<HostBuffer> want = pool.run_ref();
    std::vector<HostBuffer> got = pool.fresh_outputs();
    const pock_op_desc d = pool.bind(got);
    each_row(cuda::GlobalAvgPoolPlane{data_of(d.inputs[0]), data_of(d.outputs[0]), shape[2] * shape[3]},
             shape[0] * shape[1]);
    INFO("GlobalAvgPool " << shape_str(shape));
    expect_close(got[0], want[0], "y");

    for (int64_t channels : {shape[1], shape[1] - 1}) {  // all output channels, and the leading ones
      if (channels < 1) continue;
      BoundOp grad("Conv2dGradBias", {random_f32(shape, 1201)}, {{"channels", channels}});
      REQUIRE(grad.status().is_ok());
      const std::vector<HostBuffer> want_db = grad.run_ref();
      std::vector<HostBuffer> db = grad.fresh_outputs();
      const pock_op_desc gd = grad.bind(db);
      each_row(cuda::ConvBiasGradChannel{data_of(gd.inputs[0]), data_of(gd.outputs[0]),
                                         cuda::ChannelView{shape[0], shape[1], shape[2] * shape[3]}},
               channels);
      INFO("Conv2dGradBias " << shape_str(shape) << " channels " << channels);
      expect_close(db[0], want_db[0], "db");
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
    const Shape x{2, 4, 6, 5}, w{6, 2, 3, 3};  // groups 2
    const HostBuffer xv = random_f32(x, ++seed, -3.0f, 3.0f), wv = random_f32(w, ++seed);
    std::vector<HostBuffer> plain = ref_outputs("Conv2d", {xv, wv}, {{"groups", int64_t{2}}});  // what cuDNN computes
    BoundOp fused("Conv2d", {xv, wv, random_f32({6}, ++seed, -2.0f, 2.0f)},
                  {{"groups", int64_t{2}}, {"activation", std::string(activation)}});
    REQUIRE(fused.status().is_ok());
    const std::vector<HostBuffer> want = fused.run_ref();
    std::vector<HostBuffer> unused = fused.fresh_outputs();
    const pock_op_desc d = fused.bind(unused);
    REQUIRE(plain[0].shape == Shape{2, 6, 4, 3});
    const params::WindowParams p = parsed<params::WindowParams>(d);
    each_element(cuda::ConvEpilogue{data_of(plain[0]), data_of(d.inputs[2]), 6, 12, p.activation}, numel(plain[0].shape));
    INFO("activation " << activation);
    expect_close(plain[0], want[0], "y");
  }
}

TEST_CASE("cuda NHWC Conv2d: layout passes around an NCHW convolution match ref's NHWC Conv2d", "[cuda_logic][conv]") {
  uint32_t seed = 1400;
  for (const char* activation : {"none", "relu6"}) {
    const int64_t n = 2, c = 4, h = 6, w = 5, o = 6, oh = 6, ow = 5;  // 3x3, pads 1, groups 2
    const HostBuffer x = random_f32({n, h, w, c}, ++seed, -3.0f, 3.0f), wt = random_f32({o, 2, 3, 3}, ++seed);
    BoundOp nhwc("Conv2d", {x, wt, random_f32({o}, ++seed)},
                 {{"groups", int64_t{2}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"layout", std::string("NHWC")},
                  {"activation", std::string(activation)}});
    REQUIRE(nhwc.status().is_ok());
    const std::vector<HostBuffer> want = nhwc.run_ref();
    // What cuDNN computes, on the NCHW copy of x.
    HostBuffer x_nchw = f32({n, c, h, w}, std::vector<float>(static_cast<size_t>(n * c * h * w)));
    HostBuffer x_nhwc = x;
    each_element(cuda::ImageToPaddedNchw{data_of(x_nhwc), data_of(x_nchw), {n, c, h, w}, true, 0, 0, h, w}, n * c * h * w);
    std::vector<HostBuffer> nchw =
        ref_outputs("Conv2d", {x_nchw, wt}, {{"groups", int64_t{2}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
    REQUIRE(nchw[0].shape == Shape{n, o, oh, ow});
    std::vector<HostBuffer> got = nhwc.fresh_outputs();
    const pock_op_desc d = nhwc.bind(got);
    const auto p = parsed<params::WindowParams>(d);
    each_element(cuda::NhwcEpilogue{data_of(nchw[0]), data_of(d.inputs[2]), data_of(d.outputs[0]), {n, o, oh, ow},
                                    p.activation},
                 n * o * oh * ow);
    INFO("activation " << activation);
    expect_close(got[0], want[0], "y");
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
  auto conv_attrs = [&](bool padded) {
    return Attrs{{"groups", groups},
                 {"strides", std::vector<int64_t>{2, 2}},
                 {"pads", padded ? std::vector<int64_t>{0, 0, 0, 0} : pads}};
  };
  HostBuffer x = random_f32({n, c, h, w}, 1500), wt = random_f32({o, c / groups, kh, kw}, 1501),
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
  HostBuffer x_padded = f32({n, c, ph, pw}, std::vector<float>(static_cast<size_t>(n * c * ph * pw), 1234.0f));
  each_element(cuda::ImageToPaddedNchw{data_of(x), data_of(x_padded), {n, c, h, w}, false, p.pad_top, p.pad_left, ph, pw},
               numel(x_padded.shape));

  std::vector<HostBuffer> want = ref_outputs("Conv2d", {x, wt}, conv_attrs(false));
  std::vector<HostBuffer> got = ref_outputs("Conv2d", {x_padded, wt}, conv_attrs(true));
  REQUIRE(got[0].shape == Shape{n, o, oh, ow});
  expect_close(got[0], want[0], "Conv2d y");

  Attrs weight_attrs = conv_attrs(false), padded_weight_attrs = conv_attrs(true);
  weight_attrs.set("kernel", std::vector<int64_t>{kh, kw});
  padded_weight_attrs.set("kernel", std::vector<int64_t>{kh, kw});
  want = ref_outputs("Conv2dGradWeight", {x, dy}, weight_attrs);
  got = ref_outputs("Conv2dGradWeight", {x_padded, dy}, padded_weight_attrs);
  REQUIRE(got[0].shape == Shape{o, c / groups, kh, kw});
  expect_close(got[0], want[0], "Conv2dGradWeight dw");

  Attrs grad_attrs = conv_attrs(false), padded_attrs = conv_attrs(true);
  grad_attrs.set("input_shape", std::vector<int64_t>{n, c, h, w});
  padded_attrs.set("input_shape", std::vector<int64_t>{n, c, ph, pw});
  want = ref_outputs("Conv2dGradInput", {dy, wt}, grad_attrs);
  std::vector<HostBuffer> padded = ref_outputs("Conv2dGradInput", {dy, wt}, padded_attrs);
  REQUIRE(padded[0].shape == Shape{n, c, ph, pw});
  HostBuffer dx = f32({n, c, h, w}, std::vector<float>(static_cast<size_t>(n * c * h * w), NAN));
  each_element(cuda::CropPadded{data_of(padded[0]), data_of(dx), {n, c, h, w}, p.pad_top, p.pad_left, ph, pw},
               numel(dx.shape));
  expect_close(dx, want[0], "Conv2dGradInput dx");
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
