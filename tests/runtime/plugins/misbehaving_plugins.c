/* Plugins that break the loading contract, one per compile definition, for test_plugin_loader:
 *   PLUGIN_WRONG_ABI        fills the struct for backend ABI version 99
 *   PLUGIN_INIT_FAILS       returns POCK_ERR_INTERNAL from init
 *   PLUGIN_NO_SYMBOL        exports no pock_backend_init_v1
 *   PLUGIN_MISSING_MEMBERS  leaves execute_op NULL
 *   PLUGIN_PARTIAL_MEMORY   sets alloc without free and copy
 *   PLUGIN_NAMED_CPU        a good plugin that calls itself "cpu", like a built-in backend */
#include <string.h>

#include "pock/backend.h"

static int32_t claims_nothing(void* context, const pock_op_desc* op) {
  (void)context;
  (void)op;
  return 0;
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
  (void)op;
  return POCK_ERR_INTERNAL;
}
static const char* last_error(void* context) {
  (void)context;
  return "";
}
static void* alloc(void* context, size_t nbytes, size_t alignment) {
  (void)context;
  (void)nbytes;
  (void)alignment;
  return NULL;
}

#ifndef PLUGIN_NO_SYMBOL
__attribute__((visibility("default"))) pock_status pock_backend_init_v1(pock_backend_v1* out) {
#ifdef PLUGIN_INIT_FAILS
  (void)out;
  return POCK_ERR_INTERNAL;
#else
  memset(out, 0, sizeof *out);
  out->abi_version = POCK_BACKEND_ABI_VERSION;
  out->struct_size = sizeof *out;
  out->name = "misbehaving";
  out->supports_op = claims_nothing;
  out->prepare_op = prepare;
  out->execute_op = execute;
  out->last_error = last_error;
#ifdef PLUGIN_WRONG_ABI
  out->abi_version = 99;
#endif
#ifdef PLUGIN_MISSING_MEMBERS
  out->execute_op = NULL;
#endif
#ifdef PLUGIN_PARTIAL_MEMORY
  out->alloc = alloc;
#endif
#ifdef PLUGIN_NAMED_CPU
  out->name = "cpu";
#endif
  (void)alloc;
  return POCK_OK;
#endif
}
#endif
