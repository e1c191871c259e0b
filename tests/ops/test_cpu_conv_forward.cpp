// The cpu Conv2d forward on the shapes where conv.cpp's choice of way changes (ways_for): 1x1
// pointwise (im2col first, frozen or not), depthwise 3x3 on wide rows (direct row loops, stride 1
// and 2, row widths around the 16-column blocks), depthwise on narrow rows and dense 3x3 (XNNPACK
// with its staging copies when the weight is frozen), each with bias and fused activation, frozen
// and trainable, on one and two threads — against the reference kernel.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "kernels/cpu/depthwise_channels_last.hpp"
#include "runtime/kernel_scope.hpp"
#include "runtime/table_backend.hpp"
#include "support/backend_compare.hpp"

using namespace pock;

namespace {

struct Case {
  int64_t n, c, h, w, o, k, stride, groups;
  std::vector<int64_t> pads;  // top, left, bottom, right
  const char* activation;
};

std::string describe(const Case& k, bool frozen, int threads) {
  std::string s = "x [" + std::to_string(k.n) + "," + std::to_string(k.c) + "," + std::to_string(k.h) + "," +
                  std::to_string(k.w) + "] out " + std::to_string(k.o) + " k " + std::to_string(k.k) + " stride " +
                  std::to_string(k.stride) + " groups " + std::to_string(k.groups) + " pads";
  for (int64_t p : k.pads) s += " " + std::to_string(p);
  return s + " " + k.activation + (frozen ? " frozen" : " trainable") + " threads " + std::to_string(threads);
}

// One Conv2d bound by hand (the kernels see exactly the descriptor an engine would give them).
class BoundConv {
 public:
  BoundConv(const Case& k, bool frozen, int threads)
      : x_(test::uniform({k.n, k.c, k.h, k.w}, 1)),
        w_(test::uniform({k.o, k.c / k.groups, k.k, k.k}, 2)),
        b_(test::uniform({k.o}, 3, -4.0f, 4.0f)),  // moves outputs across relu6's 0 and 6
        pads_(k.pads),
        strides_{k.stride, k.stride} {
    const int64_t oh = (k.h + k.pads[0] + k.pads[2] - k.k) / k.stride + 1;
    const int64_t ow = (k.w + k.pads[1] + k.pads[3] - k.k) / k.stride + 1;
    y_.assign(static_cast<size_t>(k.n * k.o * oh * ow), 0.0f);
    inputs_[0] = describe({k.n, k.c, k.h, k.w}, x_.data(), 0);
    inputs_[1] = describe({k.o, k.c / k.groups, k.k, k.k}, w_.data(), frozen ? POCK_TENSOR_CONSTANT : 0);
    inputs_[2] = describe({k.o}, b_.data(), 0);  // a trainable bias, as bias-only fine-tuning has
    output_ = describe({k.n, k.o, oh, ow}, y_.data(), 0);
    attrs_[0] = ints("pads", pads_);
    attrs_[1] = ints("strides", strides_);
    attrs_[2] = pock_attr{};
    attrs_[2].name = "groups";
    attrs_[2].kind = POCK_ATTR_INT;
    attrs_[2].i = k.groups;
    attrs_[3] = pock_attr{};
    attrs_[3].name = "activation";
    attrs_[3].kind = POCK_ATTR_STRING;
    attrs_[3].s = k.activation;
    desc_.op = "Conv2d";
    desc_.name = "conv";
    desc_.num_inputs = 3;
    desc_.num_outputs = 1;
    desc_.inputs = inputs_;
    desc_.outputs = &output_;
    desc_.num_attrs = 4;
    desc_.attrs = attrs_;
    desc_.num_threads = threads;
  }
  BoundConv(const BoundConv&) = delete;
  BoundConv& operator=(const BoundConv&) = delete;

  // y through `kernels`' Conv2d (prepared on a scope of its own when it has prepare_scoped).
  std::vector<float> run(const KernelTable& kernels) {
    const KernelDef* def = kernels.find("Conv2d", DType::kF32);
    REQUIRE(def != nullptr);
    KernelScope scope;
    void* state = nullptr;
    Status s = Status::ok();
    if (def->prepare_scoped) {
      s = def->prepare_scoped(desc_, scope, &state);
    } else if (def->prepare) {
      s = def->prepare(desc_, &state);
    }
    INFO(s.to_string());
    REQUIRE(s.is_ok());
    std::fill(y_.begin(), y_.end(), -123.0f);
    s = def->run(KernelCall{&desc_, state});
    if (def->release) def->release(state);
    INFO(s.to_string());
    REQUIRE(s.is_ok());
    return y_;
  }

 private:
  static pock_tensor_desc describe(const Shape& shape, float* data, uint32_t flags) {
    pock_tensor_desc d{};
    d.dtype = POCK_F32;
    d.rank = static_cast<int32_t>(shape.size());
    for (size_t i = 0; i < shape.size(); ++i) d.dims[i] = shape[i];
    d.data = data;
    d.nbytes = static_cast<size_t>(numel(shape)) * sizeof(float);
    d.flags = flags;
    return d;
  }
  static pock_attr ints(const char* name, const std::vector<int64_t>& v) {
    pock_attr a{};
    a.name = name;
    a.kind = POCK_ATTR_INTS;
    a.ints = v.data();
    a.count = static_cast<int64_t>(v.size());
    return a;
  }

