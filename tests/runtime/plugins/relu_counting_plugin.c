/* A small working host-memory plugin for test_plugin_loader: Relu on f32, preferred over every
 * built-in backend, counting the ops it runs (pock_test_relu_executed, which the test finds with
 * dlsym in the library the engine loaded). */
#include <string.h>

#include "pock/backend.h"

static long g_executed;

__attribute__((visibility("default"))) long pock_test_relu_executed(void) { return g_executed; }

static int32_t supports(void* context, const pock_op_desc* op) {
  (void)context;
  if (strcmp(op->op, "Relu") != 0 || op->num_inputs != 1 || op->num_outputs != 1) return 0;
  if (op->inputs[0].dtype != POCK_F32 || op->inputs[0].memory_space != POCK_MEMORY_HOST) return 0;
  return 1000;
}
static pock_status prepare(void* context, const pock_op_desc* op, void** handle) {
  (void)context;
  (void)op;
  *handle = NULL;
  return POCK_OK;
}
static pock_status execute(void* context, void* handle, const pock_op_desc* op) {
  (void)context;
  (void)handle;
  const float* x = (const float*)op->inputs[0].data;
  float* y = (float*)op->outputs[0].data;
  const size_t n = op->outputs[0].nbytes / sizeof(float);
  for (size_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  ++g_executed;
  return POCK_OK;
}
static const char* last_error(void* context) {
  (void)context;
  return "";
}

__attribute__((visibility("default"))) pock_status pock_backend_init_v1(pock_backend_v1* out) {
  if (!out || out->abi_version < 1 || out->struct_size < sizeof(pock_backend_v1)) return POCK_ERR_INVALID_ARGUMENT;
  memset(out, 0, sizeof *out);
  out->abi_version = POCK_BACKEND_ABI_VERSION;
  out->struct_size = sizeof *out;
  out->name = "relu_counting";
  out->supports_op = supports;
  out->prepare_op = prepare;
  out->execute_op = execute;
  out->last_error = last_error;
  return POCK_OK;
}
