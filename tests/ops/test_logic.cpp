// The logic family end to end (schema, blob, kernel): comparisons, And/Or/Xor/Not and BitShift on
// ref against expectations written here with C++'s own operators on the decoded values, the cpu
// kernels against ref (bound to cpu, byte-identical), the schemas' refusals, and training through
// Where with a computed condition against finite differences.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>

#include "ir/float16.hpp"
#include "ir/op_schema.hpp"
#include "pock/compiler/compiler.hpp"
#include "pock/engine.hpp"
#include "runtime/engine_core.hpp"
#include "support/double_fd.hpp"
#include "support/expect_close.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;

namespace {

using Compare = std::function<bool(double, double)>;

// Operand shapes covering the broadcasts the cpu walk distinguishes: same shape, a scalar on
// either side, a row, a column, both operands broadcasting, a lower rank, size-1 dims.
const std::vector<std::pair<Shape, Shape>> kShapePairs = {
    {{2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}, {}},   {{}, {5}},        {{3, 4}, {4}},  {{3, 1}, {3, 4}},
    {{3, 1}, {1, 4}},       {{2, 1, 4}, {3, 1}}, {{1, 3, 1, 5}, {2, 1, 4, 1}}, {{1}, {1}}, {{6}, {1, 6}}};

// `values` stored as `dtype` (the values are chosen so that every dtype holds them exactly).
HostTensor encode(DType dtype, const Shape& shape, const std::vector<double>& values) {
  auto as = [&](auto convert) {
    using T = decltype(convert(0.0));
    std::vector<T> v;
    for (double x : values) v.push_back(convert(x));
    return HostTensor::make(dtype, shape, v);
  };
  switch (dtype) {
    case DType::kF32: return as([](double x) { return static_cast<float>(x); });
    case DType::kF16: return as([](double x) { return float_to_half(static_cast<float>(x)); });
    case DType::kBF16: return as([](double x) { return float_to_bf16(static_cast<float>(x)); });
    case DType::kI8: return as([](double x) { return static_cast<int8_t>(x); });
    case DType::kU8: return as([](double x) { return static_cast<uint8_t>(x); });
    case DType::kI32: return as([](double x) { return static_cast<int32_t>(x); });
    case DType::kI64: return as([](double x) { return static_cast<int64_t>(x); });
    case DType::kBool: return as([](double x) { return static_cast<uint8_t>(x != 0.0); });
    default: break;  // dtypes this test does not use
  }
  return {};
}

// Small values with many ties, so that == and <= are exercised as often as <: halves in [-3, 3]
// for the signed and float dtypes, integers in [0, 5] for u8, 0/1 for bool.
std::vector<double> tie_heavy_values(DType dtype, size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<double> v(n);
  for (double& x : v) {
    if (dtype == DType::kBool) x = std::uniform_int_distribution<int>(0, 1)(gen);
    else if (dtype == DType::kU8) x = std::uniform_int_distribution<int>(0, 5)(gen);
    else if (is_float(dtype)) x = std::uniform_int_distribution<int>(-6, 6)(gen) / 2.0;
    else x = std::uniform_int_distribution<int>(-3, 3)(gen);
  }
  return v;
}

// One op compiled and run on one backend: its output bytes and the backend that ran it.
struct Ran {
  std::vector<uint8_t> bytes;
  std::string backend;
};

Result<Ran> run_on(const std::string& backend, const std::string& op, const std::vector<HostTensor>& inputs,
                   const Attrs& attrs = {}) {
  Graph g;
  std::vector<TensorId> ids;
  for (size_t i = 0; i < inputs.size(); ++i) ids.push_back(g.add_input("in" + std::to_string(i), inputs[i].dtype, inputs[i].shape));
  POCK_ASSIGN_OR_RETURN(std::vector<TensorId> outs, g.add_node(op, ids, attrs, "node"));
  POCK_RETURN_IF_ERROR(g.mark_output(outs[0], "out"));
  POCK_ASSIGN_OR_RETURN(std::vector<uint8_t> blob, compile(g, nullptr));
  EngineOptions options;
  options.backend = backend;
  POCK_ASSIGN_OR_RETURN(std::unique_ptr<EngineCore> engine, EngineCore::open_buffer(blob.data(), blob.size(), options));
  for (size_t i = 0; i < inputs.size(); ++i) {
    POCK_RETURN_IF_ERROR(engine->set_input("in" + std::to_string(i), inputs[i].bytes.data(), inputs[i].bytes.size()));
  }
  POCK_RETURN_IF_ERROR(engine->infer());
  Ran ran;
  ran.bytes.resize(g.tensor(outs[0]).nbytes());
  POCK_RETURN_IF_ERROR(engine->get_output("out", ran.bytes.data(), ran.bytes.size()));
  ran.backend = engine->op_backends().at(0);
  return ran;
}

// The expected bool of `f` over the broadcast of a and b, one byte each.
std::vector<uint8_t> expected_bools(const Compare& f, const Shape& sa, const std::vector<double>& a, const Shape& sb,
                                    const std::vector<double>& b) {
  const Shape so = broadcast_shapes(sa, sb).value();
  std::vector<uint8_t> want(static_cast<size_t>(numel(so)));
  for (int64_t o = 0; o < numel(so); ++o) {
    const auto idx = unravel(o, so);
    want[static_cast<size_t>(o)] = f(a[broadcast_source(idx, sa)], b[broadcast_source(idx, sb)]) ? 1 : 0;
  }
  return want;
}

void check_on_ref(const std::string& op, DType dtype, const Compare& f) {
  uint32_t seed = 1;
  for (const auto& [sa, sb] : kShapePairs) {
    const auto a = tie_heavy_values(dtype, static_cast<size_t>(numel(sa)), ++seed);
    const auto b = tie_heavy_values(dtype, static_cast<size_t>(numel(sb)), ++seed);
    INFO(op << " on " << dtype_name(dtype) << ": " << shape_str(sa) << " with " << shape_str(sb));
    auto ran = run_on("ref", op, {encode(dtype, sa, a), encode(dtype, sb, b)});
    INFO(ran.status().to_string());
    REQUIRE(ran.is_ok());
    CHECK(ran->bytes == expected_bools(f, sa, a, sb, b));
  }
}

const std::vector<std::pair<std::string, Compare>> kComparisons = {
    {"Equal", [](double a, double b) { return a == b; }},
    {"Less", [](double a, double b) { return a < b; }},
    {"LessOrEqual", [](double a, double b) { return a <= b; }},
    {"Greater", [](double a, double b) { return a > b; }},
    {"GreaterOrEqual", [](double a, double b) { return a >= b; }}};

const std::vector<std::pair<std::string, Compare>> kConnectives = {
    {"And", [](double a, double b) { return a != 0 && b != 0; }},
    {"Or", [](double a, double b) { return a != 0 || b != 0; }},
    {"Xor", [](double a, double b) { return (a != 0) != (b != 0); }},
    {"Equal", [](double a, double b) { return a == b; }}};

const DType kComparedDtypes[] = {DType::kF32, DType::kF16, DType::kBF16, DType::kI8, DType::kU8, DType::kI32, DType::kI64};

// The dtypes the cpu backend compares itself (f16 and bf16 stay on ref).
const DType kCpuComparedDtypes[] = {DType::kF32, DType::kI8, DType::kU8, DType::kI32, DType::kI64};

// ref and cpu on the same inputs: cpu must have run the op and agree byte for byte.
void check_cpu_against_ref(const std::string& op, const std::vector<HostTensor>& inputs, const Attrs& attrs = {}) {
  auto ref = run_on("ref", op, inputs, attrs);
  auto cpu = run_on("cpu", op, inputs, attrs);
  INFO(ref.status().to_string() << " / " << cpu.status().to_string());
  REQUIRE(ref.is_ok());
  REQUIRE(cpu.is_ok());
  CHECK(cpu->backend == "cpu");
  CHECK(cpu->bytes == ref->bytes);
}

// A larger case than kShapePairs: enough elements that the cpu kernels split rows over threads.
const std::pair<Shape, Shape> kLargePair = {{40, 1, 1000}, {1, 3, 1000}};

}  // namespace