  std::vector<float> x_, w_, b_, y_;
  std::vector<int64_t> pads_, strides_;
  pock_tensor_desc inputs_[3]{}, output_{};
  pock_attr attrs_[4]{};
  pock_op_desc desc_{};
};

void check_against_ref(const Case& k) {
  for (bool frozen : {true, false}) {
    for (int threads : {1, 2}) {
      INFO(describe(k, frozen, threads));
      BoundConv conv(k, frozen, threads);
      const std::vector<float> want = conv.run(ref_kernels());
      const std::vector<float> got = conv.run(cpu_kernels());
      REQUIRE(got.size() == want.size());
      // Sums of up to C*9 products of values in [-1, 1): the ways sum in different orders.
      const double margin = 1e-5 * static_cast<double>(k.c / k.groups * k.k * k.k + 4);
      for (size_t i = 0; i < got.size(); ++i) {
        INFO("element " << i);
        REQUIRE(got[i] == Approx(want[i]).margin(margin));
      }
    }
  }
}

}  // namespace

TEST_CASE("cpu Conv2d forward: 1x1 pointwise (im2col first) matches ref", "[cpu][conv]") {
  for (const Case& k : {Case{2, 5, 6, 7, 9, 1, 1, 1, {0, 0, 0, 0}, "relu6"},
                        Case{1, 16, 9, 9, 24, 1, 1, 1, {0, 0, 0, 0}, "none"},
                        Case{3, 3, 5, 4, 2, 1, 1, 1, {0, 0, 0, 0}, "relu"},
                        Case{2, 4, 6, 6, 8, 1, 2, 1, {0, 0, 0, 0}, "relu6"}}) {  // strided: not pointwise
    check_against_ref(k);
  }
}

TEST_CASE("cpu Conv2d forward: depthwise 3x3 on wide rows (direct row loops) matches ref", "[cpu][conv]") {
  // Widths around the 16-column blocks and the 32-column switch; stride 1 and 2; asymmetric and no
  // padding; depth multiplier 2; odd heights.
  for (const Case& k : {Case{2, 3, 5, 32, 3, 3, 1, 3, {1, 1, 1, 1}, "relu6"},
                        Case{1, 2, 4, 33, 2, 3, 1, 2, {1, 1, 1, 1}, "none"},
                        Case{2, 2, 7, 47, 2, 3, 2, 2, {1, 1, 1, 1}, "relu"},
                        Case{1, 3, 6, 64, 3, 3, 2, 3, {0, 1, 1, 0}, "relu6"},
                        Case{1, 2, 3, 65, 4, 3, 1, 2, {0, 0, 0, 0}, "none"},
                        Case{2, 2, 8, 40, 2, 3, 2, 2, {0, 0, 0, 0}, "relu6"},
                        Case{1, 2, 5, 34, 2, 3, 1, 2, {2, 2, 2, 2}, "relu"}}) {
    check_against_ref(k);
  }
}

TEST_CASE("cpu Conv2d forward: narrow depthwise and dense 3x3 (XNNPACK when frozen) match ref", "[cpu][conv]") {
  for (const Case& k : {Case{2, 6, 8, 8, 6, 3, 1, 6, {1, 1, 1, 1}, "relu6"},
                        Case{1, 5, 9, 9, 5, 3, 2, 5, {1, 1, 1, 1}, "none"},
                        Case{2, 4, 9, 7, 6, 3, 1, 1, {1, 1, 1, 1}, "relu6"},
                        Case{1, 3, 11, 11, 5, 3, 2, 1, {1, 1, 1, 1}, "relu"},
                        Case{2, 3, 12, 12, 4, 7, 2, 1, {3, 3, 3, 3}, "none"}}) {
    check_against_ref(k);
  }
}

TEST_CASE("cpu Conv2d forward: depthwise onto small planes (channels-last when trainable) matches ref", "[cpu][conv]") {
  // Output planes of 64 pixels or less (conv_depthwise_nhwc.cpp): channel counts that leave vector
  // tails, stride 1 and 2, 5x5, asymmetric padding, the 8x8 -> 4x4 layer of MobileNetV2 — each
  // run channels-last at least with its trainable weight, on one and two threads — and a plane
  // just past the limit (the row loops or XNNPACK, never channels-last). Rows padded by one whose
  // output width is a multiple of 8 run the NCHW vector planes instead (depthwise_vector_rows.hpp).
  for (const Case& k : {Case{2, 37, 8, 7, 37, 3, 1, 37, {1, 1, 1, 1}, "relu6"},
                        Case{3, 20, 4, 4, 20, 3, 1, 20, {1, 1, 1, 1}, "none"},
                        Case{2, 17, 16, 16, 17, 3, 2, 17, {0, 1, 1, 0}, "relu"},
                        Case{1, 9, 7, 5, 9, 5, 1, 9, {2, 1, 2, 3}, "relu6"},
                        Case{8, 96, 8, 8, 96, 3, 2, 96, {1, 1, 1, 1}, "relu6"}}) {
    const int before = cpu::depthwise_channels_last_testing::forward_kernels_made();
    check_against_ref(k);
    CHECK(cpu::depthwise_channels_last_testing::forward_kernels_made() >= before + 2);
  }
  const int before = cpu::depthwise_channels_last_testing::forward_kernels_made();
  check_against_ref(Case{2, 5, 9, 8, 5, 3, 1, 5, {1, 1, 1, 1}, "none"});  // 72 output pixels
  CHECK(cpu::depthwise_channels_last_testing::forward_kernels_made() == before);
}
