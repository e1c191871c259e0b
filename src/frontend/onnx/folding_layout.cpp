// Import-time evaluation of ops that move elements: Gather, Slice, Concat, Split, Reshape,
// Unsqueeze, Squeeze, Flatten, Transpose, Expand, Tile, Trilu. These make up the shape chains
// (Shape -> Gather -> Unsqueeze -> Concat -> Reshape) that exporters emit for static shapes.
#include <algorithm>

#include "frontend/onnx/folding_util.hpp"

namespace pock::onnx_import::fold {
namespace {

using Inputs = std::vector<const HostTensor*>;
using Outputs = std::vector<HostTensor>;

// out[c0, c1, ...] = x[idx[0][c0], idx[1][c1], ...]: the one gather that Slice, Gather, Split and
// Tile reduce to.
HostTensor take(const HostTensor& x, const std::vector<std::vector<int64_t>>& idx) {
  Shape shape;
  for (const auto& v : idx) shape.push_back(static_cast<int64_t>(v.size()));
  HostTensor y = HostTensor::zeros(x.dtype, shape);
  const auto strides = strides_of(x.shape);
  std::vector<int64_t> coord(shape.size(), 0);
  for (int64_t k = 0; k < y.size(); ++k) {
    int64_t flat = 0;
    for (size_t d = 0; d < shape.size(); ++d) flat += idx[d][coord[d]] * strides[d];
    copy_element(x, flat, y, k);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++coord[d] < shape[d]) break;
      coord[d] = 0;
    }
  }
  return y;
}

std::vector<std::vector<int64_t>> all_indices(const Shape& shape) {
  std::vector<std::vector<int64_t>> idx(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    for (int64_t i = 0; i < shape[d]; ++i) idx[d].push_back(i);
  }
  return idx;
}

Status done(Outputs* out, bool* folded, HostTensor y) {
  out->push_back(std::move(y));
  *folded = true;
  return Status::ok();
}

// Axes come from input `i` (opset 13+) or the attribute (older exporters keep writing it).
Result<std::vector<int64_t>> axes_of(NodeView& node, const Inputs& in, size_t i) {
  if (i < in.size() && in[i]) return in[i]->ints();
  return node.attrs().get_ints("axes", {});
}

Status fold_gather(NodeView& node, const Inputs& in, Outputs* out, bool* folded) {
  const HostTensor &data = *in[0], &indices = *in[1];
  if (indices.is_float()) return node.input_error(1, "must hold integers");
  const int rank = static_cast<int>(data.shape.size());
  POCK_ASSIGN_OR_RETURN(int64_t attr, node.attrs().get_int("axis", 0));
  POCK_ASSIGN_OR_RETURN(int axis, axis_of(node, attr, rank));
  auto idx = all_indices(data.shape);
  idx[axis].clear();
  for (int64_t k = 0; k < indices.size(); ++k) {
    int64_t v = indices.i[k];
    if (v < 0) v += data.shape[axis];
    if (v < 0 || v >= data.shape[axis]) {
      return node.error("index " + std::to_string(indices.i[k]) + " is out of range for axis " + std::to_string(axis) +
                        " of " + shape_str(data.shape));
    }
    idx[axis].push_back(v);
  }
  HostTensor y = take(data, idx);
  Shape shape(data.shape.begin(), data.shape.begin() + axis);
  shape.insert(shape.end(), indices.shape.begin(), indices.shape.end());
  shape.insert(shape.end(), data.shape.begin() + axis + 1, data.shape.end());
  y.shape = shape;
  return done(out, folded, std::move(y));
}

Status fold_unsqueeze(NodeView& node, const Inputs& in, Outputs* out, bool* folded) {
  POCK_ASSIGN_OR_RETURN(auto axes, axes_of(node, in, 1));
  const int rank = static_cast<int>(in[0]->shape.size() + axes.size());
  std::vector<bool> inserted(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    POCK_ASSIGN_OR_RETURN(int axis, axis_of(node, a, rank));
    inserted[axis] = true;
  }
  Shape shape;
  size_t next = 0;
  for (int d = 0; d < rank; ++d) shape.push_back(inserted[d] ? 1 : in[0]->shape[next++]);
  HostTensor y = *in[0];
  y.shape = shape;
  return done(out, folded, std::move(y));
}

