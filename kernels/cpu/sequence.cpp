// cpu kernels of the sequence family: Rope (its gradient is Rope with inverse = 1).
// The angles are computed once per position window, in double as ref computes them, into a
// cos/sin table held by the op: a training step always starts at position 0, so its table is made
// at prepare; a decode step (position input) rebuilds it only when the position moved. The
// rotation itself is f32 over the pairs of each row, rows split over the thread pool.
#include <cmath>
#include <new>
#include <vector>

#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/simd.hpp"
#include "kernels/cpu/thread_pool.hpp"
#include "kernels/params/sequence.hpp"

namespace pock::cpu {
namespace {

struct RopePlan {
  params::SequenceParams p;
  int64_t seq = 0, dim = 0, rows = 0;
  int64_t first = -1;           // position the table was made for
  std::vector<float> cos, sin;  // [seq, dim / 2]; sin carries the direction
  pthreadpool_t pool = nullptr;

  void make_table(int64_t position) {
    const int64_t half = dim / 2;
    const double direction = p.inverse ? -1.0 : 1.0;
    for (int64_t s = 0; s < seq; ++s) {
      for (int64_t i = 0; i < half; ++i) {
        const double angle = static_cast<double>(position + s) * std::pow(p.theta, -2.0 * static_cast<double>(i) / dim);
        cos[static_cast<size_t>(s * half + i)] = static_cast<float>(std::cos(angle));
        sin[static_cast<size_t>(s * half + i)] = static_cast<float>(direction * std::sin(angle));
      }
    }
    first = position;
  }
};

bool rope_accepts(const pock_op_desc& op) {
  const pock_tensor_desc& x = op.inputs[0];
  return is_f32(x) && x.rank >= 2 && x.dims[x.rank - 1] % 2 == 0;
}

Status rope_prepare(const pock_op_desc& op, void** state) {
  auto* plan = new (std::nothrow) RopePlan;
  if (!plan) return Status(Code::kOutOfMemory, std::string("Rope '") + op.name + "' plan");
  if (Status s = params::parse(op, &plan->p); !s.is_ok()) {
    delete plan;
    return s;
  }
  const pock_tensor_desc& x = op.inputs[0];
  plan->seq = x.dims[x.rank - 2];
  plan->dim = x.dims[x.rank - 1];
  plan->rows = plan->seq * plan->dim > 0 ? dims_product(x, 0, x.rank) / (plan->seq * plan->dim) : 0;
  plan->pool = thread_pool_for(op.num_threads);
  try {
    plan->cos.resize(static_cast<size_t>(plan->seq * plan->dim / 2));
    plan->sin.resize(plan->cos.size());
  } catch (const std::bad_alloc&) {
    delete plan;
    return Status(Code::kOutOfMemory, std::string("Rope '") + op.name + "' angle table");
  }
  plan->make_table(0);
  *state = plan;
  return Status::ok();
}

void rope_release(void* state) { delete static_cast<RopePlan*>(state); }

// One row of `half` pairs: pair i is (a[i], b[i]) with a, b at stride `step` (1: rotate-half).
POCK_SIMD_CLONES void rotate_pairs(const float* xa, const float* xb, float* ya, float* yb, int64_t half, int64_t step,
                                   const float* c, const float* s) {
#pragma omp simd
  for (int64_t i = 0; i < half; ++i) {
    const float a = xa[i * step], b = xb[i * step];  // both read first: x and y may share a buffer
    ya[i * step] = a * c[i] - b * s[i];
    yb[i * step] = b * c[i] + a * s[i];
  }
}

Status rope(const KernelCall& call) {
  auto& plan = *static_cast<RopePlan*>(call.state);
  const int64_t position = call.has_input(1) ? *call.in_data<int64_t>(1) : 0;
  if (position != plan.first) plan.make_table(position);
  const int64_t half = plan.dim / 2, seq = plan.seq, dim = plan.dim;
  const bool interleaved = plan.p.interleaved;
  const float* x = call.in_data<float>(0);
  float* y = call.out_data<float>(0);
  const size_t rows = static_cast<size_t>(plan.rows * seq);
  parallel_for(plan.pool, rows, balanced_tile(plan.pool, rows, 16), [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r) {
      const int64_t s = static_cast<int64_t>(r) % seq;
      const float* xr = x + static_cast<int64_t>(r) * dim;
      float* yr = y + static_cast<int64_t>(r) * dim;
      const float* c = plan.cos.data() + s * half;
      const float* sn = plan.sin.data() + s * half;
      if (interleaved) {
        rotate_pairs(xr, xr + 1, yr, yr + 1, half, 2, c, sn);
      } else {
        rotate_pairs(xr, xr + half, yr, yr + half, half, 1, c, sn);
      }
    }
  });
  return Status::ok();
}

}  // namespace

void register_sequence(KernelTable& t) {
  KernelDef d{"Rope", DType::kF32, rope, kCpuScore, rope_prepare, rope_release};
  d.accepts = rope_accepts;
  t.add(d);
}

}  // namespace pock::cpu