TEST_CASE("ref comparisons give numpy's bools on every dtype, broadcasting", "[ops][logic]") {
  for (const auto& [op, f] : kComparisons) {
    for (DType dtype : kComparedDtypes) check_on_ref(op, dtype, f);
  }
}

TEST_CASE("ref And, Or, Xor and Equal on bool", "[ops][logic]") {
  for (const auto& [op, f] : kConnectives) check_on_ref(op, DType::kBool, f);
}

TEST_CASE("ref Not flips every bool", "[ops][logic]") {
  const std::vector<uint8_t> x = {0, 1, 1, 0, 0, 1};
  auto ran = run_on("ref", "Not", {HostTensor::boolean({2, 3}, x)});
  REQUIRE(ran.is_ok());
  CHECK(ran->bytes == std::vector<uint8_t>{1, 0, 0, 1, 1, 0});
}

TEST_CASE("comparisons with NaN are false except NaN != NaN, on ref and cpu", "[ops][logic]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const HostTensor a = HostTensor::f32({4}, {nan, nan, 1.0f, -inf});
  const HostTensor b = HostTensor::f32({4}, {nan, 1.0f, nan, -inf});
  const std::vector<std::pair<std::string, std::vector<uint8_t>>> want = {{"Equal", {0, 0, 0, 1}},
                                                                         {"Less", {0, 0, 0, 0}},
                                                                         {"LessOrEqual", {0, 0, 0, 1}},
                                                                         {"Greater", {0, 0, 0, 0}},
                                                                         {"GreaterOrEqual", {0, 0, 0, 1}}};
  for (const auto& [op, bools] : want) {
    for (const char* backend : {"ref", "cpu"}) {
      INFO(op << " on " << backend);
      auto ran = run_on(backend, op, {a, b});
      REQUIRE(ran.is_ok());
      CHECK(ran->backend == backend);
      CHECK(ran->bytes == bools);
    }
  }
}

