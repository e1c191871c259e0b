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

size_t table_workspace_bytes(void* context) { return static_cast<TableContext*>(context)->scope.scratch_size(); }

void* table_get_proc_address(void*, const char* name) {
  if (std::strcmp(name, POCK_EXT_WORKSPACE_BYTES) == 0) {
    return reinterpret_cast<void*>(static_cast<pock_workspace_bytes_fn>(table_workspace_bytes));
  }
  return nullptr;
}

}  // namespace

std::unique_ptr<pock_backend_v1, void (*)(pock_backend_v1*)> make_table_backend(const char* name,
                                                                               const KernelTable* table) {
  auto* b = new pock_backend_v1{};
  b->abi_version = POCK_BACKEND_ABI_VERSION;
  b->struct_size = sizeof(pock_backend_v1);
  b->name = name;
  b->context = new TableContext{table, {}, {}};
  b->supports_op = table_supports;
  b->prepare_op = table_prepare;
  b->execute_op = table_execute;
  b->release_op = table_release;
  b->last_error = table_last_error;
  b->destroy = table_destroy;
  b->get_proc_address = table_get_proc_address;
  return {b, [](pock_backend_v1* p) {
            if (p->destroy) p->destroy(p->context);
            delete p;
          }};
}

}  // namespace pock
