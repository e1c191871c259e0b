// Elementwise ops end to end (schema, blob, kernel) against std:: math in double, on random
// shapes with numpy broadcasting.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>

#include "support/expect_close.hpp"
#include "support/backend_under_test.hpp"

using namespace pock;
using namespace pock::test;

namespace {

using Unary = std::function<double(double)>;
using Binary = std::function<double(double, double)>;

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// Shapes of two operands that broadcast together: a random output shape, then per operand some
// leading dims dropped and some dims set to 1.
std::pair<Shape, Shape> random_broadcast_pair(std::mt19937& gen) {
  const int rank = std::uniform_int_distribution<int>(0, 4)(gen);
  const Shape out = random_shape(gen, rank, 1, 4);
  auto operand = [&]() {
    const size_t drop = rank ? std::uniform_int_distribution<size_t>(0, static_cast<size_t>(rank))(gen) : 0;
    Shape s(out.begin() + static_cast<std::ptrdiff_t>(drop), out.end());
    for (int64_t& d : s) {
      if (std::uniform_int_distribution<int>(0, 2)(gen) == 0) d = 1;
    }
    return s;
  };
  return {operand(), operand()};
}

Shape broadcast(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    const int64_t db = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// Runs a binary op on random broadcast shapes and compares with `f` in double.
void check_binary(const std::string& op, const Binary& f, float lo_b = -3.0f, float hi_b = 3.0f, float lo_a = -3.0f,
                  float hi_a = 3.0f) {
  std::mt19937 gen(std::hash<std::string>{}(op) & 0xffff);
  for (int trial = 0; trial < 8; ++trial) {
    const auto [sa, sb] = random_broadcast_pair(gen);
    const Shape so = broadcast(sa, sb);
    const auto a = random_floats(static_cast<size_t>(numel(sa)), 11 + trial, lo_a, hi_a);
    const auto b = random_floats(static_cast<size_t>(numel(sb)), 23 + trial, lo_b, hi_b);
    auto out = run_op_under_test(op, {HostTensor::f32(sa, a), HostTensor::f32(sb, b)});
    INFO(op << " " << shape_str(sa) << " with " << shape_str(sb));
    REQUIRE(out.is_ok());
    REQUIRE(out.value()[0].shape == so);
    std::vector<double> want(static_cast<size_t>(numel(so)));
    for (int64_t o = 0; o < numel(so); ++o) {
      const auto idx = unravel(o, so);
      want[static_cast<size_t>(o)] = f(a[broadcast_source(idx, sa)], b[broadcast_source(idx, sb)]);
    }
    CHECK(mismatches(out.value()[0].f32(), want) == "");
  }
}

void check_unary(const std::string& op, const Unary& f, float lo = -8.0f, float hi = 8.0f, const Attrs& attrs = {},
                 double rtol = 1e-5) {
  std::mt19937 gen(std::hash<std::string>{}(op) & 0xffff);
  for (int trial = 0; trial < 3; ++trial) {
    const Shape shape = random_shape(gen, trial + 1, 1, 6);
    const auto x = random_floats(static_cast<size_t>(numel(shape)), 7 + trial, lo, hi);
    auto out = run_op_under_test(op, {HostTensor::f32(shape, x)}, attrs);
    INFO(op << " " << shape_str(shape));
    REQUIRE(out.is_ok());
    REQUIRE(out.value()[0].shape == shape);
    std::vector<double> want(x.size());
    for (size_t i = 0; i < x.size(); ++i) want[i] = f(x[i]);
    CHECK(mismatches(out.value()[0].f32(), want, rtol) == "");
  }
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double relu6(double x) { return std::min(std::max(x, 0.0), 6.0); }

}  // namespace

TEST_CASE("binary arithmetic broadcasts like numpy", "[ops][elementwise]") {
  check_binary("Add", [](double a, double b) { return a + b; });
  check_binary("Sub", [](double a, double b) { return a - b; });
  check_binary("Mul", [](double a, double b) { return a * b; });
  check_binary("Div", [](double a, double b) { return a / b; }, 0.5f, 3.0f);
  check_binary("Pow", [](double a, double b) { return std::pow(a, b); }, -2.0f, 2.0f, 0.1f, 3.0f);
  check_binary("Maximum", [](double a, double b) { return std::max(a, b); });
  check_binary("Minimum", [](double a, double b) { return std::min(a, b); });
}

TEST_CASE("hand-computed broadcast of a column against a row", "[ops][elementwise]") {
  auto out = run_op_under_test("Sub", {HostTensor::f32({2, 1}, {10, 20}), HostTensor::f32({3}, {1, 2, 3})});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].shape == Shape{2, 3});
  CHECK(out.value()[0].f32() == std::vector<float>{9, 8, 7, 19, 18, 17});
}

