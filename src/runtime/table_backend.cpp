#include "runtime/table_backend.hpp"

#include <cstring>
#include <new>
#include <string>

#include "runtime/kernel_scope.hpp"

namespace pock {
namespace {

struct TableContext {
  const KernelTable* table;
  std::string last_error;
  KernelScope scope;  // shared by the ops this instance (one per engine) prepares
};

struct BoundKernel {
  const KernelDef* def;
  void* state;
};

int32_t table_supports(void* context, const pock_op_desc* op) {
  auto* ctx = static_cast<TableContext*>(context);
  const KernelDef* def = ctx->table->find(op->op, kernel_key_dtype(*op));
  if (!def) return 0;
  if (def->accepts && !def->accepts(*op)) return 0;
  return def->score;
}

pock_status table_prepare(void* context, const pock_op_desc* op, void** handle) {
  auto* ctx = static_cast<TableContext*>(context);
  const KernelDef* def = ctx->table->find(op->op, kernel_key_dtype(*op));
  if (!def) {
    ctx->last_error = std::string("no kernel for ") + op->op;
    return POCK_ERR_MISSING_KERNEL;
  }
  void* state = nullptr;
  if (def->prepare_scoped || def->prepare) {
    Status s = def->prepare_scoped ? def->prepare_scoped(*op, ctx->scope, &state) : def->prepare(*op, &state);
    if (!s.is_ok()) {
      ctx->last_error = s.message();
      return static_cast<pock_status>(s.code());
    }
  }
  auto* bound = new (std::nothrow) BoundKernel{def, state};
  if (!bound) {
    if (def->release) def->release(state);
    return POCK_ERR_OUT_OF_MEMORY;
  }
  *handle = bound;
  return POCK_OK;
}

pock_status table_execute(void* context, void* handle, const pock_op_desc* op) {
  auto* bound = static_cast<BoundKernel*>(handle);
  KernelCall call{op, bound->state};
  Status s = bound->def->run(call);
  if (s.is_ok()) return POCK_OK;
  static_cast<TableContext*>(context)->last_error = s.message();
  return static_cast<pock_status>(s.code());
}

void table_release(void*, void* handle) {
  auto* bound = static_cast<BoundKernel*>(handle);
  if (bound->def->release) bound->def->release(bound->state);
  delete bound;
}

const char* table_last_error(void* context) { return static_cast<TableContext*>(context)->last_error.c_str(); }

void table_destroy(void* context) { delete static_cast<TableContext*>(context); }

// The scratch region and what the ops built and share (packed frozen weights, bf16 weight copies).
size_t table_workspace_bytes(void* context) {
  const KernelScope& scope = static_cast<TableContext*>(context)->scope;
  return scope.scratch_size() + scope.shared_bytes();
}

void* table_get_proc_address(void*, const char* name) {
  if (std::strcmp(name, POCK_EXT_WORKSPACE_BYTES) == 0) {
    return reinterpret_cast<void*>(static_cast<pock_workspace_bytes_fn>(table_workspace_bytes));
  }
  return nullptr;
}

}  // namespace

pock_status fill_table_backend(pock_backend_v1* out, const char* name, const KernelTable* table) {
  if (!out || out->abi_version < 1 || out->struct_size < sizeof(pock_backend_v1)) return POCK_ERR_INVALID_ARGUMENT;
  auto* context = new (std::nothrow) TableContext{table, {}, {}};
  if (!context) return POCK_ERR_OUT_OF_MEMORY;
  *out = pock_backend_v1{};
  out->abi_version = POCK_BACKEND_ABI_VERSION;
  out->struct_size = sizeof(pock_backend_v1);
  out->name = name;
  out->context = context;
  out->supports_op = table_supports;
  out->prepare_op = table_prepare;
  out->execute_op = table_execute;
  out->release_op = table_release;
  out->last_error = table_last_error;
  out->destroy = table_destroy;
  out->get_proc_address = table_get_proc_address;
  return POCK_OK;
}

}  // namespace pock
