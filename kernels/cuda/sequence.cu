// The CUDA sequence family: Gather (any dtype, i32/i64 indices), Rope, CausalMask, Dropout and
// DropoutTrain (ref's counter-based mask, bit for bit), element-wise over sequence_logic.hpp,
// checked against ref on the host by tests/cuda_logic/test_sequence_logic.cpp.
#include <cmath>

#include "kernels/cuda/cuda_families.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/launch_status.hpp"
#include "kernels/cuda/sequence_logic.hpp"
#include "kernels/params/sequence.hpp"
#include "pock/types.hpp"

namespace pock::cuda {
namespace {

template <typename Word, typename Index>
cudaError_t launch_gather(const KernelCall& c, const GatherLayout& l) {
  const GatherElement<Word, Index> element{c.in_data<Word>(0), c.in_data<Index>(1), c.out_data<Word>(0), l};
  return launch_map(l.outer * l.count * l.inner, current_stream(), element);
}

template <typename Word>
cudaError_t launch_gather(const KernelCall& c, const GatherLayout& l) {
  return c.in(1).dtype == POCK_I32 ? launch_gather<Word, int32_t>(c, l) : launch_gather<Word, int64_t>(c, l);
}

Status gather(const KernelCall& c, const params::SequenceParams& p) {
  const GatherLayout l = gather_layout(c.in(0).dims, c.in(0).rank, p.axis, numel(c.in(1)));
  switch (dtype_size(static_cast<DType>(c.in(0).dtype))) {
    case 1: return launched(c, launch_gather<uint8_t>(c, l));
    case 2: return launched(c, launch_gather<uint16_t>(c, l));
    case 4: return launched(c, launch_gather<uint32_t>(c, l));
    case 8: return launched(c, launch_gather<uint64_t>(c, l));
    default: return c.error("no element size the kernel copies");
  }
}

Status rope(const KernelCall& c, const params::SequenceParams& p) {
  const pock_tensor_desc& x = c.in(0);
  const int64_t seq = x.dims[x.rank - 2], dim = x.dims[x.rank - 1];
  const RopePair pair{c.in_data<float>(0),
                      c.out_data<float>(0),
                      c.has_input(1) ? c.in_data<int64_t>(1) : nullptr,
                      seq,
                      dim,
                      std::log(p.theta),
                      p.interleaved,
                      p.inverse ? -1.0f : 1.0f};
  return launched(c, launch_map(numel(x) / 2, current_stream(), pair));
}

Status causal_mask(const KernelCall& c, const params::SequenceParams& p) {
  const pock_tensor_desc& x = c.in(0);
  const CausalMaskElement element{c.in_data<float>(0), c.out_data<float>(0), x.dims[x.rank - 2], x.dims[x.rank - 1],
                                  static_cast<float>(p.value)};
  return launched(c, launch_map(numel(x), current_stream(), element));
}

// Inference dropout is the identity.
Status dropout(const KernelCall& c) {
  if (c.out(0).data == c.in(0).data) return Status::ok();
  return launched(c, cudaMemcpyAsync(c.out(0).data, c.in(0).data, c.out(0).nbytes, cudaMemcpyDeviceToDevice,
                                     current_stream()));
}

Status dropout_train(const KernelCall& c, const params::SequenceParams& p) {
  const DropoutTrainElement element{c.in_data<float>(0),
                                    c.in_data<int64_t>(1),
                                    c.out_data<float>(0),
                                    c.out_data<uint8_t>(1),
                                    splitmix64_hd(p.seed),
                                    static_cast<uint64_t>(p.ratio * 16777216.0),
                                    1.0 / (1.0 - p.ratio)};
  return launched(c, launch_map(numel(c.in(0)), current_stream(), element));
}

}  // namespace

void register_sequence(KernelTable& t) {
  for (int i = 0; i < kNumDTypes; ++i) {
    t.add(typed_kernel<params::SequenceParams, gather>("Gather", static_cast<DType>(i)));
  }
  t.add(typed_kernel<params::SequenceParams, rope>("Rope", DType::kF32));
  t.add(typed_kernel<params::SequenceParams, causal_mask>("CausalMask", DType::kF32));
  t.add({"Dropout", DType::kF32, dropout});
  t.add(typed_kernel<params::SequenceParams, dropout_train>("DropoutTrain", DType::kF32));
}

}  // namespace pock::cuda