TEST_CASE("ref BitShift on u8: both directions, shifts past the width give 0", "[ops][logic]") {
  const std::vector<uint8_t> x = {1, 255, 16, 200, 3, 128, 7, 1, 255};
  const std::vector<uint8_t> n = {0, 1, 2, 3, 4, 7, 8, 9, 200};
  for (const bool left : {true, false}) {
    std::vector<uint8_t> want;
    for (size_t i = 0; i < x.size(); ++i) {
      const unsigned wide = left ? (n[i] >= 8 ? 0u : unsigned{x[i]} << n[i]) : (n[i] >= 8 ? 0u : unsigned{x[i]} >> n[i]);
      want.push_back(static_cast<uint8_t>(wide & 0xffu));
    }
    auto ran = run_on("ref", "BitShift", {HostTensor::make(DType::kU8, {9}, x), HostTensor::make(DType::kU8, {9}, n)},
                      Attrs{{"direction", std::string(left ? "left" : "right")}});
    INFO((left ? "left" : "right") << ": " << ran.status().to_string());
    REQUIRE(ran.is_ok());
    CHECK(ran->bytes == want);
  }
  // A scalar shift broadcast over x.
  auto ran = run_on("ref", "BitShift", {HostTensor::make(DType::kU8, {2, 2}, std::vector<uint8_t>{1, 2, 3, 4}),
                                        HostTensor::make(DType::kU8, {}, std::vector<uint8_t>{2})},
                    Attrs{{"direction", std::string("left")}});
  REQUIRE(ran.is_ok());
  CHECK(ran->bytes == std::vector<uint8_t>{4, 8, 12, 16});
}

namespace {

// BitShift on a wider unsigned type: ref against C++ shifts (0 past the width), then cpu against ref.
template <typename T>
void check_wide_bit_shift(DType dtype) {
  constexpr unsigned kWidth = sizeof(T) * 8;
  const std::vector<T> x = {1, static_cast<T>(~T{0}), 16, static_cast<T>(T{1} << (kWidth - 1)), 3, 7};
  const std::vector<T> n = {0, 1, static_cast<T>(kWidth - 1), 1, static_cast<T>(kWidth), static_cast<T>(kWidth + 5)};
  for (const bool left : {true, false}) {
    std::vector<T> want;
    for (size_t i = 0; i < x.size(); ++i) {
      want.push_back(n[i] >= kWidth ? T{0} : static_cast<T>(left ? x[i] << n[i] : x[i] >> n[i]));
    }
    const Attrs attrs{{"direction", std::string(left ? "left" : "right")}};
    const std::vector<HostTensor> in = {HostTensor::make(dtype, {6}, x), HostTensor::make(dtype, {6}, n)};
    auto ran = run_on("ref", "BitShift", in, attrs);
    INFO(dtype_name(dtype) << (left ? " left: " : " right: ") << ran.status().to_string());
    REQUIRE(ran.is_ok());
    CHECK(ran->bytes == HostTensor::make(dtype, {6}, want).bytes);
    check_cpu_against_ref("BitShift", in, attrs);
  }
}

}  // namespace

