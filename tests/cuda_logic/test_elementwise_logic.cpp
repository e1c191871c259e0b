// The cuda elementwise family's logic (kernels/cuda/elementwise_logic.hpp, float_map.hpp,
// strided_index.hpp) run on the host over the same bound op as ref's kernel, element by element
// and four at a time, for every op of the family's lists, on random values with edges (kinks,
// infinities, NaN) and the broadcast patterns of real models.
#include "cuda_logic/logic_harness.hpp"
#include "kernels/cuda/elementwise_logic.hpp"

using namespace pock;
using namespace pock::cuda;
using namespace pock::test;

namespace {

// ref works some activations in double; these are f32 with libm's f32 functions: a few ulp.
constexpr double kRtol = 2e-6, kAtol = 1e-6;

// Runs the map element by element and, when the operands allow it, four at a time; both must
// match ref.
template <typename Op, int N, typename Args>
void check_map(BoundOp& op, const StridedIndex<N>& index, const Args& args, bool expect_packs) {
  const std::vector<HostBuffer> want = op.run_ref();
  std::vector<HostBuffer> got = op.fresh_outputs();
  pock_op_desc d = op.bind(got);
  const auto map = float_map<Op, N>(d, index, args);
  const int64_t n = numel(d.outputs[0]);
  each_element(map, n);
  INFO(op.op() << " element by element");
  CHECK(f32_mismatches(got[0], want[0], kRtol, kAtol) == "");

  got = op.fresh_outputs();
  d = op.bind(got);
  const auto packed = float_map<Op, N>(d, index, args);
  CHECK(packable(packed) == expect_packs);
  if (!packable(packed)) return;
  each_element(FloatPackMap<Op, Args, N>{packed, n / 4}, n / 4 + n % 4);
  INFO(op.op() << " four at a time");
  CHECK(f32_mismatches(got[0], want[0], kRtol, kAtol) == "");
}

template <typename Op>
void check_unary(const char* name, const Attrs& attrs, uint32_t seed) {
  BoundOp op(name, {f32({3, 37}, random_values({3, 37}, seed))}, attrs);
  REQUIRE(op.status().is_ok());
  std::vector<HostBuffer> outs = op.fresh_outputs();
  const pock_op_desc d = op.bind(outs);
  params::ActivationParams p;
  REQUIRE(params::parse(d, &p).is_ok());
  const pock_tensor_desc* ins[1] = {&d.inputs[0]};
  check_map<Op, 1>(op, broadcast_index<1>(d.outputs[0], ins), unary_args(p), true);
}

template <typename Op>
void check_binary(const char* name, const Shape& a, const Shape& b, bool expect_packs, uint32_t seed) {
  BoundOp op(name, {f32(a, random_values(a, seed)), f32(b, random_values(b, seed + 1, 0.25f, 3.0f))});
  REQUIRE(op.status().is_ok());
  std::vector<HostBuffer> outs = op.fresh_outputs();
  const pock_op_desc d = op.bind(outs);
  const pock_tensor_desc* ins[2] = {&d.inputs[0], &d.inputs[1]};
  INFO(name << " " << shape_str(a) << " with " << shape_str(b));
  check_map<Op, 2>(op, broadcast_index<2>(d.outputs[0], ins), NoArgs{}, expect_packs);
}

}  // namespace

TEST_CASE("cuda elementwise logic: every unary activation matches ref, edges included", "[cuda_logic]") {
  uint32_t seed = 100;
#define POCK_CHECK_UNARY(name, Op) check_unary<Op>(name, {}, ++seed);
  POCK_CUDA_UNARY_OPS(POCK_CHECK_UNARY)
#undef POCK_CHECK_UNARY
  check_unary<GeluOp>("Gelu", {{"approximate", std::string("tanh")}}, 1);
  check_unary<LeakyReluOp>("LeakyRelu", {{"alpha", 0.2}}, 2);
  check_unary<ClipOp>("Clip", {{"min", -0.5}, {"max", 2.0}}, 3);
  check_unary<ClipOp>("Clip", {{"max", 0.1}}, 4);
  check_unary<ScaleShiftOp>("ScaleShift", {{"alpha", -0.3}, {"beta", 1.5}}, 5);
}

