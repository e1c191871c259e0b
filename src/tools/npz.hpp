// NumPy .npy / .npz files, as np.save, np.savez and np.savez_compressed write them. The zip
// container is libzip's; the .npy header is parsed here.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pock/compiler/ir.hpp"
#include "pock/status.hpp"

namespace pock::tools {

struct NpyArray {
  std::string descr;          // numpy dtype string, little-endian: "<f4", "<i8", "|b1", ...
  Shape shape;
  std::vector<uint8_t> data;  // row-major (C order)
  size_t item_size() const;
  int64_t count() const { return numel(shape); }
};

// numpy descr <-> pock dtype; float64 has no pock dtype (converted by the caller).
Result<DType> dtype_of_descr(const std::string& descr);
std::string descr_of_dtype(DType dtype);

Result<NpyArray> parse_npy(const uint8_t* bytes, size_t size, const std::string& what);
std::vector<uint8_t> serialize_npy(const NpyArray& array);

// Arrays by name (the file names inside the zip without ".npy").
using NpzFile = std::map<std::string, NpyArray>;
// Sizes a zip declares are checked against the file before anything is allocated: a stored
// entry cannot be larger than its compressed bytes, a deflated one than deflate's 1032:1 limit.
Result<NpzFile> read_npz(const std::string& path);
// The same from bytes in memory; `what` names them in messages.
Result<NpzFile> read_npz_bytes(const uint8_t* data, size_t size, const std::string& what);
Status write_npz(const std::string& path, const NpzFile& arrays, bool compressed = false);

// The array's values converted to `dtype` (float64 -> float32, int64 <-> int32 with a range
// check, float32 -> float16/bfloat16 rounding); the error names the array.
Result<std::vector<uint8_t>> convert_to(const NpyArray& array, DType dtype, const std::string& name);

}  // namespace pock::tools
