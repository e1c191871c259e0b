// Import-time evaluation of ops whose output shape depends on the input's values (NonZero). pock's
// shapes are fixed at compile time, so these run only when their input is known then; with a
// run-time input the importer refuses them (it names the input computed at run time).
#include "frontend/onnx/folding_util.hpp"

namespace pock::onnx_import::fold {
namespace {

using Inputs = std::vector<const HostTensor*>;
using Outputs = std::vector<HostTensor>;

// [rank, count] int64: the coordinates of the nonzero elements in row-major order.
Status fold_non_zero(NodeView& node, const Inputs& in, Outputs* out, bool* folded) {
  const HostTensor& x = *in[0];
  std::vector<int64_t> flat;
  for (int64_t k = 0; k < x.size(); ++k) {
    if (x.as_double(k) != 0.0) flat.push_back(k);
  }
  if (flat.empty()) return node.unsupported("NonZero of an input with no nonzero element (pock has no zero-size tensors)");
  const Shape shape{static_cast<int64_t>(x.shape.size()), static_cast<int64_t>(flat.size())};
  POCK_RETURN_IF_ERROR(check_folded_size(node, shape));
  HostTensor y = HostTensor::zeros(DType::kI64, shape);
  const std::vector<int64_t> strides = strides_of(x.shape);
  for (size_t j = 0; j < flat.size(); ++j) {
    for (size_t d = 0; d < x.shape.size(); ++d) y.i[d * flat.size() + j] = flat[j] / strides[d] % x.shape[d];
  }
  out->push_back(std::move(y));
  *folded = true;
  return Status::ok();
}

}  // namespace

void register_data_dependent_folders(std::unordered_map<std::string, Folder>& t) { t["NonZero"] = fold_non_zero; }

}  // namespace pock::onnx_import::fold
