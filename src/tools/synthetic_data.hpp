// Deterministic stand-in data for timing runs (tune, bench): timings must not depend on a data
// file, and every value must be valid where a kernel checks it (class labels, gather indices).
#pragma once
#include <cstddef>
#include <cstdint>

#include "pock/compiler/ir.hpp"

namespace pock::tools {

// Floats: a fixed pseudo-random sequence in [-1, 1) from `seed`; integers and bools: 0, a valid
// label and index for any op.
void fill_synthetic(DType dtype, void* data, size_t nbytes, uint64_t seed);

}  // namespace pock::tools
