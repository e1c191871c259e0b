#include "kernels/neon/bf16_gemm.hpp"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#if defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP2_BF16
#define HWCAP2_BF16 (1UL << 14)  // Linux's arm64 hwcap bit; older libc headers lack the name
#endif
#endif

#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/thread_pool.hpp"
#include "kernels/neon/bf16_panel.hpp"
#include "kernels/neon/neon_util.hpp"
#include "kernels/params/gemm_shape.hpp"
#include "kernels/params/linalg.hpp"
#include "runtime/kernel_scope.hpp"

namespace pock::neon {
namespace {

bool cpu_reports_bf16() {
#if defined(__linux__)
  static const bool has = (getauxval(AT_HWCAP2) & HWCAP2_BF16) != 0;
  return has;
#else
  return false;  // not asked elsewhere: the ops go to another backend
#endif
}

bool is_operand(const pock_tensor_desc& t) { return t.dtype == POCK_F32 || t.dtype == POCK_BF16; }

using Panel = std::vector<uint16_t>;

struct Plan {
  params::GemmShape shape;
  Bf16Epilogue epilogue;  // its bias is bound at each run
  bool bias = false;
  bool a_bf16 = false, b_bf16 = false;
  KernelScope* scope = nullptr;
  pthreadpool_t pool = nullptr;
  size_t b_at = 0;                         // bytes into the scratch region: b's panel
  std::shared_ptr<const Panel> b_packed;  // a constant b's panel, packed at prepare
};

Bf16Source source(const void* data, bool bf16, bool depth_contiguous, int64_t ld, int64_t offset) {
  return {static_cast<const uint8_t*>(data) + offset * (bf16 ? 2 : 4), bf16, depth_contiguous, ld};
}

// a's rows (y's rows) run along the depth unless a is transposed; b's rows (y's columns) only
// when b is.
Bf16Source a_source(const Plan& p, const void* a, int64_t offset) {
  return source(a, p.a_bf16, !p.shape.transpose_a, p.shape.lda, offset);
}
Bf16Source b_source(const Plan& p, const void* b, int64_t offset) {
  return source(b, p.b_bf16, p.shape.transpose_b, p.shape.ldb, offset);
}

// A constant b that is one matrix for every product is packed once, by the first op over it: the
// train, eval and infer functions' ops over a frozen weight share the panel.
Status share_constant_b(const pock_op_desc& op, Plan& plan) {
  const params::GemmShape& s = plan.shape;
  const std::string key = "neon bf16 panel " + std::to_string(reinterpret_cast<uintptr_t>(op.inputs[1].data)) +
                          (plan.b_bf16 ? " bf16 " : " f32 ") + std::to_string(s.n) + "x" + std::to_string(s.k) +
                          (s.transpose_b ? " rows " : " columns ") + std::to_string(s.ldb) + " +" +
                          std::to_string(s.b_offsets[0]);
  plan.b_packed = std::static_pointer_cast<const Panel>(plan.scope->find_shared(key));
  if (plan.b_packed) return Status::ok();
  const size_t bytes = bf16_panel_bytes(s.n, s.k, kTileCols);
  std::shared_ptr<Panel> panel;
  try {
    panel = std::make_shared<Panel>(bytes / sizeof(uint16_t));
  } catch (const std::bad_alloc&) {
    return Status(Code::kOutOfMemory, std::string(op.op) + " '" + op.name + "': no memory for the bf16 weight panel");
  }
  pack_bf16_panel(b_source(plan, op.inputs[1].data, s.b_offsets[0]), s.n, s.k, kTileCols, panel->data(), plan.pool);
  if (!plan.scope->put_shared(key, panel, bytes)) {
    return Status(Code::kOutOfMemory, std::string(op.op) + " '" + op.name + "': no memory for the bf16 weight panel");
  }
  plan.b_packed = std::move(panel);
  return Status::ok();
}

Status prepare(const pock_op_desc& op, KernelScope& scope, void** state) {
  params::MatMulParams p;
  POCK_RETURN_IF_ERROR(params::parse(op, &p));
  std::unique_ptr<Plan> plan(new (std::nothrow) Plan);
  if (!plan) return Status(Code::kOutOfMemory, std::string(op.op) + " '" + op.name + "': plan");
  plan->shape = params::gemm_shape(op, p);
  plan->epilogue.activation = p.activation;
  plan->bias = std::string_view(op.op) == "Linear" && op.num_inputs > 2 && cpu::is_present(op.inputs[2]);
  plan->a_bf16 = op.inputs[0].dtype == POCK_BF16;
  plan->b_bf16 = op.inputs[1].dtype == POCK_BF16;
  plan->scope = &scope;
  plan->pool = cpu::thread_pool_for(op.num_threads);
  const params::GemmShape& s = plan->shape;
  const size_t a_bytes = (bf16_panel_bytes(s.m, s.k, kTileRows) + 63) / 64 * 64;
  size_t b_bytes = bf16_panel_bytes(s.n, s.k, kTileCols);
  const bool one_b = std::all_of(s.b_offsets.begin(), s.b_offsets.end(), [&](int64_t o) { return o == s.b_offsets[0]; });
  if (cpu::is_constant(op.inputs[1]) && op.inputs[1].data && one_b) {
    POCK_RETURN_IF_ERROR(share_constant_b(op, *plan));
    b_bytes = 0;
  }
  plan->b_at = a_bytes;
  POCK_RETURN_IF_ERROR(scope.reserve_scratch(a_bytes + b_bytes, "bf16 GEMM panels"));
  *state = plan.release();
  return Status::ok();
}

void release(void* state) { delete static_cast<Plan*>(state); }

// Each product packs what changed since the previous one: a batch over one matrix of b packs b once.
Status run(const KernelCall& c) {
  const Plan& plan = *static_cast<const Plan*>(c.state);
  const params::GemmShape& s = plan.shape;
  Bf16Epilogue epilogue = plan.epilogue;
  epilogue.bias = plan.bias ? c.in_data<float>(2) : nullptr;
  auto* a_panel = reinterpret_cast<uint16_t*>(plan.scope->scratch());
  auto* b_scratch = reinterpret_cast<uint16_t*>(plan.scope->scratch() + plan.b_at);
  const uint16_t* b_panel = plan.b_packed ? plan.b_packed->data() : b_scratch;
  float* y = c.out_data<float>(0);
  for (size_t i = 0; i < s.a_offsets.size(); ++i) {
    if (i == 0 || s.a_offsets[i] != s.a_offsets[i - 1]) {
      pack_bf16_panel(a_source(plan, c.in(0).data, s.a_offsets[i]), s.m, s.k, kTileRows, a_panel, plan.pool);
    }
    if (!plan.b_packed && (i == 0 || s.b_offsets[i] != s.b_offsets[i - 1])) {
      pack_bf16_panel(b_source(plan, c.in(1).data, s.b_offsets[i]), s.n, s.k, kTileCols, b_scratch, plan.pool);
    }
    multiply_bf16_panels(a_panel, b_panel, s.m, s.n, s.k, epilogue, y + static_cast<int64_t>(i) * s.m * s.n, plan.pool);
  }
  return Status::ok();
}

}  // namespace

bool bf16_gemm_available() {
  const char* forced = std::getenv("POCK_BF16_ISA");
  if (forced && std::string_view(forced) == "fp32") return false;
  return cpu_reports_bf16() && bf16_panels_compiled();
}

bool bf16_gemm_accepts(const pock_op_desc& op) {
  params::MatMulParams p;
  if (op.num_inputs < 2 || op.num_outputs != 1 || !params::parse(op, &p).is_ok() || !p.bf16) return false;
  if (!is_operand(op.inputs[0]) || !is_operand(op.inputs[1]) || op.outputs[0].dtype != POCK_F32) return false;
  for (int i = 2; i < op.num_inputs; ++i) {
    if (cpu::is_present(op.inputs[i]) && op.inputs[i].dtype != POCK_F32) return false;
  }
  return bf16_gemm_available();
}

KernelDef bf16_gemm_kernel(const char* op, DType first_operand) {
  KernelDef d{op, first_operand, run, kNeonScore, nullptr, release};
  d.accepts = bf16_gemm_accepts;
  d.prepare_scoped = prepare;
  return d;
}

}  // namespace pock::neon
