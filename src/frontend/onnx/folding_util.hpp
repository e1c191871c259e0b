// Shared pieces of the import-time evaluators (folding_*.cpp): index arithmetic and broadcast.
#pragma once
#include <vector>

#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import::fold {

std::vector<int64_t> strides_of(const Shape& shape);
// For each element of `out` (row-major), the flat index of the element of `in` that broadcasts
// to it. `in` must be broadcast-compatible with `out`.
std::vector<int64_t> broadcast_index(const Shape& in, const Shape& out);
Result<Shape> broadcast_all(const NodeView& node, const std::vector<const HostTensor*>& inputs);
// ONNX attribute `to` / TensorProto type -> pock dtype, for Cast (folded or converted); errors
// name the node.
Result<DType> onnx_dtype(const NodeView& node, int64_t elem_type);
// Copies element `from` of `src` to element `to` of `dst` (same kind of storage).
inline void copy_element(const HostTensor& src, int64_t from, HostTensor& dst, int64_t to) {
  if (src.is_float()) dst.f[to] = src.f[from];
  else dst.i[to] = src.i[from];
}
// Folded constants end up in the blob; beyond this many elements the model is not what pock
// is for (or the file is hostile), and the error says so instead of exhausting memory.
constexpr int64_t kMaxFoldedElements = int64_t{1} << 26;
Status check_folded_size(const NodeView& node, const Shape& shape);

// Normalizes a possibly negative axis, naming the node on error.
Result<int> axis_of(const NodeView& node, int64_t axis, int rank);

void register_elementwise_folders(std::unordered_map<std::string, Folder>& table);
void register_layout_folders(std::unordered_map<std::string, Folder>& table);
void register_signal_folders(std::unordered_map<std::string, Folder>& table);
void register_data_dependent_folders(std::unordered_map<std::string, Folder>& table);

}  // namespace pock::onnx_import::fold