TEST_CASE("BitShift on u16, u32 and u64: ref against C++ shifts, cpu against ref", "[ops][logic][cpu]") {
  check_wide_bit_shift<uint16_t>(DType::kU16);
  check_wide_bit_shift<uint32_t>(DType::kU32);
  check_wide_bit_shift<uint64_t>(DType::kU64);
}

TEST_CASE("cpu comparisons, connectives, Not and BitShift match ref", "[ops][logic][cpu]") {
  std::vector<std::pair<Shape, Shape>> pairs = kShapePairs;
  pairs.push_back(kLargePair);
  uint32_t seed = 100;
  for (const auto& [sa, sb] : pairs) {
    INFO(shape_str(sa) << " with " << shape_str(sb));
    for (const auto& [op, f] : kComparisons) {
      for (DType dtype : kCpuComparedDtypes) {
        INFO(op << " on " << dtype_name(dtype));
        check_cpu_against_ref(op, {encode(dtype, sa, tie_heavy_values(dtype, static_cast<size_t>(numel(sa)), ++seed)),
                                   encode(dtype, sb, tie_heavy_values(dtype, static_cast<size_t>(numel(sb)), ++seed))});
      }
    }
    for (const auto& [op, f] : kConnectives) {
      INFO(op << " on bool");
      check_cpu_against_ref(op, {encode(DType::kBool, sa, tie_heavy_values(DType::kBool, static_cast<size_t>(numel(sa)), ++seed)),
                                 encode(DType::kBool, sb, tie_heavy_values(DType::kBool, static_cast<size_t>(numel(sb)), ++seed))});
    }
    for (const char* direction : {"left", "right"}) {
      std::mt19937 gen(++seed);
      std::vector<uint8_t> x(static_cast<size_t>(numel(sa))), n(static_cast<size_t>(numel(sb)));
      for (uint8_t& v : x) v = static_cast<uint8_t>(std::uniform_int_distribution<int>(0, 255)(gen));
      for (uint8_t& v : n) v = static_cast<uint8_t>(std::uniform_int_distribution<int>(0, 10)(gen));
      INFO("BitShift " << direction);
      check_cpu_against_ref("BitShift", {HostTensor::make(DType::kU8, sa, x), HostTensor::make(DType::kU8, sb, n)},
                            Attrs{{"direction", std::string(direction)}});
    }
  }
  for (const Shape& shape : {Shape{2, 3}, Shape{70000}}) {
    INFO("Not " << shape_str(shape));
    check_cpu_against_ref("Not", {encode(DType::kBool, shape, tie_heavy_values(DType::kBool, static_cast<size_t>(numel(shape)), ++seed))});
  }
}

TEST_CASE("logic schemas: bool outputs, and refusals that name the problem", "[ops][logic]") {
  Graph g;
  const TensorId f = g.add_input("f", DType::kF32, {2, 3});
  const TensorId i = g.add_input("i", DType::kI64, {3});
  const TensorId b = g.add_input("b", DType::kBool, {2, 3});
  const TensorId u = g.add_input("u", DType::kU8, {3});
  auto less = g.add_node("Less", {f, f});
  REQUIRE(less.is_ok());
  CHECK(g.tensor(less.value()[0]).dtype == DType::kBool);
  CHECK(g.tensor(less.value()[0]).shape == Shape{2, 3});
  auto shift = g.add_node("BitShift", {u, u}, Attrs{{"direction", std::string("right")}});
  REQUIRE(shift.is_ok());
  CHECK(g.tensor(shift.value()[0]).dtype == DType::kU8);

  auto refused = [&](const std::string& op, std::vector<TensorId> inputs, const std::string& says, const Attrs& attrs = {}) {
    auto r = g.add_node(op, std::move(inputs), attrs);
    INFO(op << ": " << r.status().to_string());
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.status().message().find(says) != std::string::npos);
  };
  refused("Equal", {f, i}, "input 1 is i64, input 0 is f32");
  refused("Less", {b, b}, "bool has no order");
  refused("And", {f, f}, "must be bool");
  refused("Not", {u}, "must be bool");
  refused("Xor", {b, g.add_input("b2", DType::kBool, {4})}, "broadcast");
  refused("BitShift", {i, i}, "must be an unsigned integer", Attrs{{"direction", std::string("left")}});
  refused("BitShift", {u, u}, "'direction' must be", Attrs{{"direction", std::string("LEFT")}});
  refused("BitShift", {u, u}, "'direction' must be");
}