TEST_CASE("unary math matches std:: in double", "[ops][elementwise]") {
  check_unary("Neg", [](double x) { return -x; });
  check_unary("Exp", [](double x) { return std::exp(x); });
  check_unary("Log", [](double x) { return std::log(x); }, 0.01f, 10.0f);
  check_unary("Sqrt", [](double x) { return std::sqrt(x); }, 0.0f, 10.0f);
  check_unary("Rsqrt", [](double x) { return 1.0 / std::sqrt(x); }, 0.01f, 10.0f);
  check_unary("Abs", [](double x) { return std::fabs(x); });
  check_unary("Reciprocal", [](double x) { return 1.0 / x; }, 0.1f, 5.0f);
  check_unary("Reciprocal", [](double x) { return 1.0 / x; }, -5.0f, -0.1f);
  check_unary("Square", [](double x) { return x * x; });
}

TEST_CASE("activations match their definitions", "[ops][elementwise]") {
  check_unary("Relu", [](double x) { return std::max(x, 0.0); });
  check_unary("Relu6", relu6);
  check_unary("Sigmoid", sigmoid, -20.0f, 20.0f);
  check_unary("Tanh", [](double x) { return std::tanh(x); });
  check_unary("Silu", [](double x) { return x * sigmoid(x); }, -20.0f, 20.0f);
  // PyTorch's definitions: hardswish = x * relu6(x + 3) / 6, hardsigmoid = relu6(x + 3) / 6.
  check_unary("HardSwish", [](double x) { return x * relu6(x + 3.0) / 6.0; });
  check_unary("HardSigmoid", [](double x) { return relu6(x + 3.0) / 6.0; });
  check_unary("LeakyRelu", [](double x) { return x > 0 ? x : 0.01 * x; });
  check_unary("LeakyRelu", [](double x) { return x > 0 ? x : 0.2 * x; }, -8.0f, 8.0f, Attrs{{"alpha", 0.2}});
}

TEST_CASE("Gelu in its erf and tanh forms", "[ops][elementwise]") {
  check_unary("Gelu", [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); });
  const double k = std::sqrt(2.0 / 3.14159265358979323846);
  check_unary("Gelu", [&](double x) { return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x))); }, -8.0f, 8.0f,
              Attrs{{"approximate", std::string("tanh")}});
  // The two forms differ by up to ~5e-4 near |x| = 2: make sure the attribute is honoured.
  auto erf_form = run_op_under_test("Gelu", {HostTensor::f32({1}, {-2.0f})});
  auto tanh_form = run_op_under_test("Gelu", {HostTensor::f32({1}, {-2.0f})}, {{"approximate", std::string("tanh")}});
  REQUIRE(erf_form.is_ok());
  REQUIRE(tanh_form.is_ok());
  CHECK(erf_form.value()[0].f32()[0] != tanh_form.value()[0].f32()[0]);
}