TEST_CASE("cuda elementwise logic: binary ops over model broadcast patterns match ref", "[cuda_logic]") {
  struct Pattern {
    Shape a, b;
    bool packs;
  };
  const Pattern patterns[] = {
      {{4, 9}, {4, 9}, true},          // same shape
      {{6, 16}, {16}, true},           // bias row of whole packs
      {{6, 10}, {10}, false},          // bias row that splits packs: element by element
      {{5, 7}, {1}, true},             // scalar
      {{2, 3, 4}, {3, 1}, false},      // a column against leading dims
      {{4, 1, 3}, {4, 5, 1}, false},   // both broadcast
      {{1, 8}, {2, 3, 8}, true},       // first operand a row
      {{}, {3}, true},                 // rank 0
      {{2, 0, 3}, {3}, false},         // empty (a row of 3)
  };
  uint32_t seed = 200;
  for (const Pattern& p : patterns) {
#define POCK_CHECK_BINARY(name, Op) check_binary<Op>(name, p.a, p.b, p.packs, seed += 2);
    POCK_CUDA_BINARY_OPS(POCK_CHECK_BINARY)
#undef POCK_CHECK_BINARY
  }
}

TEST_CASE("cuda elementwise logic: broadcast indices collapse to the cheapest access", "[cuda_logic]") {
  auto index_of = [](Shape a, Shape b) {
    BoundOp op("Add", {f32(a, random_values(a, 1)), f32(b, random_values(b, 2))});
    std::vector<HostBuffer> outs = op.fresh_outputs();
    const pock_op_desc d = op.bind(outs);
    const pock_tensor_desc* ins[2] = {&d.inputs[0], &d.inputs[1]};
    return broadcast_index<2>(d.outputs[0], ins);
  };
  const StridedIndex<2> same = index_of({2, 3, 4, 5}, {2, 3, 4, 5});
  CHECK(same.rank == 1);
  CHECK((same.access[0] == Access::kDense && same.access[1] == Access::kDense));
  const StridedIndex<2> bias = index_of({2, 3, 8}, {1, 8});
  CHECK((bias.access[1] == Access::kRow && bias.period[1] == 8 && bias.rank == 2));
  const StridedIndex<2> scalar = index_of({2, 3}, {1, 1});
  CHECK(scalar.access[1] == Access::kScalar);
  const StridedIndex<2> channel = index_of({2, 3, 4, 4}, {3, 1, 1});
  CHECK((channel.access[1] == Access::kStrided && channel.rank == 3));
}

