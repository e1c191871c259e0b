// The CUDA block_quant logic (kernels/cuda/block_quant_logic.hpp) on the host against the
// reference kernels: the half and block decoders value for value, GatherQ, and LinearQ /
// LinearQInputGrad with every thread of every tile run phase by phase as a block runs them.
#include <cstring>
#include <memory>
#include <random>

#include "cuda_logic/logic_harness.hpp"
#include "ir/float16.hpp"
#include "kernels/cuda/block_quant_head_logic.hpp"
#include "kernels/cuda/block_quant_int8_logic.hpp"
#include "kernels/cuda/block_quant_logic.hpp"
#include "kernels/int8_rows.h"
#include "kernels/params/block_quant.hpp"

using namespace pock;
using namespace pock::test;

namespace {

// Rows of random blocks with sane scales (random bytes would make NaN and infinite halves).
HostBuffer random_blocks(BlockFormat format, int64_t rows, int64_t cols, uint32_t seed) {
  const int64_t row_bytes = block_row_bytes(format, cols);
  HostBuffer t{DType::kU8, {rows, row_bytes}, std::vector<uint8_t>(static_cast<size_t>(rows * row_bytes))};
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> scale(-0.05f, 0.05f);
  std::uniform_int_distribution<int> byte(0, 255);
  const int64_t block_bytes = block_layout(format).bytes;
  for (int64_t b = 0; b < rows * cols / block_layout(format).values; ++b) {
    uint8_t* block = t.bytes.data() + b * block_bytes;
    for (int64_t i = 0; i < block_bytes; ++i) block[i] = static_cast<uint8_t>(byte(gen));
    const uint16_t d = float_to_half(scale(gen)), m = float_to_half(scale(gen));
    // d first (q6_k: last), then q4_1's m or q4_k's dmin
    std::memcpy(block + (format == BlockFormat::kQ6_K ? 208 : 0), &d, 2);
    if (format == BlockFormat::kQ4_1 || format == BlockFormat::kQ4_K) std::memcpy(block + 2, &m, 2);
  }
  return t;
}

// The attributes of a block_quant op over [*, k] weights in `format`, computing in `compute`.
Attrs quant_attrs(BlockFormat format, int64_t in_features, const char* compute = nullptr) {
  Attrs attrs{{"format", std::string(block_format_name(format))}, {"in_features", in_features}};
  if (compute) attrs.set("compute", std::string(compute));
  return attrs;
}

// LinearQ(x [rows, k], w [n, k] random blocks, bias?) under `compute`.
BoundOp linear_q_op(BlockFormat format, int64_t rows, int64_t n, int64_t k, bool bias, uint32_t seed,
                    const char* compute) {
  return BoundOp("LinearQ",
                 {random_f32({rows, k}, seed), random_blocks(format, n, k, seed + 1),
                  bias ? random_f32({n}, seed + 2) : absent()},
                 quant_attrs(format, k, compute));
}

// Every tile of C, each block's threads run one after another per phase, as the kernel runs them
// between barriers.
template <typename Tile = cuda::QuantTile, typename G>
void gemm_on_host(const G& g) {
  auto tile = std::make_unique<Tile>();
  std::vector<float> acc(static_cast<size_t>(cuda::kTileThreads) * 16);
  auto acc_of = [&](int t) { return reinterpret_cast<float(*)[4]>(acc.data() + 16 * t); };
  for (int64_t m0 = 0; m0 < g.m; m0 += cuda::kTileM) {
    for (int64_t n0 = 0; n0 < g.n; n0 += cuda::kTileN) {
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (int64_t k0 = 0; k0 < g.k; k0 += cuda::kTileK) {
        for (int t = 0; t < cuda::kTileThreads; ++t) g.load(*tile, m0, n0, k0, t);
        for (int t = 0; t < cuda::kTileThreads; ++t) g.accumulate(*tile, t, acc_of(t));
      }
      for (int t = 0; t < cuda::kTileThreads; ++t) g.store(m0, n0, t, acc_of(t));
    }
  }
}

// f32 sums of k products against ref's double ones: the error scales with the terms, which can
// cancel in a small result, so the absolute tolerance follows the output's largest magnitude.
void expect_product_close(const HostBuffer& got, const HostBuffer& want, const std::string& what) {
  float largest = 0.0f;
  for (float v : want.f32()) largest = std::max(largest, std::fabs(v));
  expect_close(got, want, what, 1e-4, 1e-4 * largest);
}

const BlockFormat kFormats[] = {BlockFormat::kQ8_0, BlockFormat::kQ4_0, BlockFormat::kQ4_1, BlockFormat::kQ4_K,
                                BlockFormat::kQ6_K};

}  // namespace