// Where(Less(x, c), a * x, b) inside a training graph: the comparison has no gradient and needs
// none, and the gradients of a, b and x flow through Where's branches. Against central
// differences of the same loss written here in double.
TEST_CASE("training through Where with a computed condition matches finite differences", "[ops][logic][train]") {
  const Shape shape = {2, 4};
  const std::vector<float> x0 = {-1.5f, 0.7f, 2.2f, -0.3f, 1.1f, -2.4f, 0.2f, 1.9f};
  const std::vector<float> c0 = {0.0f, 1.0f, 1.0f, 0.0f};  // broadcast over the rows; |x - c| > h
  const std::vector<float> a0 = random_floats(8, 5), b0 = random_floats(8, 6), r = random_floats(8, 7);
  auto bytes = [](const std::vector<float>& v) {
    std::vector<uint8_t> out(v.size() * sizeof(float));
    std::memcpy(out.data(), v.data(), out.size());
    return out;
  };
  Graph g;
  const TensorId x = g.add_parameter("x", DType::kF32, shape, bytes(x0));
  const TensorId a = g.add_parameter("a", DType::kF32, shape, bytes(a0));
  const TensorId b = g.add_parameter("b", DType::kF32, shape, bytes(b0));
  const TensorId c = g.add_constant("c", DType::kF32, {4}, bytes(c0));
  const TensorId weights = g.add_constant("r", DType::kF32, shape, bytes(r));
  auto node = [&](const std::string& op, std::vector<TensorId> in, const Attrs& attrs = {}) {
    auto out = g.add_node(op, std::move(in), attrs);
    INFO(op << ": " << out.status().to_string());
    REQUIRE(out.is_ok());
    return out.value()[0];
  };
  const TensorId cond = node("Less", {x, c});
  const TensorId y = node("Where", {cond, node("Mul", {a, x}), b});
  const TensorId loss = node("ReduceSum", {node("Mul", {y, weights})}, Attrs{{"keepdims", int64_t{0}}});
  REQUIRE(g.mark_output(loss, "loss").is_ok());

  Recipe recipe;
  recipe.loss.type = "output";
  recipe.loss.logits = "loss";
  recipe.optimizer.type = "sgd";
  recipe.optimizer.lr = 0.0;
  CompileOptions copts;
  copts.expose_gradients = true;
  auto blob = compile(g, &recipe, copts);
  INFO(blob.status().to_string());
  REQUIRE(blob.is_ok());
  auto engine = Engine::open_buffer(blob->data(), blob->size());
  REQUIRE(engine.is_ok());
  REQUIRE(engine->train_step().is_ok());

  // L(x, a, b) = sum_k r_k (x_k < c_k ? a_k x_k : b_k), c broadcast over the rows.
  auto host_loss = [&](const std::vector<double>& p) {  // p = x, a, b concatenated
    double sum = 0.0;
    for (size_t k = 0; k < 8; ++k) {
      const double xk = p[k], ak = p[8 + k], bk = p[16 + k];
      sum += r[k] * (xk < c0[k % 4] ? ak * xk : bk);
    }
    return sum;
  };
  std::vector<double> at = to_double(x0);
  for (const auto* v : {&a0, &b0}) at.insert(at.end(), v->begin(), v->end());
  const std::vector<double> numeric = numeric_gradient(host_loss, at);
  const char* names[] = {"x", "a", "b"};
  for (size_t p = 0; p < 3; ++p) {
    auto grad = engine->output<float>(std::string(names[p]) + ".grad");
    INFO(names[p] << ": " << grad.status().to_string());
    REQUIRE(grad.is_ok());
    for (size_t k = 0; k < 8; ++k) {
      INFO(names[p] << "[" << k << "]");
      CHECK(grad.value()[k] == Approx(numeric[8 * p + k]).margin(1e-5));
    }
  }
}
