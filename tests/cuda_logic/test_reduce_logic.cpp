// The cuda reduce family's logic (kernels/cuda/reduce_logic.hpp): the kept/reduced split planned
// at prepare and the reducers, run on the host with the device's thread splits (a warp or a
// block per output, or 8 threads across each output), against ref's ReduceSum, ReduceMean and
// ReduceMax on axes sets that keep or reduce the innermost dim, contiguous or not.
#include "cuda_logic/host_reduce.hpp"
#include "cuda_logic/logic_harness.hpp"
#include "kernels/params/reduce.hpp"

using namespace pock;
using namespace pock::cuda;
using namespace pock::test;

namespace {

struct Case {
  Shape shape;
  std::vector<int64_t> axes;  // empty: every axis
  bool rows;                  // the plan walks contiguous reduced elements per output
};

void check_case(const Case& k, const char* name, uint32_t seed, bool edges) {
  Attrs attrs;
  if (!k.axes.empty()) attrs.set("axes", k.axes);
  attrs.set("keepdims", int64_t{seed % 2});
  BoundOp op(name, {f32(k.shape, random_values(k.shape, seed, -2.0f, 2.0f, edges))}, attrs);
  INFO(op.status().message());
  REQUIRE(op.status().is_ok());
  const std::vector<HostBuffer> want = op.run_ref();
  // The plan's own split (group 0), then others: the result must not depend on it.
  const std::pair<int, int64_t> splits[] = {{0, 0}, {1, 1}, {8, 3}, {32, 1}, {256, 7}};
  for (const auto& [group, slices] : splits) {
    std::vector<HostBuffer> got = op.fresh_outputs();
    const pock_op_desc d = op.bind(got);
    params::ReduceParams p;
    REQUIRE(params::parse(d, &p).is_ok());
    ReducePlan plan = reduce_plan(d.inputs[0], p.reduced);
    CHECK(plan.rows == k.rows);
    if (group > 0) set_split(plan, group, slices);
    const auto* x = static_cast<const float*>(d.inputs[0].data);
    auto* y = static_cast<float*>(d.outputs[0].data);
    const std::string op_name = name;
    if (op_name == "ReduceMax") {
      host_reduce(plan, MaxReducer{x, y});
    } else {
      host_reduce(plan, SumReducer{x, y, op_name == "ReduceMean" ? static_cast<float>(plan.length) : 1.0f});
    }
    INFO(name << " " << shape_str(k.shape) << " axes " << k.axes.size() << " group " << plan.group << " slices "
              << plan.slices);
    CHECK(f32_mismatches(got[0], want[0], 1e-5, 1e-5) == "");
  }
}

}  // namespace

TEST_CASE("cuda reduce logic: sums, means and maxima over every kind of axis set match ref", "[cuda_logic]") {
  const Case cases[] = {
      {{6, 37}, {1}, true},             // rows: the last axis (LayerNorm-like statistics)
      {{6, 37}, {0}, false},            // columns: a bias gradient
      {{4, 5, 6}, {0, 2}, true},        // reduced dims apart
      {{4, 5, 6}, {1}, false},          // a middle axis
      {{3, 4, 5, 6}, {2, 3}, true},     // trailing axes merge into one walk
      {{3, 4, 5, 6}, {0, 1}, false},    // leading axes
      {{2, 3, 4}, {}, true},            // everything
      {{5, 1, 7}, {-1}, true},          // a negative axis and a size-1 dim
      {{7, 1}, {0}, true},              // the innermost dim has size 1: the reduced one is innermost
      {{3, 0, 4}, {2}, true},           // no outputs
      {{300, 5000}, {1}, true},         // long rows: a block per output, 2 slices each
      {{4096, 24}, {0}, false},         // a bias gradient's few columns: 64 slices
  };
  uint32_t seed = 300;
  for (const Case& k : cases) {
    for (const char* name : {"ReduceSum", "ReduceMean", "ReduceMax"}) check_case(k, name, ++seed, true);
  }
}

TEST_CASE("cuda reduce logic: NaN wins a maximum wherever it stands", "[cuda_logic]") {
  std::vector<float> v(40, 1.0f);
  v[13] = NAN;
  v[30] = INFINITY;
  for (std::vector<int64_t> axes : {std::vector<int64_t>{0}, std::vector<int64_t>{1}}) {
    Attrs attrs;
    attrs.set("axes", axes);
    BoundOp op("ReduceMax", {f32({5, 8}, v)}, attrs);
    const std::vector<HostBuffer> want = op.run_ref();
    std::vector<HostBuffer> got = op.fresh_outputs();
    const pock_op_desc d = op.bind(got);
    params::ReduceParams p;
    REQUIRE(params::parse(d, &p).is_ok());
    for (const auto& [group, slices] : {std::pair<int, int64_t>{1, 1}, {3, 2}, {32, 5}}) {
      host_reduce(reduce_plan(d.inputs[0], p.reduced),
                  MaxReducer{static_cast<const float*>(d.inputs[0].data), static_cast<float*>(d.outputs[0].data)}, group,
                  slices);
      CHECK(f32_mismatches(got[0], want[0], 0, 0) == "");
    }
  }
}

TEST_CASE("cuda reduce logic: the split fills the device only where outputs are few", "[cuda_logic]") {
  auto plan_of = [](Shape shape, std::vector<int64_t> axes) {
    pock_tensor_desc x{};
    x.rank = static_cast<int32_t>(shape.size());
    for (size_t d = 0; d < shape.size(); ++d) x.dims[d] = shape[d];
    bool reduced[POCK_TENSOR_MAX_RANK] = {};
    for (int64_t a : axes) reduced[a] = true;
    return reduce_plan(x, reduced);
  };
  const ReducePlan loss = plan_of({1 << 20}, {0});  // a mean over a whole batch: one output
  CHECK((loss.rows && loss.group == kReduceThreads && loss.slices == kTargetBlocks));
  CHECK(reduce_workspace_bytes(loss) == kTargetBlocks * sizeof(float));
  const ReducePlan bias = plan_of({4096, 768}, {0});  // 24 warps of columns: sliced
  CHECK((!bias.rows && bias.group == kColumnSplit && bias.slices == 22));
  const ReducePlan norm = plan_of({4096, 768}, {1});  // a warp per row, enough rows
  CHECK((norm.rows && norm.group == 32 && norm.slices == 1 && reduce_workspace_bytes(norm) == 0));
  const ReducePlan short_rows = plan_of({1000, 5}, {1});  // 8 threads a row, 4 rows a warp
  CHECK((short_rows.rows && short_rows.group == kShortRowGroup && short_rows.slices == 1));
  const ReducePlan many = plan_of({64, 512, 512}, {1});  // columns, enough outputs for 1024 blocks
  CHECK((!many.rows && many.slices == 1));
}
