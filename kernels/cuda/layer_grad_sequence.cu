// The CUDA sequence backward ops: GatherGrad (zeros, then each dy element added at its row with an
// atomic: the order of the additions to a row that several indices share is not fixed, so the
// last bits may differ from ref's sequential sum) and DropoutGrad (element-wise). Logic in
// sequence_logic.hpp, checked on the host by tests/cuda_logic/test_sequence_logic.cpp.
#include "kernels/cuda/cuda_families.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/launch_status.hpp"
#include "kernels/cuda/sequence_logic.hpp"
#include "kernels/params/sequence.hpp"

namespace pock::cuda {
namespace {

// dy element i goes to the data row its index names; an index out of range adds nothing (ref
// reports it; run() does not wait for device indices).
template <typename Index>
struct GatherGradElement {
  const float* dy;
  const Index* indices;
  float* dx;
  GatherLayout layout;
  __device__ void operator()(int64_t i) const {
    const int64_t to = gather_source(layout, indices, i);
    if (to >= 0) atomicAdd(dx + to, dy[i]);
  }
};

template <typename Index>
cudaError_t launch_gather_grad(const KernelCall& c, const GatherLayout& l) {
  const GatherGradElement<Index> element{c.in_data<float>(0), c.in_data<Index>(1), c.out_data<float>(0), l};
  return launch_map(l.outer * l.count * l.inner, current_stream(), element);
}

Status gather_grad(const KernelCall& c, const params::SequenceParams& p) {
  const pock_tensor_desc& dx = c.out(0);
  const GatherLayout l = gather_layout(dx.dims, dx.rank, p.axis, numel(c.in(1)));
  if (Status s = launched(c, cudaMemsetAsync(dx.data, 0, dx.nbytes, current_stream())); !s.is_ok()) return s;
  return launched(c, c.in(1).dtype == POCK_I32 ? launch_gather_grad<int32_t>(c, l) : launch_gather_grad<int64_t>(c, l));
}

Status dropout_grad(const KernelCall& c, const params::SequenceParams& p) {
  const DropoutGradElement element{c.in_data<float>(0), c.in_data<uint8_t>(1), c.out_data<float>(0),
                                   1.0 / (1.0 - p.ratio)};
  return launched(c, launch_map(numel(c.out(0)), current_stream(), element));
}

}  // namespace

void register_layer_grad_sequence(KernelTable& t) {
  t.add(typed_kernel<params::SequenceParams, gather_grad>("GatherGrad", DType::kF32));
  t.add(typed_kernel<params::SequenceParams, dropout_grad>("DropoutGrad", DType::kF32));
}

}  // namespace pock::cuda