TEST_CASE("Clip with both, one or no bounds", "[ops][elementwise]") {
  check_unary("Clip", [](double x) { return std::min(std::max(x, -1.5), 2.0); }, -8.0f, 8.0f, {{"min", -1.5}, {"max", 2.0}});
  check_unary("Clip", [](double x) { return std::max(x, 0.5); }, -8.0f, 8.0f, {{"min", 0.5}});
  check_unary("Clip", [](double x) { return std::min(x, -0.5); }, -8.0f, 8.0f, {{"max", -0.5}});
  check_unary("Clip", [](double x) { return x; }, -8.0f, 8.0f);
}

TEST_CASE("ScaleShift and Identity", "[ops][elementwise]") {
  check_unary("ScaleShift", [](double x) { return x * -2.5 + 0.75; }, -8.0f, 8.0f, {{"alpha", -2.5}, {"beta", 0.75}});
  check_unary("ScaleShift", [](double x) { return x; });
  check_unary("Identity", [](double x) { return x; });
  auto ids = run_op_under_test("Identity", {HostTensor::i64({3}, {int64_t{1} << 40, -7, 0})});
  REQUIRE(ids.is_ok());
  CHECK(ids.value()[0].values<int64_t>() == std::vector<int64_t>{int64_t{1} << 40, -7, 0});
}

TEST_CASE("NaN propagates through activations, clamps and max/min (as in PyTorch)", "[ops][elementwise]") {
  for (const char* op : {"Relu", "Relu6", "Sigmoid", "Tanh", "Silu", "HardSwish", "HardSigmoid", "LeakyRelu", "Abs",
                         "Neg", "Exp", "Square", "Gelu"}) {
    auto out = run_op_under_test(op, {HostTensor::f32({2}, {static_cast<float>(kNaN), 1.0f})});
    INFO(op);
    REQUIRE(out.is_ok());
    CHECK(std::isnan(out.value()[0].f32()[0]));
  }
  auto clipped = run_op_under_test("Clip", {HostTensor::f32({1}, {static_cast<float>(kNaN)})}, {{"min", 0.0}, {"max", 1.0}});
  REQUIRE(clipped.is_ok());
  CHECK(std::isnan(clipped.value()[0].f32()[0]));
  for (const char* op : {"Maximum", "Minimum"}) {
    auto out = run_op_under_test(op, {HostTensor::f32({2}, {static_cast<float>(kNaN), 1.0f}),
                           HostTensor::f32({2}, {1.0f, static_cast<float>(kNaN)})});
    INFO(op);
    REQUIRE(out.is_ok());
    CHECK(std::isnan(out.value()[0].f32()[0]));
    CHECK(std::isnan(out.value()[0].f32()[1]));
  }
}

TEST_CASE("Where selects with a broadcast condition", "[ops][elementwise]") {
  std::mt19937 gen(5);
  for (int trial = 0; trial < 6; ++trial) {
    auto [sc, sa] = random_broadcast_pair(gen);
    const Shape sb = sa.empty() ? Shape{} : Shape(sa.begin() + 1, sa.end());  // fewer dims still
    const Shape so = broadcast(broadcast(sc, sa), sb);
    std::vector<uint8_t> cond(static_cast<size_t>(numel(sc)));
    for (auto& c : cond) c = static_cast<uint8_t>(gen() & 1);
    const auto a = random_floats(static_cast<size_t>(numel(sa)), 100 + trial);
    const auto b = random_floats(static_cast<size_t>(numel(sb)), 200 + trial);
    auto out = run_op_under_test("Where", {HostTensor::boolean(sc, cond), HostTensor::f32(sa, a), HostTensor::f32(sb, b)});
    INFO(shape_str(sc) << " " << shape_str(sa) << " " << shape_str(sb));
    REQUIRE(out.is_ok());
    REQUIRE(out.value()[0].shape == so);
    std::vector<double> want(static_cast<size_t>(numel(so)));
    for (int64_t o = 0; o < numel(so); ++o) {
      const auto idx = unravel(o, so);
      want[static_cast<size_t>(o)] = cond[broadcast_source(idx, sc)] ? a[broadcast_source(idx, sa)] : b[broadcast_source(idx, sb)];
    }
    CHECK(mismatches(out.value()[0].f32(), want, 0.0, 0.0) == "");
  }
}

