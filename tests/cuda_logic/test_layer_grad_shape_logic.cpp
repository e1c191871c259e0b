// The cuda SliceGrad's logic (kernels/cuda/shape_logic.hpp: the scatter and its planned index)
// against ref, byte for byte: forward and backward steps, one start per axis, empty dy.
#include "cuda_logic/logic_harness.hpp"
#include "kernels/cuda/shape_logic.hpp"

using namespace pock;
using namespace pock::cuda;
using namespace pock::test;

TEST_CASE("cuda layer_grad_shape logic: SliceGrad scatters dy as ref does", "[cuda_logic]") {
  struct Case {
    Shape dy, shape;
    std::vector<int64_t> starts, steps;
  };
  const Case cases[] = {
      {{4, 3}, {6, 7}, {1, 2}, {1, 1}},
      {{3, 2}, {6, 7}, {5, 0}, {-2, 3}},        // backwards on axis 0
      {{2, 3, 4}, {2, 3, 8}, {0, 0, 4}, {1, 1, 1}},  // the second half of the last dim
      {{5}, {9}, {0}, {2}},
      {{0, 3}, {4, 3}, {0, 0}, {1, 1}},           // empty: zeros only
  };
  uint32_t seed = 900;
  for (const Case& k : cases) {
    BoundOp op("SliceGrad", {f32(k.dy, random_values(k.dy, ++seed))},
               {{"shape", k.shape}, {"starts", k.starts}, {"steps", k.steps}});
    INFO(op.status().message());
    REQUIRE(op.status().is_ok());
    const std::vector<HostBuffer> want = op.run_ref();
    std::vector<HostBuffer> got = op.fresh_outputs();
    const pock_op_desc d = op.bind(got);
    params::ShapeParams p;
    REQUIRE(params::parse(d, &p).is_ok());
    std::memset(d.outputs[0].data, 0, d.outputs[0].nbytes);  // the kernel's cudaMemsetAsync
    host_map(numel(d.inputs[0]), ScatterMap<float>{static_cast<const float*>(d.inputs[0].data),
                                                   static_cast<float*>(d.outputs[0].data),
                                                   slice_grad_index(d.inputs[0], d.outputs[0], p)});
    INFO(shape_str(k.dy) << " into " << shape_str(k.shape));
    CHECK(byte_mismatches(got[0], want[0]) == "");
  }
}
