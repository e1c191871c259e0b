// Operand builders for the written cuda kernel cases (tests/cuda/kernel_cases*.hpp): random floats,
// any dtype's random elements, index and label tensors, and block-quantized weights made by the
// repo's own quantizer (the one the compiler uses for frozen weights).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "frontend/gguf/ggml_quantize.hpp"
#include "frontend/gguf/ggml_types.hpp"
#include "ir/block_format.hpp"
#include "tests/cuda/device_op.hpp"

namespace pock::test {

using Ints = std::vector<int64_t>;  // list attributes

inline HostOperand rnd(Shape shape, uint32_t seed, DType dtype = DType::kF32) {
  return random_operand(dtype, std::move(shape), seed);
}
inline HostOperand rnd_in(Shape shape, uint32_t seed, float lo, float hi) {
  return random_operand(DType::kF32, std::move(shape), seed, lo, hi);
}
inline HostOperand i64s(Shape shape, std::vector<int64_t> v) { return operand_of(DType::kI64, std::move(shape), v); }
inline HostOperand i32s(Shape shape, std::vector<int32_t> v) { return operand_of(DType::kI32, std::move(shape), v); }
inline HostOperand scalar(float v) { return operand_of(DType::kF32, Shape{}, std::vector<float>{v}); }
inline HostOperand position(int64_t p) { return i64s({}, {p}); }

// Random elements of any dtype for ops that move elements without reading them: floats as
// random_operand, bool 0 or 1, every other dtype random bytes (any bit pattern is a value).
inline HostOperand random_elements(DType dtype, Shape shape, uint32_t seed) {
  if (dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16) return rnd(std::move(shape), seed, dtype);
  HostOperand o{dtype, std::move(shape), {}};
  o.bytes.resize(static_cast<size_t>(numel(o.shape)) * dtype_size(dtype));
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  for (uint8_t& b : o.bytes) b = static_cast<uint8_t>(dtype == DType::kBool ? byte(gen) & 1 : byte(gen));
  return o;
}

// A u8 or bool keep-mask of 0s and 1s (about 3 in 4 kept).
inline HostOperand random_mask(Shape shape, uint32_t seed, DType dtype = DType::kU8) {
  HostOperand o{dtype, std::move(shape), {}};
  o.bytes.resize(static_cast<size_t>(numel(o.shape)));
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> quarter(0, 3);
  for (uint8_t& b : o.bytes) b = quarter(gen) != 0 ? 1 : 0;
  return o;
}

// Positive f32 values (variances, inverse standard deviations).
inline HostOperand positive(Shape shape, uint32_t seed) { return rnd_in(std::move(shape), seed, 0.5f, 1.5f); }

// Elements of a dtype cuda casts from (f32, i32, i64, i8, u8, bool) holding the integers 0..100
// (f32: with a fraction; bool: 0 or 1), which every dtype holds exactly, so a cast from them has
// one right answer whatever the dtype it goes to.
inline HostOperand small_values(DType dtype, Shape shape, uint32_t seed) {
  HostOperand o{dtype, std::move(shape), {}};
  const size_t n = static_cast<size_t>(numel(o.shape));
  o.bytes.resize(n * dtype_size(dtype));
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(0.0, 100.0);
  for (size_t i = 0; i < n; ++i) {
    const double v = dist(gen);
    const auto whole = static_cast<int64_t>(v);
    uint8_t* p = o.bytes.data() + i * dtype_size(dtype);
    switch (dtype) {
      case DType::kF32: { const auto f = static_cast<float>(v); std::memcpy(p, &f, 4); break; }
      case DType::kI32: { const auto w = static_cast<int32_t>(whole); std::memcpy(p, &w, 4); break; }
      case DType::kI64: std::memcpy(p, &whole, 8); break;
      case DType::kBool: *p = whole % 2 == 0 ? 1 : 0; break;
      default: *p = static_cast<uint8_t>(whole); break;  // i8, u8: 0..100 in both
    }
  }
  return o;
}

// Where casts leave the common ground: for f32 fractions and negatives (truncated toward zero,
// then wrapped), values beyond the narrow integer dtypes and beyond int64 (saturated), NaN (0);
// for i64 values that wrap in every narrower integer dtype.
inline HostOperand cast_edges(DType dtype) {
  if (dtype == DType::kF32) {
    return operand_of(DType::kF32, {11}, std::vector<float>{-0.75f, -3.75f, 300.5f, -300.5f, 70000.25f, 3e9f, -3e9f, 1e20f,
                                                           -1e20f, NAN, INFINITY});
  }
  return i64s({8}, {-1, -300, 70000, 3000000000, -3000000000, (int64_t{1} << 40) + 3, INT64_MAX, INT64_MIN});
}

// A [rows, row_bytes] u8 weight of `format` blocks (q8_0, q4_0 or q4_1), quantized from random
// values in [-1, 1) by the repo's GGUF quantizer.
inline HostOperand quantized_rows(BlockFormat format, int64_t rows, int64_t cols, uint32_t seed) {
  const HostOperand values = rnd({rows, cols}, seed);
  const uint32_t type = format == BlockFormat::kQ8_0 ? gguf::kQ8_0 : format == BlockFormat::kQ4_0 ? gguf::kQ4_0 : gguf::kQ4_1;
  auto bytes = gguf::from_f32(type, reinterpret_cast<const float*>(values.bytes.data()), static_cast<uint64_t>(rows * cols));
  REQUIRE(bytes.is_ok());
  return HostOperand{DType::kU8, {rows, block_row_bytes(format, cols)}, std::move(bytes.value())};
}

inline Attrs quant_attrs(BlockFormat format, int64_t in_features, const char* compute = "f32") {
  return Attrs{{"format", std::string(block_format_name(format))}, {"in_features", in_features},
               {"compute", std::string(compute)}};
}

// x [rows, cols] and the max of each row as [rows, 1], with the max repeated in row 0 (a tie).
struct RowsWithMax {
  HostOperand x, max;
};
inline RowsWithMax rows_with_max(int64_t rows, int64_t cols, uint32_t seed) {
  HostOperand x = rnd({rows, cols}, seed);
  auto* v = reinterpret_cast<float*>(x.bytes.data());
  std::vector<float> max(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) max[r] = *std::max_element(v + r * cols, v + (r + 1) * cols);
  v[cols - 1] = v[0] = max[0];
  return {x, operand_of(DType::kF32, {rows, 1}, max)};
}

}  // namespace pock::test
