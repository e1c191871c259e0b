// The cuda SliceGrad's logic (kernels/cuda/shape_logic.hpp: the scatter and its planned index)
// against ref, byte for byte: forward and backward steps, one start per axis, empty dy.
#include "cuda_logic/logic_harness.hpp"
#include "kernels/cuda/element_width.hpp"
#include "kernels/cuda/shape_logic.hpp"

using namespace pock;
using namespace pock::cuda;
using namespace pock::test;

TEST_CASE("cuda layer_grad_shape logic: SliceGrad scatters dy as ref does", "[cuda_logic]") {
  struct Case {
    Shape dy, shape;
    std::vector<int64_t> starts, steps;
    int64_t factor;  // f32 elements moved at once
  };
  const Case cases[] = {
      {{4, 3}, {6, 7}, {1, 2}, {1, 1}, 1},
      {{3, 2}, {6, 7}, {5, 0}, {-2, 3}, 1},             // backwards on axis 0
      {{2, 3, 4}, {2, 3, 8}, {0, 0, 4}, {1, 1, 1}, 4},  // the second half of the last dim: 16 bytes a move
      {{2, 3, 2}, {2, 3, 8}, {0, 0, 2}, {1, 1, 1}, 2},
      {{5}, {9}, {0}, {2}, 1},
      {{0, 3}, {4, 3}, {0, 0}, {1, 1}, 4},              // empty: zeros only (0 moves of any width)
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
    const MovePlan plan = move_plan(slice_grad_index(d.inputs[0], d.outputs[0], p), sizeof(float));
    CHECK(plan.factor == k.factor);
    const MoveLaunch l = move_launch(plan, sizeof(float), d.inputs[0].data, d.outputs[0].data, numel(d.inputs[0]));
    with_move_width(l.bytes, [&](auto t) {
      using T = decltype(t);
      each_element(ScatterMap<T>{static_cast<const T*>(d.inputs[0].data), static_cast<T*>(d.outputs[0].data), *l.index},
                   l.moves);
    });
    INFO(shape_str(k.dy) << " into " << shape_str(k.shape));
    CHECK(byte_mismatches(got[0], want[0]) == "");
  }
}
