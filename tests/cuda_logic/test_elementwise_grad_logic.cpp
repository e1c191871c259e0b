// The cuda elementwise_grad family's logic (kernels/cuda/elementwise_grad_logic.hpp with the
// reduction plans of reduce_logic.hpp) against ref: every (dy, v) derivative with edges and
// values at the kinks, the two-output gradients under broadcasting, and the reduction gradients
// with the device's two passes (ties counted per group, then dy handed to the maxima).
#include "cuda_logic/host_reduce.hpp"
#include "cuda_logic/logic_harness.hpp"
#include "kernels/cuda/elementwise_grad_logic.hpp"
#include "kernels/params/reduce.hpp"

using namespace pock;
using namespace pock::cuda;
using namespace pock::test;

namespace {

// ref multiplies in double; these in f32 (gelu's and silu's derivatives with libm's f32 functions).
constexpr double kRtol = 4e-6, kAtol = 1e-6;

template <typename Op>
void check_unary_grad(const char* name, const Attrs& attrs, uint32_t seed) {
  const Shape shape{5, 23};
  BoundOp op(name, {f32(shape, random_values(shape, seed)), f32(shape, random_values(shape, seed + 1))}, attrs);
  REQUIRE(op.status().is_ok());
  const std::vector<HostBuffer> want = op.run_ref();
  std::vector<HostBuffer> got = op.fresh_outputs();
  const pock_op_desc d = op.bind(got);
  params::ActivationParams p;
  REQUIRE(params::parse(d, &p).is_ok());
  const pock_tensor_desc* ins[2] = {&d.inputs[0], &d.inputs[1]};
  const auto map = float_map<Op, 2>(d, broadcast_index<2>(d.outputs[0], ins), grad_args(p));
  REQUIRE(packable(map));
  const int64_t n = numel(d.outputs[0]);
  each_element(FloatPackMap<Op, GradArgs, 2>{map, n / 4}, n / 4 + n % 4);
  INFO(name);
  CHECK(f32_mismatches(got[0], want[0], kRtol, kAtol) == "");
}

template <typename Op>
void check_pair_grad(const char* name, const Shape& a, const Shape& b, const Shape& dy, uint32_t seed) {
  std::vector<float> av = random_values(a, seed, -3.0f, 3.0f, false), bv = random_values(b, seed + 1, -3.0f, 3.0f, false);
  for (size_t i = 0; i < av.size(); i += 3) av[i] = std::round(av[i]);  // ties with b, zero bases, integer powers
  for (size_t i = 0; i < bv.size(); i += 2) bv[i] = std::round(bv[i]);
  BoundOp op(name, {f32(dy, random_values(dy, seed + 2)), f32(a, av), f32(b, bv)});
  REQUIRE(op.status().is_ok());
  const std::vector<HostBuffer> want = op.run_ref();
  std::vector<HostBuffer> got = op.fresh_outputs();
  const pock_op_desc d = op.bind(got);
  const pock_tensor_desc* ins[2] = {&d.inputs[1], &d.inputs[2]};
  const PairGradMap<Op> map{static_cast<const float*>(d.inputs[0].data), static_cast<const float*>(d.inputs[1].data),
                            static_cast<const float*>(d.inputs[2].data), static_cast<float*>(d.outputs[0].data),
                            static_cast<float*>(d.outputs[1].data), broadcast_index<2>(d.outputs[0], ins)};
  each_element(map, numel(d.outputs[0]));
  INFO(name << " " << shape_str(a) << " with " << shape_str(b));
  CHECK(f32_mismatches(got[0], want[0], 1e-5, 1e-5) == "");
  CHECK(f32_mismatches(got[1], want[1], 1e-5, 1e-5) == "");
}

}  // namespace

TEST_CASE("cuda elementwise_grad logic: every activation derivative matches ref", "[cuda_logic]") {
  uint32_t seed = 500;
#define POCK_CHECK_UNARY_GRAD(name, Op) check_unary_grad<Op>(name, {}, seed += 2);
  POCK_CUDA_UNARY_GRAD_OPS(POCK_CHECK_UNARY_GRAD)
#undef POCK_CHECK_UNARY_GRAD
  check_unary_grad<LeakyReluGradOp>("LeakyReluGrad", {{"alpha", 0.3}}, 1);
  check_unary_grad<ClipGradOp>("ClipGrad", {{"min", -1.0}, {"max", 0.7}}, 2);
  check_unary_grad<ClipGradOp>("ClipGrad", {{"min", 0.5}}, 3);
  check_unary_grad<GeluGradOp>("GeluGrad", {{"approximate", std::string("tanh")}}, 4);
}

TEST_CASE("cuda elementwise_grad logic: Maximum, Minimum and Pow gradients under broadcasting", "[cuda_logic]") {
  const Shape shapes[][3] = {
      {{4, 6}, {4, 6}, {4, 6}},
      {{4, 6}, {6}, {4, 6}},
      {{3, 1, 5}, {1, 4, 1}, {3, 4, 5}},
      {{1}, {2, 7}, {2, 7}},
  };
  uint32_t seed = 600;
  for (const auto& s : shapes) {
    check_pair_grad<SelectGradOp<true>>("MaximumGrad", s[0], s[1], s[2], seed += 3);
    check_pair_grad<SelectGradOp<false>>("MinimumGrad", s[0], s[1], s[2], seed += 3);
    check_pair_grad<PowGradOp>("PowGrad", s[0], s[1], s[2], seed += 3);
  }
}