TEST_CASE("cuda half and block decoders match ir's, value for value", "[cuda_logic][block_quant]") {
  int64_t mismatches = 0;
  for (uint32_t h = 0; h < 65536; ++h) {
    const float want = half_to_float(static_cast<uint16_t>(h)), got = cuda::half_bits_to_float(static_cast<uint16_t>(h));
    const bool same = std::isnan(want) ? std::isnan(got) : std::memcmp(&want, &got, sizeof want) == 0;
    if (!same && mismatches++ < 5) FAIL_CHECK("half " << h << ": " << got << ", ir " << want);
  }
  CHECK(mismatches == 0);
  for (BlockFormat format : kFormats) {
    const int64_t cols = 512, blocks = 3 * cols / block_layout(format).values;
    HostBuffer w = random_blocks(format, 3, cols, 40);
    std::vector<float> decoded(3 * cols);
    decode_blocks(format, w.bytes.data(), blocks, decoded.data());
    const cuda::QuantRows rows{w.bytes.data(), 3, block_row_bytes(format, cols), format};
    CHECK(cuda::block_bytes_of(format) == block_layout(format).bytes);
    CHECK(cuda::block_values_of(format) == block_layout(format).values);
    int64_t wrong = 0;
    for (int64_t i = 0; i < 3 * cols; ++i) {
      if (rows.at(i / cols, i % cols) != decoded[static_cast<size_t>(i)] && wrong++ < 5) {
        FAIL_CHECK(block_format_name(format) << " value " << i << ": " << rows.at(i / cols, i % cols) << ", ir "
                                             << decoded[static_cast<size_t>(i)]);
      }
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("cuda GatherQ logic matches ref", "[cuda_logic][block_quant]") {
  for (BlockFormat format : kFormats) {
    const int64_t vocab = 11, k = 256;
    BoundOp bound("GatherQ", {random_blocks(format, vocab, k, 50), HostBuffer::i32({2, 3}, {0, 10, -1, 4, 4, -11})},
                  quant_attrs(format, k));
    REQUIRE(bound.status().is_ok());
    const std::vector<HostBuffer> want = bound.run_ref();
    std::vector<HostBuffer> got = bound.fresh_outputs();
    REQUIRE(got[0].shape == Shape{2, 3, k});
    const pock_op_desc d = bound.bind(got);
    const auto p = parsed<params::BlockQuantParams>(d);
    each_element(cuda::GatherQElement<int32_t>{{data_of<uint8_t>(d.inputs[0]), vocab, p.row_bytes, p.format},
                                               k,
                                               data_of<int32_t>(d.inputs[1]),
                                               data_of(d.outputs[0])},
                 6 * k);
    INFO(block_format_name(format));
    CHECK(got[0].bytes == want[0].bytes);
  }
}

TEST_CASE("cuda LinearQ and LinearQInputGrad tiles match ref across tile edges", "[cuda_logic][block_quant]") {
  uint32_t seed = 60;
  for (BlockFormat format : kFormats) {
    const bool k_quant = block_layout(format).values == 256;
    for (const int64_t k : k_quant ? std::vector<int64_t>{256} : std::vector<int64_t>{64, 96}) {
      const int64_t n = 70, rows = 67;  // past one 64 x 64 tile both ways
      for (bool bias : {true, false}) {
        BoundOp bound = linear_q_op(format, rows, n, k, bias, seed += 3, "f32");
        REQUIRE(bound.status().is_ok());
        const std::vector<HostBuffer> want = bound.run_ref();
        std::vector<HostBuffer> got = bound.fresh_outputs();
        const pock_op_desc d = bound.bind(got);
        const auto p = parsed<params::BlockQuantParams>(d);
        const cuda::QuantRows w{data_of<uint8_t>(d.inputs[1]), n, p.row_bytes, p.format};
        gemm_on_host(cuda::QuantGemm<cuda::WeightRowsAsColumns>{data_of(d.inputs[0]), {w}, data_of(d.inputs[2]),
                                                                data_of(d.outputs[0]), rows, n, k});
        INFO("LinearQ " << block_format_name(format) << " k " << k << " bias " << bias);
        expect_product_close(got[0], want[0], "y");
      }

      HostBuffer dy = random_f32({rows, n}, ++seed);
      BoundOp bound("LinearQInputGrad", {dy, random_blocks(format, n, k, ++seed)}, quant_attrs(format, k));
      REQUIRE(bound.status().is_ok());
      const std::vector<HostBuffer> want = bound.run_ref();
      std::vector<HostBuffer> got = bound.fresh_outputs();
      const pock_op_desc d = bound.bind(got);
      const auto p = parsed<params::BlockQuantParams>(d);
      const cuda::QuantRows w{data_of<uint8_t>(d.inputs[1]), n, p.row_bytes, p.format};
      gemm_on_host(cuda::QuantGemm<cuda::WeightRows>{data_of(d.inputs[0]), {w, k}, nullptr, data_of(d.outputs[0]), rows,
                                                     k, n});
      INFO("LinearQInputGrad " << block_format_name(format) << " k " << k);
      expect_product_close(got[0], want[0], "dx");
    }
  }
}

TEST_CASE("cuda int8 block quantization reproduces int8_rows.h bit for bit", "[cuda_logic][block_quant]") {
  std::vector<float> blocks = random_values({6 * 32}, 70, -3.0f, 3.0f, false);
  std::fill(blocks.begin() + 32, blocks.begin() + 64, 0.0f);  // zeros: scale 0
  blocks[64 + 5] = NAN;                                        // not finite: q 0, scale NaN
  blocks[96 + 7] = INFINITY;
  for (int i = 128; i < 160; ++i) blocks[static_cast<size_t>(i)] = 0.5f * static_cast<float>(i - 144);  // exact halves
  for (int b = 0; b < 6; ++b) {
    int8_t want[32], got[32];
    const float want_scale = pock_quantize_row_i8(blocks.data() + 32 * b, 32, want);
    float got_scale = 0.0f;
    int32_t sum = 0;
    cuda::quantize_block(cuda::SoloTeam{}, cuda::ArrayValues{blocks.data() + 32 * b}, got, &got_scale, &sum);
    INFO("block " << b);
    CHECK(std::memcmp(want, got, 32) == 0);
    CHECK((std::isnan(want_scale) ? std::isnan(got_scale) : want_scale == got_scale));
    int32_t want_sum = 0;
    for (int8_t q : want) want_sum += q;
    CHECK(sum == want_sum);
  }
}

TEST_CASE("cuda LinearQ compute int8 tiles match ref across tile edges", "[cuda_logic][block_quant]") {
  uint32_t seed = 80;
  for (BlockFormat format : {BlockFormat::kQ8_0, BlockFormat::kQ4_0, BlockFormat::kQ4_1}) {
    for (const int64_t k : {int64_t{64}, int64_t{96}}) {
      const int64_t n = 70, rows = 67;
      for (bool bias : {true, false}) {
        BoundOp bound = linear_q_op(format, rows, n, k, bias, seed += 3, "int8");
        REQUIRE(bound.status().is_ok());
        const std::vector<HostBuffer> want = bound.run_ref();
        std::vector<HostBuffer> got = bound.fresh_outputs();
        const pock_op_desc d = bound.bind(got);
        const auto p = parsed<params::BlockQuantParams>(d);
        REQUIRE(p.int8);
        std::vector<int8_t> q(static_cast<size_t>(rows * k));
        std::vector<float> scales(static_cast<size_t>(rows * k / 32));
        std::vector<int32_t> sums(scales.size());
        each_row(cuda::QuantizeBlocks{data_of(d.inputs[0]), q.data(), scales.data(), sums.data()}, rows * k / 32);
        const cuda::QuantRows w{data_of<uint8_t>(d.inputs[1]), n, p.row_bytes, p.format};
        gemm_on_host<cuda::Int8Tile>(cuda::Int8Gemm<cuda::WeightInt8Blocks>{
            q.data(), scales.data(), sums.data(), {w, n}, data_of(d.inputs[2]), data_of(d.outputs[0]), rows, n, k});
        INFO("LinearQ int8 " << block_format_name(format) << " k " << k << " bias " << bias);
        expect_product_close(got[0], want[0], "y");
      }
    }
  }
}

TEST_CASE("cuda LinearQInputGrad compute int8 matches ref across tile edges", "[cuda_logic][block_quant]") {
  uint32_t seed = 90;
  for (BlockFormat format : {BlockFormat::kQ8_0, BlockFormat::kQ4_0, BlockFormat::kQ4_1}) {
    for (const int64_t k : {int64_t{64}, int64_t{96}}) {
      const int64_t n = 96, rows = 67;  // N whole 32-row chunks; K and rows past one tile
      HostBuffer dy = random_f32({rows, n}, ++seed);
      BoundOp bound("LinearQInputGrad", {dy, random_blocks(format, n, k, ++seed)}, quant_attrs(format, k, "int8"));
      REQUIRE(bound.status().is_ok());
      const std::vector<HostBuffer> want = bound.run_ref();
      std::vector<HostBuffer> got = bound.fresh_outputs();
      const pock_op_desc d = bound.bind(got);
      const auto p = parsed<params::BlockQuantParams>(d);
      std::vector<int8_t> q(static_cast<size_t>(rows * n)), columns(static_cast<size_t>(n * k));
      std::vector<float> scales(static_cast<size_t>(rows * n / 32)), column_scales(static_cast<size_t>(n / 32 * k));
      std::vector<int32_t> sums(scales.size());
      each_row(cuda::QuantizeBlocks{data_of(d.inputs[0]), q.data(), scales.data(), sums.data()}, rows * n / 32);
      const cuda::QuantRows w{data_of<uint8_t>(d.inputs[1]), n, p.row_bytes, p.format};
      each_row(cuda::QuantizeColumns{w, k, columns.data(), column_scales.data()}, n / 32 * k);
      gemm_on_host<cuda::Int8Tile>(cuda::Int8Gemm<cuda::QuantizedColumns>{
          q.data(), scales.data(), nullptr, {columns.data(), column_scales.data(), k}, nullptr, data_of(d.outputs[0]),
          rows, k, n});
      INFO("LinearQInputGrad int8 " << block_format_name(format) << " k " << k);
      expect_product_close(got[0], want[0], "dx");
    }
  }
}

TEST_CASE("cuda LinearQCrossEntropy logic (logits, per-row loss and gradient, dx) matches ref",
          "[cuda_logic][block_quant]") {
  uint32_t seed = 100;
  const int64_t rows = 70, n = 96, k = 64;  // rows past one tile; N whole 32-value blocks for int8
  for (const char* compute : {"f32", "int8"}) {
    for (BlockFormat format : {BlockFormat::kQ8_0, BlockFormat::kQ4_0, BlockFormat::kQ4_1}) {
      for (const double smoothing : {0.0, 0.1}) {
        std::vector<int64_t> labels(static_cast<size_t>(rows));
        for (int64_t r = 0; r < rows; ++r) labels[r] = r % 7 == 3 ? -100 : (r * 37) % n;
        HostBuffer x_values = random_f32({rows, k}, ++seed, -2.0f, 2.0f);
        Attrs attrs = quant_attrs(format, k, compute);
        attrs.set("label_smoothing", smoothing);
        BoundOp bound("LinearQCrossEntropy",
                      {x_values, random_blocks(format, n, k, ++seed), HostBuffer::i64({rows}, labels)}, attrs);
        REQUIRE(bound.status().is_ok());
        const std::vector<HostBuffer> want = bound.run_ref();
        std::vector<HostBuffer> got = bound.fresh_outputs();
        REQUIRE(got.size() == 2);
        const pock_op_desc d = bound.bind(got);
        const auto p = parsed<params::BlockQuantParams>(d);
        const cuda::QuantRows w{data_of<uint8_t>(d.inputs[1]), n, p.row_bytes, p.format};
        const float* x = data_of(d.inputs[0]);
        const int64_t* label = data_of<int64_t>(d.inputs[2]);
        cuda::HeadCounts counts{};
        std::vector<float> logits(static_cast<size_t>(rows * n)), row_loss(static_cast<size_t>(rows));
        each_row(cuda::CountLabels{label, rows, n, p.ignore_index, &counts}, 1);
        // What the device does per chunk, with the whole batch as one chunk.
        std::vector<int8_t> q(static_cast<size_t>(rows * std::max(n, k))), columns(static_cast<size_t>(n * k));
        std::vector<float> scales(q.size() / 32), column_scales(static_cast<size_t>(n / 32 * k));
        std::vector<int32_t> sums(scales.size());
        if (p.int8) {
          each_row(cuda::QuantizeBlocks{x, q.data(), scales.data(), sums.data()}, rows * k / 32);
          gemm_on_host<cuda::Int8Tile>(cuda::Int8Gemm<cuda::WeightInt8Blocks>{
              q.data(), scales.data(), sums.data(), {w, n}, nullptr, logits.data(), rows, n, k});
        } else {
          gemm_on_host(cuda::QuantGemm<cuda::WeightRowsAsColumns>{x, {w}, nullptr, logits.data(), rows, n, k});
        }
        each_row(cuda::CrossEntropyRow{logits.data(), label, row_loss.data(), &counts, n, p.ignore_index,
                                       static_cast<float>(p.label_smoothing)},
                 rows);
        float* dx = data_of(d.outputs[1]);
        if (p.int8) {
          each_row(cuda::QuantizeBlocks{logits.data(), q.data(), scales.data(), sums.data()}, rows * n / 32);
          each_row(cuda::QuantizeColumns{w, k, columns.data(), column_scales.data()}, n / 32 * k);
          gemm_on_host<cuda::Int8Tile>(cuda::Int8Gemm<cuda::QuantizedColumns>{
              q.data(), scales.data(), nullptr, {columns.data(), column_scales.data(), k}, nullptr, dx, rows, k, n});
        } else {
          gemm_on_host(cuda::QuantGemm<cuda::WeightRows>{logits.data(), {w, k}, nullptr, dx, rows, k, n});
        }
        each_row(cuda::HeadLoss{row_loss.data(), &counts, rows, data_of(d.outputs[0])}, 1);
        INFO(compute << " " << block_format_name(format) << " smoothing " << smoothing);
        CHECK(counts.counted == 60.0f);
        expect_close(got[0], want[0], "loss", 1e-4, 1e-5);
        expect_product_close(got[1], want[1], "dx");
      }
    }
  }
  // A label outside the classes (ref refuses it) is reported to the error site and makes the
  // loss NaN; an ignored one is neither.
  for (const int64_t second : {int64_t{5}, int64_t{-100}, int64_t{3}}) {
    const int64_t labels[] = {1, second};
    cuda::HeadCounts counts{};
    int32_t word = 0;
    each_row(cuda::CountLabels{labels, 2, 4, -100, &counts, {&word, 9}}, 1);
    const float losses[] = {0.5f, 0.5f};
    float loss = 0.0f;
    each_row(cuda::HeadLoss{losses, &counts, 2, &loss}, 1);
    const bool bad = second == 5;
    INFO("label " << second);
    CHECK(word == (bad ? 9 : 0));
    CHECK(std::isnan(loss) == bad);
  }
}

TEST_CASE("cuda GatherQ logic reports an index out of range, which ref refuses", "[cuda_logic][block_quant]") {
  const HostBuffer table = random_blocks(BlockFormat::kQ8_0, 3, 32, 55);
  const cuda::QuantRows rows{table.bytes.data(), 3, block_row_bytes(BlockFormat::kQ8_0, 32), BlockFormat::kQ8_0};
  for (const int32_t index : {2, -3, 3, -4}) {
    const int32_t indices[] = {0, index};
    std::vector<float> out(64, 1234.0f);
    int32_t word = 0;
    each_element(cuda::GatherQElement<int32_t>{rows, 32, indices, out.data(), {&word, 4}}, 64);
    const bool fits = index >= -3 && index < 3;
    INFO("index " << index);
    CHECK(word == (fits ? 0 : 4));
    CHECK(out[32] == (fits ? rows.at((index + 3) % 3, 0) : 0.0f));
  }
}