TEST_CASE("Cast converts between dtypes", "[ops][elementwise]") {
  SECTION("f32 to i32 truncates toward zero") {
    auto out = run_op_under_test("Cast", {HostTensor::f32({4}, {2.7f, -2.7f, 0.0f, 100.0f})}, {{"to", std::string("i32")}});
    REQUIRE(out.is_ok());
    CHECK(out.value()[0].dtype == DType::kI32);
    CHECK(out.value()[0].values<int32_t>() == std::vector<int32_t>{2, -2, 0, 100});
  }
  SECTION("i64 to f32") {
    auto out = run_op_under_test("Cast", {HostTensor::i64({3}, {-3, 0, 1 << 20})}, {{"to", std::string("f32")}});
    REQUIRE(out.is_ok());
    CHECK(out.value()[0].f32() == std::vector<float>{-3.0f, 0.0f, 1048576.0f});
  }
  SECTION("f32 to bool and back") {
    auto to_bool = run_op_under_test("Cast", {HostTensor::f32({3}, {0.0f, -0.5f, 2.0f})}, {{"to", std::string("bool")}});
    REQUIRE(to_bool.is_ok());
    CHECK(to_bool.value()[0].values<uint8_t>() == std::vector<uint8_t>{0, 1, 1});
    auto back = run_op_under_test("Cast", {to_bool.value()[0]}, {{"to", std::string("f32")}});
    REQUIRE(back.is_ok());
    CHECK(back.value()[0].f32() == std::vector<float>{0.0f, 1.0f, 1.0f});
  }
  SECTION("i32 to i64 keeps the values") {
    auto out = run_op_under_test("Cast", {HostTensor::i32({3}, {-2147483647, 5, 2147483647})}, {{"to", std::string("i64")}});
    REQUIRE(out.is_ok());
    CHECK(out.value()[0].values<int64_t>() == std::vector<int64_t>{-2147483647, 5, 2147483647});
  }
  SECTION("an unknown dtype is an error naming the node") {
    auto out = run_op_under_test("Cast", {HostTensor::f32({1}, {1.0f})}, {{"to", std::string("f99")}});
    REQUIRE_FALSE(out.is_ok());
    CHECK_THAT(out.status().message(), Catch::Contains("Cast 'node'"));
  }
}

TEST_CASE("elementwise shape errors name the op and node", "[ops][elementwise]") {
  auto add = run_op_under_test("Add", {HostTensor::f32({2, 3}, std::vector<float>(6)), HostTensor::f32({4}, std::vector<float>(4))});
  REQUIRE_FALSE(add.is_ok());
  CHECK(add.status().code() == Code::kShapeMismatch);
  CHECK_THAT(add.status().message(), Catch::Contains("Add 'node'") && Catch::Contains("[2, 3]"));
  auto relu = run_op_under_test("Relu", {HostTensor::i64({2}, {1, 2})});
  REQUIRE_FALSE(relu.is_ok());
  CHECK_THAT(relu.status().message(), Catch::Contains("Relu 'node'") && Catch::Contains("float"));
  auto where = run_op_under_test("Where", {HostTensor::f32({1}, {1}), HostTensor::f32({1}, {1}), HostTensor::f32({1}, {1})});
  REQUIRE_FALSE(where.is_ok());
  CHECK_THAT(where.status().message(), Catch::Contains("Where 'node'"));
}