TEST_CASE("cuda elementwise_grad logic: SumToShape sums broadcast dims away as ref does", "[cuda_logic]") {
  const Shape cases[][2] = {
      {{6, 10}, {10}},        // a bias gradient: columns
      {{6, 10}, {6, 1}},      // rows
      {{2, 3, 4, 5}, {3, 1, 1}},
      {{2, 3, 4}, {1}},
      {{3, 4}, {3, 4}},       // nothing to sum
  };
  uint32_t seed = 700;
  for (const auto& k : cases) {
    BoundOp op("SumToShape", {f32(k[0], random_values(k[0], ++seed, -2.0f, 2.0f, false))}, {{"shape", k[1]}});
    REQUIRE(op.status().is_ok());
    const std::vector<HostBuffer> want = op.run_ref();
    for (const auto& [group, slices] : {std::pair<int, int64_t>{0, 0}, {1, 1}, {8, 2}, {32, 3}}) {
      std::vector<HostBuffer> got = op.fresh_outputs();
      const pock_op_desc d = op.bind(got);
      bool reduced[POCK_TENSOR_MAX_RANK] = {};
      sum_to_shape_dims(d.inputs[0], d.outputs[0], reduced);
      ReducePlan plan = reduce_plan(d.inputs[0], reduced);
      if (group > 0) set_split(plan, group, slices);
      host_reduce(plan, SumReducer{static_cast<const float*>(d.inputs[0].data), static_cast<float*>(d.outputs[0].data), 1.0f});
      INFO(shape_str(k[0]) << " to " << shape_str(k[1]) << " group " << group << " slices " << slices);
      CHECK(f32_mismatches(got[0], want[0], 1e-5, 1e-5) == "");
    }
  }
}

TEST_CASE("cuda elementwise_grad logic: ReduceSumGrad and ReduceMaxGrad, ties included", "[cuda_logic]") {
  struct Case {
    Shape x;
    std::vector<int64_t> axes;
    int64_t keepdims;
  };
  const Case cases[] = {{{4, 9}, {1}, 1}, {{4, 9}, {0}, 0}, {{3, 4, 5}, {0, 2}, 1}, {{2, 3, 4}, {}, 0}};
  uint32_t seed = 800;
  for (const Case& k : cases) {
    Attrs attrs;
    if (!k.axes.empty()) attrs.set("axes", k.axes);
    attrs.set("keepdims", k.keepdims);
    // Values from a few levels, so maxima tie.
    std::vector<float> xv = random_values(k.x, ++seed, 0.0f, 4.0f, false);
    for (float& v : xv) v = std::floor(v);
    BoundOp max_op("ReduceMax", {f32(k.x, xv)}, attrs);
    REQUIRE(max_op.status().is_ok());
    const HostBuffer ymax = max_op.run_ref()[0];
    const HostBuffer dy = f32(ymax.shape, random_values(ymax.shape, ++seed, -1.0f, 1.0f, false));

    Attrs sum_attrs = attrs;
    sum_attrs.set("shape", k.x);
    sum_attrs.set("scale", 0.25);
    BoundOp sum_grad("ReduceSumGrad", {dy}, sum_attrs);
    REQUIRE(sum_grad.status().is_ok());
    std::vector<HostBuffer> want = sum_grad.run_ref();
    std::vector<HostBuffer> got = sum_grad.fresh_outputs();
    pock_op_desc d = sum_grad.bind(got);
    params::ReduceParams p;
    REQUIRE(params::parse(d, &p).is_ok());
    const pock_tensor_desc view = keepdims_view(p.reduced, d.outputs[0]);
    const pock_tensor_desc* back[1] = {&view};
    each_element(float_map<ScaleOp, 1>(d, broadcast_index<1>(d.outputs[0], back), static_cast<float>(p.scale)),
                 numel(d.outputs[0]));
    INFO(shape_str(k.x) << " keepdims " << k.keepdims);
    CHECK(f32_mismatches(got[0], want[0], 0, 0) == "");

    BoundOp max_grad("ReduceMaxGrad", {dy, f32(k.x, xv), ymax}, attrs);
    REQUIRE(max_grad.status().is_ok());
    want = max_grad.run_ref();
    got = max_grad.fresh_outputs();
    d = max_grad.bind(got);
    REQUIRE(params::parse(d, &p).is_ok());
    const auto* x = static_cast<const float*>(d.inputs[1].data);
    const auto* ym = static_cast<const float*>(d.inputs[2].data);
    const ReducePlan groups = reduce_plan(d.inputs[1], p.reduced);
    std::vector<float> ties(static_cast<size_t>(groups.outputs), -1.0f);
    host_reduce(groups, TieCountReducer{x, ym, ties.data()}, 8, 2);
    const pock_tensor_desc group_view = keepdims_view(p.reduced, d.inputs[1]);
    const pock_tensor_desc* group_of[1] = {&group_view};
    each_element(MaxGradMap{static_cast<const float*>(d.inputs[0].data), x, ym, ties.data(),
                            static_cast<float*>(d.outputs[0].data), broadcast_index<1>(d.inputs[1], group_of)},
                 numel(d.outputs[0]));
    CHECK(f32_mismatches(got[0], want[0], 0, 0) == "");
  }
}