Status fold_squeeze(NodeView& node, const Inputs& in, Outputs* out, bool* folded) {
  POCK_ASSIGN_OR_RETURN(auto axes, axes_of(node, in, 1));
  const Shape& s = in[0]->shape;
  std::vector<bool> drop(s.size(), axes.empty());
  if (axes.empty()) {
    for (size_t d = 0; d < s.size(); ++d) drop[d] = s[d] == 1;
  }
  for (int64_t a : axes) {
    POCK_ASSIGN_OR_RETURN(int axis, axis_of(node, a, static_cast<int>(s.size())));
    if (s[axis] != 1) return node.error("cannot squeeze axis " + std::to_string(a) + " of " + shape_str(s));
    drop[axis] = true;
  }
  HostTensor y = *in[0];
  y.shape.clear();
  for (size_t d = 0; d < s.size(); ++d) {
    if (!drop[d]) y.shape.push_back(s[d]);
  }
  return done(out, folded, std::move(y));
}

Status fold_reshape(NodeView& node, const Inputs& in, Outputs* out, bool* folded) {
  Shape shape = in[1]->ints();
  POCK_ASSIGN_OR_RETURN(int64_t allowzero, node.attrs().get_int("allowzero", 0));
  int inferred = -1;
  int64_t known = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0 && !allowzero) {
      if (d >= in[0]->shape.size()) return node.error("shape copies a dim the input lacks");
      shape[d] = in[0]->shape[d];
    }
    if (shape[d] == -1) {
      if (inferred >= 0) return node.error("shape has more than one -1");
      inferred = static_cast<int>(d);
    } else if (shape[d] < 0) {
      return node.error("shape " + shape_str(shape) + " has a negative dim");
    } else if (__builtin_mul_overflow(known, shape[d], &known)) {
      return node.error("shape " + shape_str(shape) + " is out of range");
    }
  }
  if (inferred >= 0) shape[inferred] = known ? in[0]->size() / known : 0;
  if (numel(shape) != in[0]->size()) return node.error("cannot reshape " + shape_str(in[0]->shape) + " to " + shape_str(shape));
  HostTensor y = *in[0];
  y.shape = shape;
  return done(out, folded, std::move(y));
}

Status fold_flatten(NodeView& node, const Inputs& in, Outputs* out, bool* folded) {
  const Shape& s = in[0]->shape;
  POCK_ASSIGN_OR_RETURN(int64_t axis, node.attrs().get_int("axis", 1));
  if (axis < 0) axis += static_cast<int64_t>(s.size());
  if (axis < 0 || axis > static_cast<int64_t>(s.size())) return node.error("axis out of range");
  HostTensor y = *in[0];
  y.shape = {numel(Shape(s.begin(), s.begin() + axis)), numel(Shape(s.begin() + axis, s.end()))};
  return done(out, folded, std::move(y));
}

// ONNX Slice bounds for one axis -> the source indices it takes.
std::vector<int64_t> slice_indices(int64_t dim, int64_t start, int64_t end, int64_t step) {
  std::vector<int64_t> idx;
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    for (int64_t i = start; i < end; i += step) idx.push_back(i);
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    for (int64_t i = start; i > end; i += step) idx.push_back(i);
  }
  return idx;
}