TEST_CASE("Mod is the floored remainder, Fmod the truncated one, on floats and integers", "[ops][elementwise]") {
  // Python: 5.5 % 2 = 1.5, -5.5 % 2 = 0.5, 5.5 % -2 = -0.5, -5.5 % -2 = -1.5; C fmod keeps the dividend's sign.
  const HostTensor a = HostTensor::f32({4}, {5.5f, -5.5f, 5.5f, -5.5f}), b = HostTensor::f32({4}, {2, 2, -2, -2});
  auto mod = run_op_under_test("Mod", {a, b});
  REQUIRE(mod.is_ok());
  CHECK(mod.value()[0].f32() == std::vector<float>{1.5f, 0.5f, -0.5f, -1.5f});
  auto fmod = run_op_under_test("Fmod", {a, b});
  REQUIRE(fmod.is_ok());
  CHECK(fmod.value()[0].f32() == std::vector<float>{1.5f, -1.5f, 1.5f, -1.5f});

  // 7 % 3 = 1, -7 % 3 = 2, 7 % -3 = -2, -7 % -3 = -1 (Python); INT_MIN % -1 = 0 without overflow.
  const int32_t int_min = std::numeric_limits<int32_t>::min();
  const HostTensor ia = HostTensor::i32({5}, {7, -7, 7, -7, int_min}), ib = HostTensor::i32({5}, {3, 3, -3, -3, -1});
  auto imod = run_op_under_test("Mod", {ia, ib});
  REQUIRE(imod.is_ok());
  CHECK(imod.value()[0].values<int32_t>() == std::vector<int32_t>{1, 2, -2, -1, 0});
  auto ifmod = run_op_under_test("Fmod", {ia, ib});
  REQUIRE(ifmod.is_ok());
  CHECK(ifmod.value()[0].values<int32_t>() == std::vector<int32_t>{1, -1, 1, -1, 0});
  auto lmod = run_op_under_test("Mod", {HostTensor::i64({2}, {-10, 10}), HostTensor::i64({1}, {4})});
  REQUIRE(lmod.is_ok());
  CHECK(lmod.value()[0].values<int64_t>() == std::vector<int64_t>{2, 2});

  auto zero = run_op_under_test("Mod", {HostTensor::i64({2}, {1, 2}), HostTensor::i64({2}, {3, 0})});
  REQUIRE_FALSE(zero.is_ok());
  CHECK_THAT(zero.status().message(), Catch::Contains("division by zero") && Catch::Contains("element 1"));
}

TEST_CASE("Maximum, Minimum and Pow on integers stay exact", "[ops][elementwise]") {
  // 2^53 + 1 is not a double: a kernel that went through double would return 2^53.
  const int64_t big = (int64_t{1} << 53) + 1;
  const HostTensor a = HostTensor::i64({3}, {1, big, -3}), b = HostTensor::i64({1}, {big - 1});
  auto max = run_op_under_test("Maximum", {a, b});
  REQUIRE(max.is_ok());
  CHECK(max.value()[0].values<int64_t>() == std::vector<int64_t>{big - 1, big, big - 1});
  auto min = run_op_under_test("Minimum", {HostTensor::i32({3}, {1, 5, -3}), HostTensor::i32({1}, {2})});
  REQUIRE(min.is_ok());
  CHECK(min.value()[0].values<int32_t>() == std::vector<int32_t>{1, 2, -3});
  // Negative exponents truncate 1 / base^|e| toward zero: 2^-1 = 0, 1^-2 = 1, (-1)^-3 = -1.
  auto pow = run_op_under_test("Pow", {HostTensor::i32({7}, {2, 3, -2, 5, 1, -1, 2}), HostTensor::i32({7}, {10, 3, 3, 0, -2, -3, -1})});
  REQUIRE(pow.is_ok());
  CHECK(pow.value()[0].values<int32_t>() == std::vector<int32_t>{1024, 27, -8, 1, 1, -1, 0});
  auto lpow = run_op_under_test("Pow", {HostTensor::i64({1}, {3}), HostTensor::i64({1}, {39})});
  REQUIRE(lpow.is_ok());
  CHECK(lpow.value()[0].values<int64_t>() == std::vector<int64_t>{4052555153018976267});  // 3^39
}

