// The operand layout BFMMLA reads, and the products over it (kernels/neon/bf16_gemm.hpp says
// what the GEMMs compute). A panel holds an operand's rows, padded with zero rows to a multiple
// of the tile's height (a) or width (b), pair by pair: for each pair of rows and each block of
// four depth values, the pair's 2x4 bf16 values, the first row's four then the second's. A
// partial last block is padded with zeros, which add nothing to the sums.
#pragma once
#include <cstddef>
#include <cstdint>

#include "ir/activation.hpp"
#include "kernels/cpu/thread_pool.hpp"

namespace pock::neon {

// A tile of y: 4 rows of a against 8 rows of b (8 BFMMLA accumulators of 2x2 sums).
constexpr int64_t kTileRows = 4;
constexpr int64_t kTileCols = 8;

// One operand as a GEMM reads it: element (row r, depth d) at data[r * ld + d] when
// depth_contiguous, else at data[d * ld + r]; f32 (rounded to bf16 as it is packed) or bf16.
struct Bf16Source {
  const void* data = nullptr;
  bool bf16 = false;
  bool depth_contiguous = true;
  int64_t ld = 1;
};

// Bytes of the panel of `rows` rows (padded to a multiple of `row_multiple`, which is even) by
// `depth` values.
size_t bf16_panel_bytes(int64_t rows, int64_t depth, int64_t row_multiple);

void pack_bf16_panel(const Bf16Source& src, int64_t rows, int64_t depth, int64_t row_multiple, uint16_t* panel,
                     pthreadpool_t pool);

// What is applied to each sum before it is stored: + bias[column] (when not null), then the activation.
struct Bf16Epilogue {
  const float* bias = nullptr;
  Activation activation = Activation::kNone;
};

// y [m, n] (leading dimension n) = a's rows times b's rows, from a panel of a (kTileRows
// multiple) and one of b (kTileCols multiple) of `depth` values each. Needs the BF16 extension.
void multiply_bf16_panels(const uint16_t* a, const uint16_t* b, int64_t m, int64_t n, int64_t depth,
                          const Bf16Epilogue& epilogue, float* y, pthreadpool_t pool);

// Whether this build's compiler emits BFMMLA (multiply_bf16_panels is a stub otherwise).
bool bf16_panels_compiled();

}  // namespace pock::neon