TEST_CASE("cuda index math: 32-bit division where indices fit, 64-bit beyond", "[cuda_logic]") {
  const int64_t cases[][2] = {{0, 1}, {7, 3}, {(int64_t{1} << 31) - 1, 7}, {int64_t{1} << 31, 7},
                              {5'000'000'123, 3}, {5'000'000'123, 4'000'000'000}, {123, int64_t{1} << 33}};
  for (const auto& c : cases) {
    CHECK(index_div(c[0], c[1]) == c[0] / c[1]);
    CHECK(index_mod(c[0], c[1]) == c[0] % c[1]);
  }
  // An offset walk past 2^31 elements: a [3, 2^31] tensor's row 2, column 5.
  StridedIndex<1> big;
  big.rank = 2;
  big.dims[0] = 3;
  big.dims[1] = int64_t{1} << 31;
  big.strides[0][0] = 1;
  big.strides[0][1] = 3;
  big.access[0] = Access::kStrided;
  CHECK(big.offset(0, 2 * (int64_t{1} << 31) + 5) == 2 + 5 * 3);
}

TEST_CASE("cuda elementwise logic: Where with broadcast condition and every branch width", "[cuda_logic]") {
  const Shape cs{3, 1}, as{1, 4}, bs{3, 4};
  const HostBuffer cond = HostBuffer::make<uint8_t>(DType::kBool, cs, {1, 0, 1});
  auto check_width = [&](auto tag, DType dt) {
    using T = decltype(tag);
    std::vector<T> a(4), b(12);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<T>(i + 1);
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<T>(100 + i);
    BoundOp op("Where", {cond, HostBuffer::make(dt, as, a), HostBuffer::make(dt, bs, b)});
    REQUIRE(op.status().is_ok());
    const std::vector<HostBuffer> want = op.run_ref();
    std::vector<HostBuffer> got = op.fresh_outputs();
    const pock_op_desc d = op.bind(got);
    const pock_tensor_desc* ins[3] = {&d.inputs[0], &d.inputs[1], &d.inputs[2]};
    using Bits = std::conditional_t<sizeof(T) == 1, uint8_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;
    const WhereMap<Bits> map{static_cast<const uint8_t*>(d.inputs[0].data), static_cast<const Bits*>(d.inputs[1].data),
                             static_cast<const Bits*>(d.inputs[2].data), static_cast<Bits*>(d.outputs[0].data),
                             broadcast_index<3>(d.outputs[0], ins)};
    each_element(map, numel(d.outputs[0]));
    INFO(dtype_name(dt));
    CHECK(byte_mismatches(got[0], want[0]) == "");
  };
  check_width(float{}, DType::kF32);
  check_width(int32_t{}, DType::kI32);
  check_width(int64_t{}, DType::kI64);
  check_width(uint8_t{}, DType::kU8);
  check_width(int8_t{}, DType::kI8);
}

namespace {

// Values of `dt` that put Cast's edges to work: for the float dtypes fractions, negatives, values
// beyond every narrower integer dtype and beyond int64, infinities and NaN; for the integer dtypes
// the same integers wrapped to their width (C++20 defines the narrowing as two's complement).
HostBuffer cast_source(DType dt) {
  const std::vector<double> floats = {0, 0.75, -0.75, 2.5, -3.75, 127.5, 300.5, -300.5, 70000.25, -70000.25, 3e9, -3e9,
                                      1e19, 1e20, -1e20, NAN, INFINITY, -INFINITY};
  const std::vector<int64_t> integers = {0, 1, -1, 100, -100, 200, 300, -300, 40000, 70000, -70000, 3000000000,
                                         -3000000000, (int64_t{1} << 40) + 3, INT64_MAX, INT64_MIN};
  const size_t n = dt == DType::kF32 || dt == DType::kF64 ? floats.size() : integers.size();
  HostBuffer b{dt, {static_cast<int64_t>(n)}, std::vector<uint8_t>(n * dtype_size(dt))};
  for (size_t i = 0; i < n; ++i) {
    auto put = [&](auto v) { std::memcpy(b.bytes.data() + i * sizeof(v), &v, sizeof(v)); };
    switch (dt) {
      case DType::kF32: put(static_cast<float>(floats[i])); break;
      case DType::kF64: put(floats[i]); break;
      case DType::kBool: put(static_cast<uint8_t>(i % 3 == 0)); break;
      case DType::kI8: put(static_cast<int8_t>(integers[i])); break;
      case DType::kU8: put(static_cast<uint8_t>(integers[i])); break;
      case DType::kI16: put(static_cast<int16_t>(integers[i])); break;
      case DType::kU16: put(static_cast<uint16_t>(integers[i])); break;
      case DType::kI32: put(static_cast<int32_t>(integers[i])); break;
      case DType::kU32: put(static_cast<uint32_t>(integers[i])); break;
      case DType::kI64: put(integers[i]); break;
      default: put(static_cast<uint64_t>(integers[i])); break;
    }
  }
  return b;
}

}  // namespace

TEST_CASE("cuda elementwise logic: Cast between every pair of the dtypes cuda casts, edges included", "[cuda_logic]") {
  const DType dtypes[] = {DType::kF32, DType::kF64, DType::kI8,  DType::kU8,  DType::kI16, DType::kU16,
                          DType::kI32, DType::kU32, DType::kI64, DType::kU64, DType::kBool};
  for (DType from : dtypes) {
    for (DType to : dtypes) {
      if (from == to) continue;  // the kernel copies
      BoundOp op("Cast", {cast_source(from)}, {{"to", std::string(dtype_name(to))}});
      REQUIRE(op.status().is_ok());
      const std::vector<HostBuffer> want = op.run_ref();
      std::vector<HostBuffer> got = op.fresh_outputs();
      const pock_op_desc d = op.bind(got);
      each_element(CastMap{d.inputs[0].data, d.outputs[0].data, d.inputs[0].dtype, d.outputs[0].dtype}, numel(d.outputs[0]));
      INFO(dtype_name(from) << " -> " << dtype_name(to));
      CHECK(byte_mismatches(got[0], want[0]) == "");
    }
  }
}