TEST_CASE("Maximum, Minimum, Pow and Mod on f16 round their f32 results to half", "[ops][elementwise]") {
  // IEEE half bits: 1.0 = 0x3C00, 0.5 = 0x3800, -2.0 = 0xC000, 2.0 = 0x4000, 3.0 = 0x4200,
  // 8.0 = 0x4800, 5.5 = 0x4580, 1.5 = 0x3E00, NaN = 0x7E00.
  const auto f16 = [](std::vector<uint16_t> bits) {
    const int64_t n = static_cast<int64_t>(bits.size());
    return HostTensor::make<uint16_t>(DType::kF16, {n}, bits);
  };
  auto max = run_op_under_test("Maximum", {f16({0x3C00, 0xC000}), f16({0x3800, 0x7E00})});
  REQUIRE(max.is_ok());
  CHECK(max.value()[0].dtype == DType::kF16);
  const auto m = max.value()[0].values<uint16_t>();
  CHECK(m[0] == 0x3C00);
  CHECK(((m[1] & 0x7C00) == 0x7C00 && (m[1] & 0x03FF) != 0));  // NaN wins
  auto min = run_op_under_test("Minimum", {f16({0x3C00, 0xC000}), f16({0x3800, 0x4000})});
  REQUIRE(min.is_ok());
  CHECK(min.value()[0].values<uint16_t>() == std::vector<uint16_t>{0x3800, 0xC000});
  auto pow = run_op_under_test("Pow", {f16({0x4000}), f16({0x4200})});
  REQUIRE(pow.is_ok());
  CHECK(pow.value()[0].values<uint16_t>() == std::vector<uint16_t>{0x4800});
  auto fmod = run_op_under_test("Fmod", {f16({0x4580}), f16({0x4000})});
  REQUIRE(fmod.is_ok());
  CHECK(fmod.value()[0].values<uint16_t>() == std::vector<uint16_t>{0x3E00});
}

TEST_CASE("Cast to and from f16 and bf16 rounds to nearest even", "[ops][elementwise]") {
  // f16: 1/3 -> 0x3555, 65504 -> 0x7BFF (the largest half), 1e6 -> inf 0x7C00, 2^-24 -> 0x0001.
  auto half = run_op_under_test("Cast", {HostTensor::f32({4}, {1.0f / 3.0f, 65504.0f, 1e6f, 0x1p-24f})}, {{"to", std::string("f16")}});
  REQUIRE(half.is_ok());
  CHECK(half.value()[0].dtype == DType::kF16);
  CHECK(half.value()[0].values<uint16_t>() == std::vector<uint16_t>{0x3555, 0x7BFF, 0x7C00, 0x0001});
  auto back = run_op_under_test("Cast", {half.value()[0]}, {{"to", std::string("f32")}});
  REQUIRE(back.is_ok());
  CHECK(back.value()[0].f32() == std::vector<float>{0.333251953125f, 65504.0f, std::numeric_limits<float>::infinity(), 0x1p-24f});
  auto from_int = run_op_under_test("Cast", {HostTensor::i64({2}, {3, -2})}, {{"to", std::string("f16")}});
  REQUIRE(from_int.is_ok());
  CHECK(from_int.value()[0].values<uint16_t>() == std::vector<uint16_t>{0x4200, 0xC000});
  auto to_int = run_op_under_test("Cast", {HostTensor::make<uint16_t>(DType::kF16, {1}, {0x4580})}, {{"to", std::string("i32")}});
  REQUIRE(to_int.is_ok());
  CHECK(to_int.value()[0].values<int32_t>() == std::vector<int32_t>{5});  // 5.5 truncates
  // bfloat16: 0.5 -> 0x3F00, 1/3 -> 0x3EAB.
  auto bf16 = run_op_under_test("Cast", {HostTensor::f32({2}, {0.5f, 1.0f / 3.0f})}, {{"to", std::string("bf16")}});
  REQUIRE(bf16.is_ok());
  CHECK(bf16.value()[0].values<uint16_t>() == std::vector<uint16_t>{0x3F00, 0x3EAB});
}