Status fold_slice(NodeView& node, const Inputs& in, Outputs* out, bool* folded) {
  const HostTensor& x = *in[0];
  if (in.size() < 3) return node.error("needs starts and ends inputs (opset 10+)");
  const auto starts = in[1]->ints(), ends = in[2]->ints();
  std::vector<int64_t> axes(starts.size()), steps(starts.size(), 1);
  for (size_t k = 0; k < axes.size(); ++k) axes[k] = static_cast<int64_t>(k);
  if (in.size() > 3 && in[3]) axes = in[3]->ints();
  if (in.size() > 4 && in[4]) steps = in[4]->ints();
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    return node.error("starts, ends, axes and steps differ in length");
  }
  auto idx = all_indices(x.shape);
  const int64_t limit = int64_t{1} << 62;
  for (size_t k = 0; k < starts.size(); ++k) {
    POCK_ASSIGN_OR_RETURN(int axis, axis_of(node, axes[k], static_cast<int>(x.shape.size())));
    if (steps[k] == 0) return node.error("step is zero");
    idx[axis] = slice_indices(x.shape[axis], std::clamp(starts[k], -limit, limit), std::clamp(ends[k], -limit, limit),
                              std::clamp(steps[k], -limit, limit));
  }
  return done(out, folded, take(x, idx));
}

Status fold_concat(NodeView& node, const Inputs& in, Outputs* out, bool* folded) {
  POCK_ASSIGN_OR_RETURN(int64_t attr, node.attrs().get_int("axis", 0));
  const HostTensor& first = *in[0];
  POCK_ASSIGN_OR_RETURN(int axis, axis_of(node, attr, static_cast<int>(first.shape.size())));
  Shape shape = first.shape;
  shape[axis] = 0;
  for (const HostTensor* t : in) {
    if (t->shape.size() != first.shape.size() || t->is_float() != first.is_float()) {
      return node.error("inputs differ in rank or dtype");
    }
    for (size_t d = 0; d < shape.size(); ++d) {
      if (static_cast<int>(d) != axis && t->shape[d] != first.shape[d]) {
        return node.error("input " + shape_str(t->shape) + " does not match " + shape_str(first.shape));
      }
    }
    shape[axis] += t->shape[axis];
  }
  HostTensor y = HostTensor::zeros(first.dtype, shape);
  const int64_t outer = numel(Shape(shape.begin(), shape.begin() + axis));
  int64_t k = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (const HostTensor* t : in) {
      const int64_t block = numel(Shape(t->shape.begin() + axis, t->shape.end()));
      for (int64_t e = 0; e < block; ++e) copy_element(*t, o * block + e, y, k++);
    }
  }
  return done(out, folded, std::move(y));
}

Status fold_split(NodeView& node, const Inputs& in, Outputs* out, bool* folded) {
  const HostTensor& x = *in[0];
  POCK_ASSIGN_OR_RETURN(int64_t attr, node.attrs().get_int("axis", 0));
  POCK_ASSIGN_OR_RETURN(int axis, axis_of(node, attr, static_cast<int>(x.shape.size())));
  std::vector<int64_t> sizes;
  if (in.size() > 1 && in[1]) {
    sizes = in[1]->ints();
  } else {
    POCK_ASSIGN_OR_RETURN(sizes, node.attrs().get_ints("split", {}));
  }
  if (sizes.empty()) {
    const int64_t parts = node.num_outputs();
    const int64_t each = (x.shape[axis] + parts - 1) / parts;  // the last part may be smaller
    for (int64_t p = 0, left = x.shape[axis]; p < parts; ++p, left -= each) sizes.push_back(std::min(each, left));
  }
  int64_t begin = 0;
  for (int64_t s : sizes) {
    auto idx = all_indices(x.shape);
    idx[axis].clear();
    for (int64_t i = 0; i < s; ++i) idx[axis].push_back(begin + i);
    if (begin + s > x.shape[axis] || s < 0) return node.error("split sizes exceed the axis");
    out->push_back(take(x, idx));
    begin += s;
  }
  *folded = true;
  return Status::ok();
}

