// The cuda activation_mask family's logic (kernels/cuda/activation_mask_logic.hpp) against ref,
// byte for byte: ClipMask's f32 bounds must sort every f32 as ref's double comparisons do,
// including values one ulp either side of bounds that f32 cannot hold, NaN and infinities.
#include "cuda_logic/logic_harness.hpp"
#include "kernels/cuda/activation_mask_logic.hpp"

using namespace pock;
using namespace pock::cuda;
using namespace pock::test;

namespace {

// Random values with edges, plus each bound's neighbours.
std::vector<float> values_near(const std::vector<double>& bounds, uint32_t seed) {
  std::vector<float> v = random_values({251}, seed);
  for (double b : bounds) {
    const float f = static_cast<float>(b);
    for (float x : {f, nextafterf(f, INFINITY), nextafterf(f, -INFINITY)}) v.push_back(x);
  }
  return v;
}

void check_clip_mask(const Attrs& attrs, const std::vector<double>& bounds, uint32_t seed) {
  const std::vector<float> v = values_near(bounds, seed);
  const Shape shape{static_cast<int64_t>(v.size())};
  BoundOp op("ClipMask", {f32(shape, v)}, attrs);
  REQUIRE(op.status().is_ok());
  const std::vector<HostBuffer> want = op.run_ref();
  std::vector<HostBuffer> outs = op.fresh_outputs();
  const pock_op_desc d = op.bind(outs);
  params::ActivationParams p;
  REQUIRE(params::parse(d, &p).is_ok());
  const ClipMaskMap map{static_cast<const float*>(d.inputs[0].data), static_cast<uint8_t*>(d.outputs[0].data),
                        clip_mask_bounds(p)};
  const int64_t n = numel(d.outputs[0]);
  each_element(map, n);
  CHECK(byte_mismatches(outs[0], want[0]) == "");
  outs = op.fresh_outputs();
  const pock_op_desc packed = op.bind(outs);
  REQUIRE(mask_packable(packed.inputs[0].data, packed.inputs[0].data, packed.outputs[0].data));
  ClipMaskPackMap pack{map, n / 4};
  pack.scalar.mask = static_cast<uint8_t*>(packed.outputs[0].data);
  each_element(pack, n / 4 + n % 4);
  CHECK(byte_mismatches(outs[0], want[0]) == "");
}

}  // namespace

TEST_CASE("cuda activation_mask logic: ClipMask matches ref bit for bit at and around every bound", "[cuda_logic]") {
  check_clip_mask({}, {}, 1);                                               // no bounds: only NaN fails
  check_clip_mask({{"min", 0.0}}, {0.0}, 2);                                // Relu: strict 0
  check_clip_mask({{"min", 0.0}, {"max", 6.0}}, {0.0, 6.0}, 3);             // Relu6
  check_clip_mask({{"min", -0.5}, {"max", 2.0}, {"inclusive", int64_t{1}}}, {-0.5, 2.0}, 4);  // Clip
  check_clip_mask({{"min", 0.1}, {"max", 0.7}}, {0.1, 0.7}, 5);             // bounds f32 cannot hold
  check_clip_mask({{"min", -0.3}, {"max", 1.3}, {"inclusive", int64_t{1}}}, {-0.3, 1.3}, 6);
  check_clip_mask({{"max", 1e40}}, {3.0e38}, 7);                            // beyond f32's range
  check_clip_mask({{"min", -1e40}, {"inclusive", int64_t{1}}}, {-3.0e38}, 8);
}

TEST_CASE("cuda activation_mask logic: MaskGrad keeps NaN and infinite dy as ref does", "[cuda_logic]") {
  const Shape shape{7, 19};
  std::vector<uint8_t> mask(static_cast<size_t>(numel(shape)));
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = (i * 7 + i / 3) % 3 == 0 ? 0 : 1;
  BoundOp op("MaskGrad", {f32(shape, random_values(shape, 9)), HostBuffer::make(DType::kU8, shape, mask)});
  REQUIRE(op.status().is_ok());
  const std::vector<HostBuffer> want = op.run_ref();
  std::vector<HostBuffer> outs = op.fresh_outputs();
  pock_op_desc d = op.bind(outs);
  const MaskGradMap map{static_cast<const float*>(d.inputs[0].data), static_cast<const uint8_t*>(d.inputs[1].data),
                        static_cast<float*>(d.outputs[0].data)};
  const int64_t n = numel(d.outputs[0]);
  each_element(map, n);
  CHECK(byte_mismatches(outs[0], want[0]) == "");
  outs = op.fresh_outputs();
  d = op.bind(outs);
  MaskGradPackMap pack{map, n / 4};
  pack.scalar.dx = static_cast<float*>(d.outputs[0].data);
  REQUIRE(mask_packable(pack.scalar.dy, pack.scalar.dx, pack.scalar.mask));
  each_element(pack, n / 4 + n % 4);
  CHECK(byte_mismatches(outs[0], want[0]) == "");
}