Status fold_transpose(NodeView& node, const Inputs& in, Outputs* out, bool* folded) {
  const HostTensor& x = *in[0];
  const size_t rank = x.shape.size();
  std::vector<int64_t> reversed(rank);
  for (size_t d = 0; d < rank; ++d) reversed[d] = static_cast<int64_t>(rank - 1 - d);
  POCK_ASSIGN_OR_RETURN(auto perm, node.attrs().get_ints("perm", reversed));
  if (perm.size() != rank) return node.error("perm does not match the rank");
  Shape shape(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (perm[d] < 0 || perm[d] >= static_cast<int64_t>(rank)) return node.error("perm is not a permutation");
    shape[d] = x.shape[perm[d]];
  }
  const auto in_strides = strides_of(x.shape);
  HostTensor y = HostTensor::zeros(x.dtype, shape);
  std::vector<int64_t> coord(rank, 0);
  for (int64_t k = 0; k < y.size(); ++k) {
    int64_t flat = 0;
    for (size_t d = 0; d < rank; ++d) flat += coord[d] * in_strides[perm[d]];
    copy_element(x, flat, y, k);
    for (size_t d = rank; d-- > 0;) {
      if (++coord[d] < shape[d]) break;
      coord[d] = 0;
    }
  }
  return done(out, folded, std::move(y));
}

Status fold_expand(NodeView& node, const Inputs& in, Outputs* out, bool* folded) {
  auto shape = broadcast_shapes(in[0]->shape, in[1]->ints());
  if (!shape.is_ok()) return node.error(shape.status().message());
  POCK_RETURN_IF_ERROR(check_folded_size(node, shape.value()));
  HostTensor y = HostTensor::zeros(in[0]->dtype, shape.value());
  const auto idx = broadcast_index(in[0]->shape, shape.value());
  for (int64_t k = 0; k < y.size(); ++k) copy_element(*in[0], idx[k], y, k);
  return done(out, folded, std::move(y));
}

Status fold_tile(NodeView& node, const Inputs& in, Outputs* out, bool* folded) {
  const HostTensor& x = *in[0];
  const auto repeats = in[1]->ints();
  if (repeats.size() != x.shape.size()) return node.error("repeats must have one entry per dim");
  Shape tiled = x.shape;
  for (size_t d = 0; d < x.shape.size(); ++d) {
    if (repeats[d] < 0 || repeats[d] > kMaxFoldedElements) return node.error("repeat count out of range");
    tiled[d] *= repeats[d];
  }
  POCK_RETURN_IF_ERROR(check_folded_size(node, tiled));
  std::vector<std::vector<int64_t>> idx(x.shape.size());
  for (size_t d = 0; d < x.shape.size(); ++d) {
    for (int64_t r = 0; r < repeats[d]; ++r) {
      for (int64_t i = 0; i < x.shape[d]; ++i) idx[d].push_back(i);
    }
  }
  return done(out, folded, take(x, idx));
}

// Keeps the upper (or lower) triangle of the last two dims, offset by k; zeroes the rest.
Status fold_trilu(NodeView& node, const Inputs& in, Outputs* out, bool* folded) {
  const HostTensor& x = *in[0];
  if (x.shape.size() < 2) return node.error("input must have rank >= 2");
  POCK_ASSIGN_OR_RETURN(int64_t upper, node.attrs().get_int("upper", 1));
  const int64_t k = in.size() > 1 && in[1] ? in[1]->as_int(0) : 0;
  const int64_t rows = x.shape[x.shape.size() - 2], cols = x.shape.back();
  HostTensor y = x;
  for (int64_t e = 0; e < y.size(); ++e) {
    const int64_t r = (e / cols) % rows, c = e % cols;
    const bool keep = upper ? c - r >= k : c - r <= k;
    if (keep) continue;
    if (y.is_float()) y.f[e] = 0;
    else y.i[e] = 0;
  }
  return done(out, folded, std::move(y));
}

}  // namespace

void register_layout_folders(std::unordered_map<std::string, Folder>& t) {
  t["Gather"] = fold_gather;
  t["Unsqueeze"] = fold_unsqueeze;
  t["Squeeze"] = fold_squeeze;
  t["Reshape"] = fold_reshape;
  t["Flatten"] = fold_flatten;
  t["Slice"] = fold_slice;
  t["Concat"] = fold_concat;
  t["Split"] = fold_split;
  t["Transpose"] = fold_transpose;
  t["Expand"] = fold_expand;
  t["Tile"] = fold_tile;
  t["Trilu"] = fold_trilu;
}

}  // namespace pock::onnx_import::fold
